import warnings

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from sklearn.gaussian_process.kernels import (
    RBF,
    ConstantKernel,
    DotProduct,
    ExpSineSquared,
    Matern,
    RationalQuadratic,
    WhiteKernel,
)

from spectral_leverage import SpectralLeverage, exact_leverage
from spectral_leverage.kernels import log_spectral_density, parse_kernel, spectral_density
from spectral_leverage.spectral.quadrature import sphere_area

KERNELS = [Matern(0.7, nu=0.5), Matern(0.7, nu=1.5), Matern(0.7, nu=2.5), Matern(0.7, nu=0.8), RBF(0.7)]


def test_matern_dispatched_before_rbf():
    # scikit-learn's Matern subclasses RBF: a Matérn kernel must not be read as Gaussian
    assert isinstance(Matern(1.0, nu=1.5), RBF)
    assert parse_kernel(Matern(1.0, nu=1.5)).family == "matern"
    assert parse_kernel(RBF(1.0)).family == "rbf"
    assert parse_kernel(Matern(1.0, nu=np.inf)).family == "rbf"


@pytest.mark.parametrize("kernel", [ConstantKernel(3.0) * Matern(0.5, nu=1.5),
                                    Matern(0.5, nu=1.5) * ConstantKernel(3.0),
                                    ConstantKernel(1.5) * (ConstantKernel(2.0) * Matern(0.5, nu=1.5))])
def test_amplitude_from_constant_kernel(kernel):
    spec = parse_kernel(kernel)
    assert spec.family == "matern" and spec.amplitude == pytest.approx(3.0)


@pytest.mark.parametrize("kernel", [RBF(1.0) + WhiteKernel(), Matern() * RBF(), DotProduct(),
                                    ExpSineSquared(), RationalQuadratic(), "rbf", None])
def test_unsupported_kernels_raise_typeerror(kernel):
    with pytest.raises(TypeError, match="Matern"):
        parse_kernel(kernel)


def test_bad_hyperparameters():
    with pytest.raises(ValueError, match="nu"):
        parse_kernel(Matern(1.0, nu=-1.0))
    with pytest.raises(ValueError, match="amplitude"):
        parse_kernel(ConstantKernel(0.0) * RBF())
    spec = parse_kernel(RBF([1.0, 2.0]))
    with pytest.raises(ValueError, match="length scale"):
        spec.check_n_features(3)


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
@pytest.mark.parametrize("x", [0.1, 0.5, 1.3])
def test_spectral_density_is_fourier_transform_1d(kernel, x):
    # k(x) = 2 ∫_0^∞ s(ξ) cos(2π ξ x) dξ
    val, _ = quad(lambda xi: 2 * spectral_density(kernel, xi, 1), 0, np.inf, weight="cos", wvar=2 * np.pi * x)
    expected = kernel(np.array([[0.0]]), np.array([[x]]))[0, 0]
    assert val == pytest.approx(expected, rel=1e-6, abs=1e-10)


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
@pytest.mark.parametrize("r", [0.2, 0.9])
def test_spectral_density_is_fourier_transform_3d(kernel, r):
    # radial inverse transform in R^3: k(r) = (2/r) ∫_0^∞ ρ s(ρ) sin(2π ρ r) dρ
    val, _ = quad(lambda rho: 2 / r * rho * spectral_density(kernel, rho, 3), 0, np.inf, weight="sin",
                  wvar=2 * np.pi * r)
    expected = kernel(np.zeros((1, 3)), np.array([[r, 0.0, 0.0]]))[0, 0]
    assert val == pytest.approx(expected, rel=1e-5, abs=1e-9)


@pytest.mark.parametrize("kernel", [ConstantKernel(2.5) * k for k in KERNELS], ids=repr)
@pytest.mark.parametrize("d", [1, 2, 3, 5])
def test_spectral_density_integrates_to_k0(kernel, d):
    total, _ = quad(lambda r: sphere_area(d) * r ** (d - 1) * spectral_density(kernel, r, d), 0, np.inf,
                    limit=200)
    assert total == pytest.approx(2.5, rel=1e-7)


@settings(max_examples=40, deadline=None)
@given(nu=st.floats(0.1, 20.0), ell=st.floats(0.05, 10.0), d=st.integers(1, 8))
def test_spectral_density_positive_and_decreasing(nu, ell, d):
    r = np.linspace(0, 5 / ell, 50)
    s = spectral_density(Matern(ell, nu=nu), r, d)
    assert s[0] > 0 and np.all(s >= 0)  # may underflow to 0 far out
    assert np.all(np.diff(s) <= 0)


def _matern_log_density(nu: float, ell: float, d: int, r: float) -> float:
    """log s(r) of the Matérn kernel in d dimensions, in 50-digit arithmetic (no overflow)."""
    with mpmath.workdps(50):
        nu, ell, r = mpmath.mpf(nu), mpmath.mpf(ell), mpmath.mpf(r)
        alpha = nu + mpmath.mpf(d) / 2
        return float(d * mpmath.log(2) + d / 2 * mpmath.log(mpmath.pi) + mpmath.loggamma(alpha)
                     + nu * mpmath.log(2 * nu) - mpmath.loggamma(nu) - 2 * nu * mpmath.log(ell)
                     - alpha * mpmath.log(2 * nu / ell**2 + 4 * mpmath.pi**2 * r**2))


@pytest.mark.parametrize("nu, ell, d", [(0.05, 1.0, 1), (0.05, 1.98e4, 1), (3.0, 1e-12, 2), (1.5, 0.7, 3)])
@pytest.mark.parametrize("r", [0.0, 2.0, 1e160, 1e250, 1e300])
def test_log_spectral_density_is_exact_where_r_squared_overflows(nu, ell, d, r):
    """Nightly fuzz finding (issue 24): log s(r) formed 2ν/ℓ² + 4π²r², whose r² overflows beyond
    r ≈ 1e154 (an overflow warning, and log s = -inf instead of a finite value); the quadrature of a
    small-ν Matérn on dense data reaches such r. Now to float64 precision up to r = 1e300."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = log_spectral_density(parse_kernel(Matern(ell, nu=nu)), r, d)
    assert value == pytest.approx(_matern_log_density(nu, ell, d, r), rel=1e-14)


def test_gaussian_log_spectral_density_rounds_to_minus_infinity_without_warning():
    spec = parse_kernel(RBF(2.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        far = log_spectral_density(spec, np.array([1e160, 1e300]), 1)
        near = log_spectral_density(spec, 0.3, 1)
    assert np.all(far == -np.inf)
    assert near == pytest.approx(0.5 * np.log(2 * np.pi * 4.0) - 2 * np.pi**2 * 4.0 * 0.09, rel=1e-14)


def test_nightly_finding_small_nu_on_tiny_data_gives_the_exact_scores_without_overflow():
    """The nightly profile's case (issue 24): 397 points of magnitude 1e-148 in 1-D, Matérn ν = 0.05,
    ℓ = 1.98e4, λ = 1: an overflow in log_spectral_density (r² at r > 1e154) inside the default
    SpectralLeverage. The kernel sees one point (k = 1 to 15 digits), so K = 11ᵀ and n·l_i = 1/(1 + λ)."""
    rng = np.random.default_rng(1497)  # the failing design, drawn as tests/test_properties.py drew it
    X = rng.standard_normal((397, 1)) * 10.0**-149.99999999999997
    X *= 10.0 ** rng.uniform(-3, 3, size=1)  # a scale of 288.7: X in -7.9e-148..1.0e-147
    kernel, reg = Matern(length_scale=1.98e4, nu=0.05), 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)  # d_eff = 0.5: says the scores say little
        scores = SpectralLeverage(kernel, reg, random_state=0).fit(X).scores_
    np.testing.assert_allclose(397 * exact_leverage(X, kernel, reg), 0.5, rtol=1e-9)
    np.testing.assert_allclose(scores, 0.5, rtol=0.01)

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

from spectral_leverage.kernels import parse_kernel, spectral_density
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

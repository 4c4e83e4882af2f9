import itertools
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern

from spectral_leverage.kernels import log_spectral_density, parse_kernel
from spectral_leverage.spectral.quadrature import sa_integral, sa_scores, score_function, sphere_area

P = np.logspace(-4, 5, 10)
REG = 1e-3


def reference(p, kernel, reg, d):
    """Polar integral by scipy.integrate.quad, one density at a time, piecewise over [0, ∞)."""
    edges = [0.0, 1.0, 10.0, 100.0, 1000.0, np.inf]

    def one(pi):
        f = lambda r: r ** (d - 1) / (pi + reg * np.exp(-log_spectral_density(kernel, r, d)))  # noqa: E731
        parts = [quad(f, a, b, epsrel=1e-13, epsabs=0, limit=500)[0] for a, b in itertools.pairwise(edges)]
        return sphere_area(d) * sum(parts)
    return np.array([one(pi) for pi in p])


@pytest.mark.parametrize("nu,d", [(0.5, 1), (1.5, 1), (2.5, 3), (0.5, 2), (1.5, 8), (0.3, 3), (7.0, 2)])
def test_matern_quadrature_matches_scipy_quad(nu, d):
    kernel = parse_kernel(ConstantKernel(1.7) * Matern(0.5, nu=nu))
    np.testing.assert_allclose(sa_integral(P, kernel, REG, d), reference(P, kernel, REG, d), rtol=1e-9)


def test_matern_half_closed_form_1d():
    # ν = 1/2, d = 1: λ/s(ξ) = λ(1 + 4π²ℓ²ξ²)/(2ℓ), so h = π / sqrt((p + λ/(2ℓ)) · 2π²λℓ)
    ell = 0.7
    kernel = parse_kernel(Matern(ell, nu=0.5))
    expected = np.pi / np.sqrt((P + REG / (2 * ell)) * 2 * np.pi**2 * REG * ell)
    np.testing.assert_allclose(sa_integral(P, kernel, REG, 1), expected, rtol=1e-12)


@pytest.mark.parametrize("d", [1, 2, 3, 5])
@pytest.mark.parametrize("amplitude", [1.0, 4.0])
def test_gaussian_quadrature_matches_mpmath_polylog(d, amplitude):
    kernel = parse_kernel(ConstantKernel(amplitude) * RBF(0.3))
    p = np.logspace(-4, 7, 12)
    np.testing.assert_allclose(sa_integral(p, kernel, REG, d),
                               sa_integral(p, kernel, REG, d, "polylog"), rtol=1e-8)


@pytest.mark.parametrize("nu,d", [(0.5, 1), (1.5, 1), (1.5, 3), (2.5, 2)])
def test_asymptotic_form_is_large_p_limit(nu, d):
    kernel = parse_kernel(Matern(0.5, nu=nu))
    p = np.logspace(0, 12, 13)
    ratio = sa_integral(p, kernel, REG, d, "asymptotic") / sa_integral(p, kernel, REG, d)
    assert np.all(ratio > 1 - 1e-12)  # dropping 2ν/ℓ² overstates s, hence h
    assert ratio[0] > 1 + 1e-4
    assert np.all(np.diff(ratio) < 1e-12)
    assert ratio[-1] == pytest.approx(1.0, abs=1e-3)


@pytest.mark.parametrize("kernel", [ConstantKernel(2.0) * Matern(0.5, nu=1.5),
                                    ConstantKernel(2.0) * RBF(0.5)], ids=repr)
@pytest.mark.parametrize("d", [1, 3])
def test_small_density_limit_is_k0_over_reg(kernel, d):
    # h(p) → ∫ s / λ = k(0)/λ as p → 0
    h = sa_integral(np.array([1e-12]), parse_kernel(kernel), REG, d)
    assert h[0] == pytest.approx(2.0 / REG, rel=1e-6)


@pytest.mark.parametrize("nu,d", [(1.5, 1), (0.5, 3)])
def test_small_reg_scaling(nu, d):
    # h ∝ λ^{-d/(2α)} as λ → 0 (the knee moves to high frequency)
    kernel = parse_kernel(Matern(0.5, nu=nu))
    alpha = nu + d / 2
    lam = np.array([1e-10, 1e-11])
    h = np.array([sa_integral(np.array([1.0]), kernel, lam_i, d)[0] for lam_i in lam])
    assert h[1] / h[0] == pytest.approx(10 ** (d / (2 * alpha)), rel=1e-3)


@settings(max_examples=25, deadline=None)
@given(nu=st.sampled_from([0.5, 1.5, 2.5, np.inf]), d=st.integers(1, 5),
       log_lo=st.floats(-6, 2), span=st.floats(0.5, 8), log_reg=st.floats(-8, -1),
       seed=st.integers(0, 2**31))
def test_grid_interpolation_error_below_1e6(nu, d, log_lo, span, log_reg, seed):
    # the refined grid (rtol 1e-6 at the midpoints it checks, then merged) and its lookup table
    # (rtol/10): within rtol everywhere, ends of the range included (worst seen 0.12·rtol)
    kernel, reg = parse_kernel(Matern(0.4, nu=nu)), 10.0**log_reg
    rng = np.random.default_rng(seed)
    p = 10 ** rng.uniform(log_lo, log_lo + span, 2000)
    check = np.r_[rng.choice(p.size, 40, replace=False), p.argmin(), p.argmax()]
    h = sa_scores(p, kernel, reg, d)
    np.testing.assert_allclose(h[check], sa_integral(p[check], kernel, reg, d), rtol=1e-6)


@pytest.mark.parametrize("decades", [3, 40])
def test_tight_rtol_is_honoured_over_wide_ranges(decades):
    # the lookup table's step follows rtol and the range: a fixed table would floor the error
    kernel = parse_kernel(Matern(0.4, nu=1.5))
    rng = np.random.default_rng(decades)
    p = 10 ** rng.uniform(-decades / 2, decades / 2, 3000)
    check = np.r_[rng.choice(p.size, 40, replace=False), p.argmin(), p.argmax()]
    h = sa_scores(p, kernel, 1e-4, 3, rtol=1e-9)
    np.testing.assert_allclose(h[check], sa_integral(p[check], kernel, 1e-4, 3), rtol=1e-9)


@pytest.mark.parametrize("p", [[1.0, -1.0], [1.0, np.nan], [0.0, 2.0], [np.inf, 1.0]])
def test_density_values_checked(p):
    kernel = parse_kernel(Matern(0.4, nu=1.5))
    with pytest.raises(ValueError, match="finite and > 0"):
        sa_scores(np.repeat(p, 50), kernel, 1e-3, 2)
    with pytest.raises(ValueError, match="finite and > 0"):
        sa_integral(p, kernel, 1e-3, 2)


def test_rtol_checked():
    with pytest.raises(ValueError, match="rtol"):
        sa_scores(np.linspace(1, 2, 100), parse_kernel(Matern(0.4, nu=1.5)), 1e-3, 2, rtol=0.0)


@pytest.mark.parametrize("kernel", [Matern(0.5, nu=1.5), RBF(0.5)], ids=repr)
def test_h_decreasing_in_density(kernel):
    h = sa_scores(np.logspace(-5, 6, 500), parse_kernel(kernel), REG, 2)
    assert np.all(np.diff(h) < 0)


def test_integral_names_checked():
    with pytest.raises(ValueError, match="integral"):
        sa_integral(P, parse_kernel(RBF()), REG, 1, "simpson")
    with pytest.raises(ValueError, match="asymptotic"):
        sa_integral(P, parse_kernel(RBF()), REG, 1, "asymptotic")
    with pytest.raises(ValueError, match="polylog"):
        sa_integral(P, parse_kernel(Matern()), REG, 1, "polylog")


@pytest.mark.parametrize("p", [np.geomspace(0.01, 100.0, 40), np.geomspace(0.01, 100.0, 5000),
                               np.full(500, 3.0)], ids=["few", "grid", "constant"])
def test_score_function_is_what_sa_scores_evaluates(p):
    unit = parse_kernel(Matern(1.0, nu=1.5)).unit
    h = score_function(p.min(), p.max(), p.size, unit, 1e-4, 3)
    h = pickle.loads(pickle.dumps(h))  # shipped to Dask workers
    np.testing.assert_array_equal(h(p), sa_scores(p, unit, 1e-4, 3))

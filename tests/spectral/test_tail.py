"""The SA integral above a cut-off frequency (spectral_leverage.spectral.tail) against direct
quadrature of both truncated integrals, its limits and its monotonicity."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad
from sklearn.gaussian_process.kernels import RBF, Matern

from spectral_leverage.kernels import parse_kernel, spectral_density
from spectral_leverage.spectral.quadrature import sa_integral, sphere_area
from spectral_leverage.spectral.tail import TailVariance

KERNELS = [(Matern(1.0, nu=0.5), 1), (Matern(1.0, nu=1.5), 3), (Matern(1.0, nu=2.5), 2), (RBF(1.0), 2),
           (RBF(1.0), 5)]


def truncated(unit, reg, d, p, cutoff):
    """(r, tau) above ``cutoff`` by adaptive quadrature: the tail's prior and posterior variance."""
    def s(rho):
        return spectral_density(unit, rho, d)

    area = sphere_area(d)
    prior = area * quad(lambda rho: rho ** (d - 1) * s(rho), cutoff, np.inf, limit=500)[0]
    posterior = area * reg * quad(lambda rho: rho ** (d - 1) * s(rho) / (reg + p * s(rho)), cutoff, np.inf,
                                  limit=500)[0]
    return prior, posterior


@pytest.mark.parametrize(("kernel", "d"), KERNELS, ids=lambda v: repr(v))
@pytest.mark.parametrize("cutoff", [0.05, 0.3, 1.0])
def test_matches_quadrature_of_the_truncated_integrals(kernel, d, cutoff):
    unit, reg = parse_kernel(kernel).unit, 1e-4
    tail = TailVariance(unit, reg, d, (0.01, 100.0))
    for p in (0.01, 1.0, 100.0):
        r, tau = truncated(unit, reg, d, p, cutoff)
        if r < 1e-12:
            continue  # the Gaussian's tail above 1 cycle per length scale underflows
        assert tail(np.array([p]), np.array([r]))[0] == pytest.approx(tau, rel=3e-3)


@pytest.mark.parametrize(("kernel", "d"), KERNELS, ids=lambda v: repr(v))
def test_between_the_grid_nodes(kernel, d):
    """Densities off the table's nodes: the whole spectrum against the SA integral within 0.1 %
    (interpolating tau / r rather than its log overshoots by up to 0.9 % there)."""
    unit, reg = parse_kernel(kernel).unit, 1e-6
    tail = TailVariance(unit, reg, d, (1e-3, 1e3))
    p = np.geomspace(1e-3, 1e3, 101)[1:-1] * 1.0123  # never on a node
    np.testing.assert_allclose(tail(p, np.ones(p.size)), reg * sa_integral(p, unit, reg, d), rtol=1e-3)


def test_one_density():
    """A constant density (a known one, say) still makes a table."""
    unit, reg = parse_kernel(Matern(1.0, nu=1.5)).unit, 1e-4
    tau = TailVariance(unit, reg, 2, (0.5, 0.5))(np.full(3, 0.5), np.ones(3))
    np.testing.assert_allclose(tau, reg * sa_integral([0.5], unit, reg, 2)[0], rtol=3e-3)


@pytest.mark.parametrize(("kernel", "d"), KERNELS, ids=lambda v: repr(v))
def test_limits(kernel, d):
    unit, reg = parse_kernel(kernel).unit, 1e-5
    tail = TailVariance(unit, reg, d, (1e-3, 1e3))
    p = np.geomspace(1e-3, 1e3, 7)
    # the whole spectrum (no factor): the density formula's posterior variance lambda h(p)
    np.testing.assert_allclose(tail(p, np.ones(7)), reg * sa_integral(p, unit, reg, d), rtol=3e-3)
    # a tail far above every knee is not learned
    np.testing.assert_allclose(tail(p, np.full(7, 1e-14)), 1e-14, rtol=1e-3)
    assert np.all(tail(p, np.zeros(7)) == 0)


def test_monotone_and_bounded():
    unit, reg = parse_kernel(Matern(1.0, nu=1.5)).unit, 1e-4
    tail = TailVariance(unit, reg, 3, (1e-2, 1e2))
    p = np.geomspace(1e-2, 1e2, 50)
    for r in (1.0, 0.3, 0.01):
        tau = tail(p, np.full(50, r))
        assert np.all(np.diff(tau) <= 0) and np.all((tau > 0) & (tau <= r))  # more data learn more
    r = np.geomspace(1e-6, 1.0, 50)
    assert np.all(np.diff(tail(np.full(50, 1.0), r)) >= 0)  # a larger tail keeps more
    # densities outside the range are clipped to it
    assert tail(np.array([1e-9]), np.array([0.5]))[0] == tail(np.array([1e-2]), np.array([0.5]))[0]


def test_input_checks():
    unit = parse_kernel(Matern(1.0, nu=1.5)).unit
    with pytest.raises(ValueError, match="p_range"):
        TailVariance(unit, 1e-3, 2, (1.0, 0.5))
    with pytest.raises(ValueError, match="p_range"):
        TailVariance(unit, 1e-3, 2, (0.0, 1.0))
    with pytest.raises(ValueError, match="unit length scale"):
        TailVariance(parse_kernel(Matern(2.0, nu=1.5)), 1e-3, 2, (0.1, 1.0))


@pytest.mark.parametrize("kernel", [Matern(1.0, nu=0.5), RBF(1.0)])
def test_a_density_underflowing_far_from_the_data_is_not_learned_and_leaves_the_table(kernel):
    """A far row's tree-KDE density underflows to 2e-308 (10⁴ length scales from 10⁵ rows): the
    table's density range held 300 decades past float range (OverflowError), and would have thinned
    its grid for every row. Below the density at which no frequency is learned beyond a millionth,
    the tail is unlearned (tau = r) and the rest of the table is that of the data's own range."""
    unit, reg, d = parse_kernel(kernel).unit, 1e5**-0.5, 8
    wide = TailVariance(unit, reg, d, (np.finfo(float).tiny, 17.3))
    data = TailVariance(unit, reg, d, (1e-2, 17.3))
    r = np.full(4, 0.5)
    np.testing.assert_allclose(wide(np.array([np.finfo(float).tiny, 1e-200, 1e-40, 1e-30]), r), r, rtol=1e-5)
    p = np.array([1e-2, 0.1, 1.0, 10.0])
    np.testing.assert_allclose(wide(p, r), data(p, r), rtol=1e-3)

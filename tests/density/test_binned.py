"""BinnedDensity: the Gaussian KDE binned on a grid, its read-back and its slope grids."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.ndimage import map_coordinates
from sklearn.exceptions import NotFittedError
from sklearn.neighbors import KernelDensity

from spectral_leverage.density import BinnedDensity, feature_bandwidths, robust_scale


@pytest.mark.parametrize("d", [1, 2, 3])
def test_binned_kde_matches_exact_kde_of_all_points(d):
    rng = np.random.default_rng(d)
    X = np.vstack([rng.uniform(size=(3000, d)), rng.normal(1.5, 0.05, size=(300, d))])
    Q = np.vstack([X[:500], rng.uniform(-0.3, 1.8, size=(500, d))])
    binned = BinnedDensity().fit(X)
    bandwidth = feature_bandwidths(X, "scott")
    np.testing.assert_allclose(binned.bandwidth_, bandwidth)
    exact = np.exp(KernelDensity(bandwidth=1.0).fit(X / bandwidth).score_samples(Q / bandwidth)) \
        / np.prod(bandwidth)
    signed = binned.density(Q) / exact - 1
    err = np.abs(signed)
    assert err[:500].max() < 0.01  # at the data points (what the scores use)
    # unbiased there: the smoothing's variance makes up for binning's and read-back's (uncorrected,
    # the data points' peaks are flattened and the mean error is about minus the mean |error|)
    assert abs(signed[:500].mean()) < 0.2 * err[:500].mean()
    # the relative error grows in the tails (log-density curvature): bounded down to 1 % of the peak
    inside = exact > 1e-2 * exact.max()
    assert np.median(err[inside]) < 0.002 and err[inside].max() < 0.06
    # four cells per bandwidth against two: the error is second order in the cell size
    fine, coarse = (np.abs(BinnedDensity(cells_per_bandwidth=c).fit(X).density(Q[inside]) / exact[inside] - 1)
                    for c in (4, 2))
    assert np.median(coarse) > 2.5 * np.median(fine)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_binned_read_back_is_multilinear_interpolation(d):
    rng = np.random.default_rng(d)
    kde = BinnedDensity().fit(rng.uniform(size=(500, d)))
    grids = (rng.uniform(size=kde.grid_shape_), rng.normal(size=kde.grid_shape_))  # any grid values
    top = np.array(kde.grid_shape_) - 1.0
    cells = np.vstack([
        rng.uniform(-3, top + 3, size=(2000, d)),  # on and off the grid
        np.zeros((1, d)), top[None, :],  # the grid's first and last corners
        np.full((1, d), -1e-12), top[None, :] + 1e-12,  # just outside them
        np.column_stack([np.full(50, top[0]), rng.uniform(0, top[1:], size=(50, d - 1))]),  # last face
    ])
    X = (cells / kde.cells_per_bandwidth + kde._origin) * kde.bandwidth_
    ours = kde._read_back(grids, X, "test")
    # scipy's multilinear interpolation, 0 off the grid, at the same coordinates
    coords = kde._cells(X).T
    expected = [map_coordinates(g, coords, order=1, mode="constant", cval=0.0) for g in grids]
    off = np.any((coords < 0) | (coords > top[:, None]), axis=0)
    assert off.sum() > 100 and (~off).sum() > 100
    np.testing.assert_allclose(ours[:, ~off], np.array(expected)[:, ~off], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ours[:, off], 0.0)


def test_binned_kde_integrates_to_one():
    X = np.random.default_rng(0).normal(size=(5000, 2))
    binned = BinnedDensity().fit(X)
    cell = np.prod(binned.bandwidth_) / binned.cells_per_bandwidth**2
    assert binned._grid.sum() * cell == pytest.approx(1.0, rel=1e-3)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 1000), shift=st.floats(-1e3, 1e3), log_scale=st.floats(-3, 3))
def test_binned_kde_is_translation_and_scale_equivariant(seed, shift, log_scale):
    X = np.random.default_rng(seed).normal(size=(200, 2))
    scale = np.array([np.exp(log_scale), 1.0])
    p = BinnedDensity().fit(X).density(X)
    moved = X * scale + shift
    np.testing.assert_allclose(BinnedDensity().fit(moved).density(moved), p / scale[0], rtol=1e-6)


def test_binned_kde_far_query_gets_the_floor():
    X = np.random.default_rng(0).normal(size=(1000, 2))
    binned = BinnedDensity().fit(X)
    far = binned.density(np.array([[50.0, 50.0], [0.0, 0.0]]))
    assert 0 < far[0] < 1e-3 * far[1] and far[0] == binned._floor


def test_binned_kde_refuses_a_grid_beyond_the_budget():
    X = np.random.default_rng(0).normal(size=(2000, 5))
    small = BinnedDensity(memory_budget=2**20)
    assert small.grid_cells(X) > small.max_cells()
    with pytest.raises(ValueError, match="memory_budget"):
        small.fit(X)


@pytest.mark.parametrize("kwargs,match", [({"bandwidth": "wide"}, "bandwidth"),
                                          ({"cells_per_bandwidth": 0}, "cells_per_bandwidth"),
                                          ({"truncate": -1.0}, "truncate")])
def test_binned_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BinnedDensity(**kwargs).fit(np.random.default_rng(0).normal(size=(50, 2)))


def test_binned_bad_queries():
    binned = BinnedDensity().fit(np.random.default_rng(0).normal(size=(50, 2)))
    with pytest.raises(ValueError, match="features"):
        binned.density(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="NaN"):
        binned.density(np.array([[np.nan, 0.0]]))


def test_binned_counts_of_row_blocks_add_up_to_the_fit():
    # what a distributed fit relies on: layout from summary statistics, counts summed over blocks
    X = np.random.default_rng(5).normal(size=(3000, 3))
    whole = BinnedDensity().fit(X)
    parts = BinnedDensity().set_layout(3000, robust_scale(X.std(axis=0), X), X.min(axis=0), X.max(axis=0))
    counts = sum(parts.bin_counts(block) for block in np.array_split(X, 7))
    parts.smooth(counts, 3000)
    assert parts.grid_shape_ == whole.grid_shape_
    np.testing.assert_allclose(parts.density(X), whole.density(X), rtol=1e-12)
    assert BinnedDensity().grid_cells(X) == np.prod(whole.grid_shape_)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_binned_slope_grids_in_slabs_equal_the_whole_grid_gradient(d):
    X = np.random.default_rng(d).normal(size=(5000, d)) * np.arange(1, d + 1)
    kde = BinnedDensity().fit(X)
    log_grid = np.log(np.maximum(kde._grid, kde._floor))
    gradients = np.gradient(log_grid, 1 / kde.cells_per_bandwidth) if d > 1 else [
        np.gradient(log_grid, 1 / kde.cells_per_bandwidth)]
    scale = np.linspace(0.5, 2.0, d)
    factors = scale / kde.bandwidth_  # chain rule from w = x / h to y = x / scale
    expected = [np.sqrt(sum(g**2 for g in gradients)),
                np.sqrt(sum((g * f) ** 2 for g, f in zip(gradients, factors, strict=True)))]
    box, outside = kde._data_box, np.ones(kde.grid_shape_, dtype=bool)
    outside[box] = False
    pad = (kde.truncate + 1) * kde.cells_per_bandwidth  # cells of padding each side, skipped
    for b, size in zip(box, kde.grid_shape_, strict=True):
        assert b.start == pad - 1 and size - pad - 2 <= b.stop <= size - pad + 3
    for budget in (kde.memory_budget, 8 * 12 * kde._grid[0].size):  # one slab; one row per slab
        kde.memory_budget, kde._slope_grids = budget, {}
        whitened, scaled, curvature = kde.slope_grids((None, scale), curvature=True)
        if budget == kde.memory_budget:
            one_slab = curvature.copy()
        else:
            np.testing.assert_array_equal(curvature, one_slab)
        np.testing.assert_array_equal(curvature[outside], -2 / np.pi)
        np.testing.assert_array_equal(whitened[box], expected[0][box])
        np.testing.assert_allclose(scaled[box], expected[1][box], rtol=1e-12)
        # beyond the data's box: the face's slope (the KDE falls at least that steeply there)
        np.testing.assert_array_equal(whitened[outside], np.sqrt(2 / np.pi))
        np.testing.assert_allclose(scaled[outside], np.sqrt(2 / np.pi) * np.exp(np.mean(np.log(factors))))
    # at the data the read-back only touches the box: the same as reading the whole-grid gradient
    np.testing.assert_array_equal(kde.log_density_slope(X), kde._read_back((expected[0],), X, "")[0])
    p, (slope,) = kde.density_and_slopes(X[:50])
    np.testing.assert_array_equal(p, kde.density(X[:50]))
    np.testing.assert_array_equal(slope, kde.log_density_slope(X[:50]))


def test_binned_slope_needs_a_fit_and_a_positive_scale():
    kde = BinnedDensity()
    with pytest.raises(NotFittedError):
        kde.slope_grids()
    kde.fit(np.random.default_rng(0).uniform(size=(100, 2)))
    for scale in (0.0, [1.0, -1.0], np.nan, [1.0, 2.0, 3.0], [[1.0, 2.0]]):
        with pytest.raises(ValueError, match="scale"):
            kde.log_density_slope(np.zeros((1, 2)), scale)


def test_a_far_row_neither_stretches_the_grid_nor_moves_the_other_densities():
    # issue 34 (acceptance 4): a row at 1e6 stretched the grid to millions of cells per axis,
    # past any budget (SpectralLeverage then switched to the tree KDE); it is now a far row
    rng = np.random.default_rng(5)
    X = rng.normal(size=(5000, 2))
    far = np.vstack([X, [[1e6, 0.0]]])
    alone, beside = BinnedDensity().fit(X), BinnedDensity().fit(far)
    assert not alone.has_far_rows_ and beside.has_far_rows_
    # the grid reaches BOX_MARGIN bandwidths past the bulk's range towards the far row
    assert beside.grid_cells_ < 1.5 * alone.grid_cells_
    # the bandwidths see n + 1 rows and shift the cells: within the binning's own error (1 %)
    np.testing.assert_allclose(beside.density(X), alone.density(X), rtol=0.01)
    own = (2 * np.pi) ** -1.0 / (5001 * np.prod(beside.bandwidth_))
    assert beside.density(far[-1:])[0] == pytest.approx(own, rel=1e-12)
    assert beside.density(far[-1:], training=True)[0] == beside._floor  # isolated: its own term only


def test_far_rows_match_the_exact_kde():
    # three rows 60 standard deviations away, a bandwidth apart (under the 0.1 % the bulk's range
    # leaves out, and beyond it by more than the margin: far rows): the exact Gaussian KDE
    rng = np.random.default_rng(6)
    X = np.vstack([rng.normal(size=(4000, 2)), [[60.0, 60.0], [60.3, 60.0], [60.0, 60.3]]])
    binned = BinnedDensity().fit(X)
    assert binned.has_far_rows_ and len(binned._far) == 3
    bandwidth = binned.bandwidth_
    exact = np.exp(KernelDensity(bandwidth=1.0).fit(X / bandwidth).score_samples(X / bandwidth)) \
        / np.prod(bandwidth)
    # the far rows' sums exactly (truncated at 4 bandwidths per axis: < 1e-3 of the mass)
    np.testing.assert_allclose(binned.density(X[-3:]), exact[-3:], rtol=1e-3)

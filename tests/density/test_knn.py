"""The k-nearest-neighbour density in an intrinsic dimension."""

import numpy as np
import pytest
from scipy.special import gammaln
from scipy.stats import norm

from spectral_leverage.density import KNNDensity


@pytest.mark.parametrize("seed", [0, 1])
def test_knn_density_of_a_normal_sample_in_its_dimension(seed):
    """k = 200 neighbours: the estimate's relative noise is about 1/sqrt(k); the median error over
    the inner rows measured 0.046-0.053 over five anchor draws (k = 50: 0.094-0.100)."""
    X = np.random.default_rng(0).standard_normal((20_000, 1))
    inner = np.abs(X[:, 0]) < 1.5
    estimate = KNNDensity(1.0, n_neighbors=200, random_state=seed).fit(X).density(X[inner], training=True)
    assert np.median(np.abs(estimate / norm.pdf(X[inner, 0]) - 1)) < 0.07


@pytest.mark.parametrize("d", [2, 12, 26, 30])
def test_nightly_finding_copies_of_one_row_have_a_finite_density_in_high_dimension(d):
    """Nightly property run (issue 38, designs up to d = 30): two copies of one row in 26-D had an
    infinite k-NN density, the radius floor 1e-12 to the 26th power leaving float64."""
    X = np.zeros((2, d), dtype=np.float32)
    values = KNNDensity(memory_budget=2**24, random_state=0).fit(X).density(X)
    assert values.shape == (2,) and np.all(np.isfinite(values)) and np.all(values > 0)


def _brute_force_log_density(X: np.ndarray, tree: np.ndarray, k: int, dim: float) -> np.ndarray:
    """The definition at rows X: the k-th distance among the tree points, one copy of a row's own
    point left out (then m - 1 of them counted)."""
    out = []
    for x in X:
        dist = np.sqrt(((tree - x) ** 2).sum(axis=1))
        on = np.flatnonzero(dist == 0)[:1]
        others = np.delete(dist, on)
        radius = np.sort(others)[k - 1]
        log_volume = 0.5 * dim * np.log(np.pi) - gammaln(0.5 * dim + 1)
        out.append(np.log(k - 1) - np.log(len(others)) - log_volume - dim * np.log(radius))
    return np.array(out)


@pytest.mark.parametrize("max_samples", [300, None])
def test_a_row_on_a_tree_point_is_the_density_of_the_other_points(max_samples):
    """With ``training`` a row on a tree point does not count it as a neighbour, whether the tree
    is a subsample (300 of 1000 rows) or every row; other rows count all m points."""
    X = np.random.default_rng(1).normal(size=(1000, 3))
    model = KNNDensity(2.5, n_neighbors=7, max_samples=max_samples, random_state=0).fit(X)
    assert model.log_density(X, training=True) == pytest.approx(
        _brute_force_log_density(X, model._training, 7, 2.5), rel=1e-12, abs=1e-12)


def test_tree_rows_and_other_rows_err_alike():
    """A subsample tree: its rows and the others read the true density alike (median log-ratio);
    with a row's own point counted as a neighbour (k = 10) the tree rows read about k / (k - 1)
    higher (inner rows' median log ratios measured +0.050 on the tree rows, -0.063 on the others;
    -0.062 and -0.063 leaving it out)."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40_000, 2))
    model = KNNDensity(2.0, n_neighbors=10, max_samples=8000, random_state=0).fit(X)
    on = (X[:, None, :1] == model._training[None, :, :1]).any(axis=1)[:, 0]
    truth = norm.logpdf(X).sum(axis=1)
    error = model.log_density(X, training=True) - truth
    inner = np.abs(X).max(axis=1) < 1.5
    assert on.sum() == 8000
    assert abs(np.median(error[on & inner]) - np.median(error[~on & inner])) < 0.03


def test_a_copy_of_a_tree_row_reads_the_same_as_the_tree_row():
    """One copy a tree point, the other not: each leaves one copy out (so both read the same)."""
    X = np.random.default_rng(3).normal(size=(2000, 4))
    model = KNNDensity(n_neighbors=20, max_samples=200, random_state=0).fit(X)
    first = int(np.flatnonzero((X[:, None, :] == model._training[None]).all(axis=2).any(axis=1))[0])
    Y = np.vstack([X, X[first]])
    log_p = model.log_density(Y, training=True)
    assert log_p[first] == log_p[-1]

import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.neighbors import KernelDensity

from spectral_leverage.density import TreeDensity, bandwidth_factor


@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("bandwidth", [0.2, 0.5])
def test_direct_kde_matches_sklearn_to_rtol(d, bandwidth):
    X = np.random.default_rng(d).normal(size=(3000, d))
    Q = np.random.default_rng(9).normal(size=(500, d)) * 1.5
    ours = TreeDensity(bandwidth, rtol=1e-2).fit(X).density(Q)
    exact = np.exp(KernelDensity(bandwidth=bandwidth).fit(X).score_samples(Q))  # rtol=0: exact
    np.testing.assert_allclose(ours, exact, rtol=1e-2)


def test_scott_rule_is_per_feature_and_scale_equivariant():
    X = np.random.default_rng(0).normal(size=(2000, 2))
    scale = np.array([3.0, 0.01])
    td = TreeDensity("scott").fit(X)
    td_scaled = TreeDensity("scott").fit(X * scale)
    np.testing.assert_allclose(td_scaled.bandwidth_, td.bandwidth_ * scale)
    np.testing.assert_allclose(td_scaled.density(X * scale), td.density(X) / np.prod(scale), rtol=1e-6)
    assert td.bandwidth_ == pytest.approx(X.std(axis=0) * bandwidth_factor("scott", 2000, 2))


@pytest.mark.parametrize("rule", ["scott", "silverman"])
def test_known_density_recovered(rule):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(16384, 2))
    central = np.linalg.norm(X, axis=1) < 1.5
    est = TreeDensity(rule).fit(X).density(X[central])
    true = multivariate_normal(np.zeros(2)).pdf(X[central])
    assert np.median(np.abs(est / true - 1)) < 0.05


def test_interpolation_adds_no_error_against_true_density():
    # uniform cube: true density 1 in the interior; the interpolated estimate (large batch) must be
    # at least as close to it as direct evaluation at every point with the same anchors
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(60_000, 3))
    td = TreeDensity(max_samples=4096, random_state=0).fit(X)
    interpolated = td.density(X)  # 60 000 > 4096 queries: interpolated
    direct = np.concatenate([td.density(X[i:i + 4096]) for i in range(0, X.shape[0], 4096)])
    inner = np.all((X > 0.2) & (X < 0.8), axis=1)
    err_interp, err_direct = np.abs(interpolated[inner] - 1), np.abs(direct[inner] - 1)
    assert np.median(err_interp) <= np.median(err_direct)
    assert np.quantile(err_interp, 0.9) <= np.quantile(err_direct, 0.9)
    assert np.median(err_interp) < 0.08


def test_outliers_are_evaluated_directly():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(20_000, 2)), [[40.0, 40.0]]])
    td = TreeDensity(max_samples=2048, random_state=0).fit(X)
    p = td.density(X)
    assert p[-1] < 1e-50  # no anchor near the outlier: not the density of its nearest anchor


def test_random_state_fixes_anchors():
    X = np.random.default_rng(4).normal(size=(5000, 2))
    a = TreeDensity(max_samples=1000, random_state=7).fit(X).density(X)
    b = TreeDensity(max_samples=1000, random_state=7).fit(X).density(X)
    c = TreeDensity(max_samples=1000, random_state=8).fit(X).density(X)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


@pytest.mark.parametrize("kwargs,match", [({"bandwidth": "wide"}, "bandwidth"),
                                          ({"bandwidth": -1.0}, "bandwidth"),
                                          ({"rtol": 2.0}, "rtol"),
                                          ({"max_samples": 0}, "max_samples"),
                                          ({"n_interp": 0}, "n_interp")])
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TreeDensity(**kwargs).fit(np.random.default_rng(0).normal(size=(50, 2)))


def test_bad_queries():
    td = TreeDensity().fit(np.random.default_rng(0).normal(size=(50, 2)))
    with pytest.raises(ValueError, match="features"):
        td.density(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="NaN"):
        td.density(np.array([[np.nan, 0.0]]))

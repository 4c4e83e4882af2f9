"""LeverageNystroem as a drop-in for scikit-learn's Nystroem: the same signature and features, and
exactly n_components distinct components drawn without replacement by the scores."""

import numpy as np
import pytest
from conftest import load_xy
from krr_problems import FixedScores, smooth_data
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import Ridge
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

from spectral_leverage._validation import expected_failed_checks
from spectral_leverage.krr import LeverageNystroem
from spectral_leverage.krr.centers import draw_centers
from spectral_leverage.krr.leverage_nystroem import string_kernel


@parametrize_with_checks([
    LeverageNystroem(),
    LeverageNystroem(kernel="laplacian", gamma=0.5, n_components=20, sampler="spectral", random_state=0),
    LeverageNystroem(ConstantKernel(2.0) * Matern(1.0, nu=2.5), n_components=20, sampler="uniform"),
], expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _script(transformer_class, **extra):
    """A user's scikit-learn script: scaler, Nyström features, ridge, 3-fold CV."""
    X, y = smooth_data(900, seed=3)
    pipe = make_pipeline(StandardScaler(),
                         transformer_class(kernel="rbf", gamma=0.5, n_components=60, random_state=0,
                                           **extra),
                         Ridge(alpha=1e-3))
    scores = cross_val_score(pipe, X, y, cv=3)
    return pipe.fit(X, y), scores


def test_replacing_the_class_name_is_enough():
    theirs, their_scores = _script(Nystroem)
    ours, our_scores = _script(LeverageNystroem, sampler="spectral", reg=1e-4)
    assert ours[1].transform(ours[0].transform(smooth_data(900, seed=3)[0])).shape == (900, 60)
    assert ours[1].components_.shape == theirs[1].components_.shape == (60, 2)
    assert np.unique(ours[1].component_indices_).size == 60
    # the same model: both near the noise ceiling (R² ≈ 0.78 with noise 0.3), to CV noise
    assert their_scores.mean() > 0.75 and our_scores.mean() > their_scores.mean() - 0.01


@pytest.mark.parametrize("kernel, exact", [
    ("rbf", lambda X, Y, g: rbf_kernel(X, Y, gamma=g)),
    ("laplacian", lambda X, Y, g: laplacian_kernel(X, Y, gamma=g)),
])
def test_features_are_the_nystroem_approximation_of_scikit_learns_kernel(kernel, exact):
    X = np.random.default_rng(1).normal(size=(300, 3))
    Z = np.random.default_rng(2).normal(size=(50, 3))
    gamma = 0.3
    full = LeverageNystroem(kernel=kernel, gamma=gamma, n_components=300, reg=1e-3).fit(X)
    F = full.transform(X)
    np.testing.assert_allclose(F @ F.T, exact(X, X, gamma), atol=1e-6)  # every row: K itself
    tr = LeverageNystroem(kernel=kernel, gamma=gamma, n_components=40, reg=1e-3, random_state=0).fit(X)
    C = tr.components_
    nystroem = exact(Z, C, gamma) @ np.linalg.solve(exact(C, C, gamma), exact(C, Z, gamma))
    np.testing.assert_allclose(tr.transform(Z) @ tr.transform(Z).T, nystroem, atol=1e-6)
    # gamma given as kernel_params, and the default 1/n_features, as in scikit-learn
    via_params = LeverageNystroem(kernel=kernel, kernel_params={"gamma": gamma}, n_components=40,
                                  reg=1e-3, random_state=0).fit(X)
    np.testing.assert_array_equal(via_params.component_indices_, tr.component_indices_)
    default = LeverageNystroem(kernel=kernel, n_components=300, reg=1e-3).fit(X)
    np.testing.assert_allclose(default.transform(X) @ default.transform(X).T, exact(X, X, 1 / 3), atol=1e-6)


def test_default_components_are_uniform():
    """The default is scikit-learn's scheme (docs/performance.md): m distinct rows, each in with
    probability m/n, the same draw as ``sampler="uniform"``."""
    X = np.random.default_rng(0).normal(size=(50, 2))
    assert LeverageNystroem().sampler == "uniform"
    np.testing.assert_array_equal(LeverageNystroem(n_components=10, random_state=3).fit(X).component_indices_,
                                  LeverageNystroem(n_components=10, random_state=3,
                                                   sampler="uniform").fit(X).component_indices_)
    counts = np.zeros(50)
    for seed in range(2000):
        counts[LeverageNystroem(n_components=10, random_state=seed).fit(X).component_indices_] += 1
    # Binomial(2000, 0.2) per row: sd 17.9; 5 sd over 50 rows fails by chance with p < 1e-4
    assert np.all(np.abs(counts - 400) < 5 * 17.9)


def test_string_kernels_scores_kernel():
    rbf_scores, rbf_features = string_kernel("rbf", 2.0, 3)
    X = np.random.default_rng(0).normal(size=(20, 3))
    np.testing.assert_allclose(rbf_scores(X), rbf_kernel(X, gamma=2.0), rtol=1e-12)
    assert rbf_features is rbf_scores
    laplace_scores, _ = string_kernel("laplacian", 2.0, 1)  # in 1-D the 1-norm is the 2-norm: exact
    x = X[:, :1]
    np.testing.assert_allclose(laplace_scores(x), laplacian_kernel(x, gamma=2.0), rtol=1e-12)
    # in d dimensions its length scale matches the 1-norm on average over directions
    u = np.random.default_rng(1).normal(size=(200_000, 5))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    ell = string_kernel("laplacian", 1.0, 5)[0].length_scale
    assert 1 / ell == pytest.approx(np.abs(u).sum(axis=1).mean(), rel=5e-3)


def test_bad_kernel_arguments_name_the_fix():
    X = np.random.default_rng(0).normal(size=(50, 2))
    with pytest.raises(InvalidParameterError, match="'kernel' parameter of LeverageNystroem"):
        LeverageNystroem(kernel="poly").fit(X)
    with pytest.raises(ValueError, match="kernel_params for kernel='rbf' takes only 'gamma'"):
        LeverageNystroem(kernel="rbf", kernel_params={"degree": 3}).fit(X)
    with pytest.raises(ValueError, match="gamma, coef0 and degree are for kernel names"):
        LeverageNystroem(RBF(1.0), gamma=0.5).fit(X)
    with pytest.raises(InvalidParameterError, match="'gamma' parameter"):
        LeverageNystroem(gamma=-1.0).fit(X)
    # a kernel object's parameters go through kernel_params onto a clone
    kernel = RBF(1.0)
    tr = LeverageNystroem(kernel, kernel_params={"length_scale": 0.3}, n_components=10).fit(X)
    assert tr.kernel_.length_scale == 0.3 and kernel.length_scale == 1.0


def test_distinct_components_on_real_data():
    # issue 23: 1000 i.i.d. draws on CCPP kept 844 distinct rows; now exactly n_components
    X = load_xy("ccpp.csv")[0]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    tr = LeverageNystroem(kernel="rbf", gamma=0.5, n_components=1000, reg=1e-5, sampler="spectral",
                          random_state=0).fit(X)
    assert tr.components_.shape == (1000, 4) and np.unique(tr.component_indices_).size == 1000


def test_without_replacement_is_successive_sampling():
    """P(first pick i) = p_i; P({i, j}) = p_i p_j / (1 - p_i) + p_j p_i / (1 - p_j), with and
    without sample weights (weights multiply the scores)."""
    X = np.arange(6.0).reshape(3, 2)
    p = np.array([0.5, 0.3, 0.2])
    rng = np.random.default_rng(0)
    draws = 4000
    for weights in (None, np.array([2.0, 1.0, 1.0])):
        scores = p if weights is None else p / weights
        sampler = FixedScores(scores / scores.sum()).fit(X)
        pairs = np.array([draw_centers(X, 2, sampler, kernel=RBF(1.0), reg=1e-3, rng=rng, replace=False,
                                       sample_weight=weights) for _ in range(draws)])
        assert pairs.shape == (draws, 2) and np.all(pairs[:, 0] < pairs[:, 1])
        missing = 3 - pairs.sum(axis=1)  # the left-out row of {0, 1, 2}
        expected = [p[j] * p[k] / (1 - p[j]) + p[k] * p[j] / (1 - p[k])
                    for j, k in ((1, 2), (0, 2), (0, 1))]
        frequency = np.bincount(missing, minlength=3) / draws
        np.testing.assert_allclose(frequency, expected, atol=4 * np.sqrt(0.25 / draws))


def test_more_components_than_rows_that_can_be_drawn():
    X, _ = smooth_data(100, seed=1)
    w = np.zeros(100)
    w[:5] = 1.0
    with pytest.warns(UserWarning, match="n_components=10 is larger than the number of samples n=5"):
        tr = LeverageNystroem(n_components=10).fit(X, sample_weight=w)
    np.testing.assert_array_equal(tr.component_indices_, np.arange(5))
    scores = np.zeros(100)
    scores[:3] = 1.0
    sampler = FixedScores(scores).fit(X)
    with pytest.raises(ValueError, match="n_components=10 distinct rows asked for, but only 3"):
        LeverageNystroem(n_components=10, sampler=sampler).fit(X, sample_weight=np.ones(100))
    with pytest.raises(ValueError, match="exceeds the 3 points of non-zero probability"):
        LeverageNystroem(n_components=10, sampler=sampler).fit(X)

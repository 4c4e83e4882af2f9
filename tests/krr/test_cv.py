"""NystromKRRCV: its k-fold scores against the path, its choice, the error curve of its centres."""

import logging

import numpy as np
import pytest
from krr_problems import path_problem, smooth_data
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern
from sklearn.model_selection import KFold
from sklearn.utils.estimator_checks import (
    check_sample_weight_equivalence_on_dense_data,
    parametrize_with_checks,
)

from spectral_leverage import NystromKRRCV
from spectral_leverage._blocks import DEFAULT_MEMORY_BUDGET
from spectral_leverage._validation import expected_failed_checks
from spectral_leverage.krr import NystromKRR
from spectral_leverage.krr import cv as cv_module
from spectral_leverage.krr.centers import select_centers
from spectral_leverage.krr.cv_inputs import with_length_scale
from spectral_leverage.krr.reg_path import nystrom_path

KERNEL = Matern(0.3, nu=1.5)
REGS = np.array([1e-2, 1e-3, 1e-4])


def test_kfold_scores_the_held_out_folds_of_the_path():
    """With n_centers >= n every row is a centre, so the CV's centres are known: X itself."""
    X, Y, _, _ = path_problem(n=200, seed=4)
    folds = list(KFold(3).split(X))
    model = NystromKRRCV(KERNEL, regs=REGS, length_scales=[0.3], n_centers=200, cv=folds).fit(X, Y[:, 0])
    regs = np.sort(REGS)  # the grid is used sorted
    np.testing.assert_array_equal(model.cv_results_["param_reg"], regs)
    assert np.all(model.cv_results_["n_centers"] == 200)
    for k, (train, test) in enumerate(folds):
        path = nystrom_path(X[train], Y[train], KERNEL, X, regs, criterion=None)
        pred = np.stack([KERNEL(X[test], X) @ path["coef"][j] + path["intercept"][j] for j in range(3)])
        np.testing.assert_allclose(-model.cv_results_[f"split{k}_test_score"],
                                   np.mean((Y[test][None] - pred) ** 2, axis=(1, 2)), rtol=1e-8)


def test_cv_chooses_the_best_of_its_results_and_refits_it():
    X, y = smooth_data(1500, seed=5)
    model = NystromKRRCV(Matern(nu=1.5), regs=[1e-1, 1e-3, 1e-5], length_scales=[0.1, 0.4, 2.0],
                         n_centers=80, random_state=0).fit(X, y)
    results = model.cv_results_
    assert results["param_reg"].shape == (9,) and set(results["rank_test_score"]) == set(range(1, 10))
    best = int(np.argmax(results["mean_test_score"]))
    assert results["rank_test_score"][best] == 1
    assert model.reg_ == results["param_reg"][best]
    assert model.length_scale_ == results["param_length_scale"][best]
    assert model.kernel_.length_scale == model.length_scale_ and model.kernel_.nu == 1.5
    assert isinstance(model.best_estimator_, NystromKRR) and model.n_centers_ <= 80
    np.testing.assert_array_equal(model.predict(X), model.best_estimator_.predict(X))
    assert model.score(X, y) > 1 - 0.3**2 / np.var(y) - 0.05  # the noise (σ = 0.3) bounds R²


def test_kernel_list_races_every_kernel_and_length_scale_and_refits_the_best():
    """Each (kernel, ℓ) pair is an arm: scored as that kernel alone would score it, at the same
    seed (the arms are kernel-major), and the best pair's kernel becomes kernel_."""
    X, y = smooth_data(800, seed=3)
    kernels, scales = [Matern(nu=2.5), RBF()], [0.3, 1.0]
    model = NystromKRRCV(kernels, regs=REGS, length_scales=scales, n_centers=60, random_state=0).fit(X, y)
    results = model.cv_results_
    families = np.array([type(k).__name__ for k in results["param_kernel"]])
    assert list(families) == ["Matern"] * 6 + ["RBF"] * 6  # sorted by kernel, then ℓ, then λ
    for k, ell in zip(results["param_kernel"], results["param_length_scale"], strict=True):
        assert k.length_scale == ell
    seeds = np.random.default_rng(0).integers(2**31 - 1, size=4)  # one per arm, kernel-major
    middle = float(np.exp(np.mean(np.log(REGS))))  # the first (only) size's centres are drawn there
    for arm, (kernel, ell) in enumerate((k, ell) for k in kernels for ell in scales):
        rows = (families == type(kernel).__name__) & (results["param_length_scale"] == ell)
        error, _ = _loo_pass(X, y, with_length_scale(kernel, ell), 60, middle, seeds[arm], np.sort(REGS))
        np.testing.assert_allclose(-results["mean_test_score"][rows], error, rtol=1e-8)
    best = int(np.argmax(results["mean_test_score"]))
    assert repr(model.kernel_) == repr(results["param_kernel"][best])
    assert model.best_estimator_.kernel == model.kernel_


def test_default_kernel_races_matern_three_halves_and_rbf():
    X, y = smooth_data(600, seed=1)
    model = NystromKRRCV(regs=REGS, length_scales=[0.5], n_centers=40, random_state=0).fit(X, y)
    kernels = model.cv_results_["param_kernel"]
    assert {type(k).__name__ for k in kernels} == {"Matern", "RBF"}
    assert all(k.nu == 1.5 for k in kernels if isinstance(k, Matern))


def test_a_kernel_list_with_constant_amplitude_is_accepted():
    X, y = smooth_data(300, seed=2)
    model = NystromKRRCV([ConstantKernel(2.0) * RBF(), Matern(nu=0.5)], regs=REGS, length_scales=[0.5],
                         n_centers=30, random_state=0).fit(X, y)
    assert model.kernel_.__class__.__name__ in {"Product", "Matern"}


@pytest.mark.parametrize("bad", [[], [RBF(), "rbf"], "rbf", 3], ids=repr)
def test_bad_kernels_are_refused_by_name(bad):
    X, y = smooth_data(100, seed=2)
    with pytest.raises(TypeError, match="kernel must be"):
        NystromKRRCV(bad, regs=REGS, length_scales=[0.5], n_centers=20).fit(X, y)


@pytest.mark.parametrize("name", ["regs", "length_scales"])
@pytest.mark.parametrize("bad", [[], [1e-3, -1.0], [np.nan], [0.0], [[1e-3, 1e-2]], ["a"]], ids=repr)
def test_bad_grids_are_refused_by_name(name, bad):
    X, y = smooth_data(100)
    with pytest.raises(ValueError, match=f"{name} must be a non-empty 1-D sequence of finite values > 0"):
        NystromKRRCV(**{name: bad}).fit(X, y)


def test_dask_input_is_refused():
    da = pytest.importorskip("dask.array")
    X, y = smooth_data(100)
    with pytest.raises(ValueError, match="NystromKRRCV is not available for Dask input"):
        NystromKRRCV().fit(da.from_array(X, chunks=50), y)


# the defaults, and k-fold with small grids (the checks fit dozens of times)
@parametrize_with_checks([NystromKRRCV(random_state=0),
                          NystromKRRCV(regs=[1e-4, 1e-2], length_scales=[1.0, 4.0], n_centers=20, cv=3,
                                       random_state=0)],
                         expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _loo_pass(X, y, kernel, m, reg, seed, regs):
    """(leave-one-out errors at every λ, centres) on m centres chosen at ``reg`` by ``seed``."""
    centers, _, _ = select_centers(X, m, "adaptive-cholesky", kernel=kernel, reg=reg,
                                   memory_budget=DEFAULT_MEMORY_BUDGET, y=y[:, None],
                                   rng=np.random.default_rng(seed))
    return nystrom_path(X, y[:, None], kernel, centers, regs, criterion="loo")["error"], len(centers)


def test_cv_takes_centres_that_are_not_rows():
    """k-means' centres (by name, or chosen by the default "adaptive-cholesky") are points: the
    criteria are those of Nyström KRR on them and n_centers_ counts them (it read the indices,
    None for k-means, and failed)."""
    X, y = smooth_data(600, seed=3)
    model = NystromKRRCV(regs=[1e-4, 1e-2], length_scales=[0.5, 1.0], n_centers=30, sampler="kmeans",
                         random_state=0).fit(X, y)
    assert model.best_estimator_.center_indices_ is None and model.n_centers_ == 30
    assert np.all(model.cv_results_["n_centers"] == 30)
    # the final fit's centres are the chosen ℓ's (the same seed), and its criterion is theirs
    path = nystrom_path(X, y[:, None], model.kernel_, model.best_estimator_.centers_,
                        np.array([model.reg_]), criterion="loo")
    assert -model.best_score_ == pytest.approx(path["error"][0], rel=1e-8)


def test_auto_follows_the_error_curve_and_refits_its_best_point():
    """m doubles from 256 for every ℓ; each (ℓ, m) is scored on centres chosen at the λ that was
    best for that ℓ at the previous m (the grid's middle at first); the best (ℓ, m, λ) is refitted."""
    X, y = smooth_data(1200, seed=5, noise=0.01)
    regs, scales = np.geomspace(1e-1, 1e-7, 5), np.array([0.2, 0.8])
    model = NystromKRRCV(Matern(nu=1.5), regs=regs, length_scales=scales, tol=0.0,
                         random_state=0).fit(X, y)
    seeds = np.random.default_rng(0).integers(2**31 - 1, size=2)
    regs = np.unique(regs)  # the order of cv_results_
    results = model.cv_results_
    assert results["n_centers"].size == results["param_reg"].size
    # two length scales race at 256 and 512, the better one alone from 1024 on (to 1200 = n at most)
    sizes = sorted((sorted(set(results["n_centers"][results["param_length_scale"] == ell]))
                    for ell in scales), key=len)
    assert sizes[0] == [256, 512] and sizes[1] == [256, 512, 1024, 1200][:len(sizes[1])]
    assert len(sizes[1]) >= 3
    for ell, seed in zip(scales, seeds, strict=True):
        draw_at = 1e-3
        for m in sorted(set(results["n_centers"][results["param_length_scale"] == ell])):
            error, count = _loo_pass(X, y, Matern(ell, nu=1.5), m, draw_at, seed, regs)
            rows = (results["param_length_scale"] == ell) & (results["n_centers"] == m)
            assert count == m
            np.testing.assert_allclose(-results["mean_test_score"][rows], error, rtol=1e-8)
            draw_at = regs[np.argmin(error)]
    best = int(np.argmax(results["mean_test_score"]))
    assert (model.reg_, model.length_scale_) == (results["param_reg"][best],
                                                 results["param_length_scale"][best])
    assert model.best_estimator_.n_centers == results["n_centers"][best] == model.n_centers_
    # best_estimator_ is the scored solution itself, in y's units: NystromKRR's on those centres
    centres = model.best_estimator_.centers_
    path = nystrom_path(X, y[:, None], model.kernel_, centres, np.array([model.reg_]), criterion=None)
    # to rounding relative to the largest coefficient: the fit runs BLAS on one thread (n_jobs=None),
    # this path on BLAS's own count, so sums come in another order (entries 1e-3 of a vector up to 8
    # differed by 1e-9)
    expected = path["coef"][0, :, 0]
    np.testing.assert_allclose(model.best_estimator_.coef_, expected, rtol=1e-7,
                               atol=1e-7 * np.abs(expected).max())
    assert model.best_estimator_.intercept_ == pytest.approx(path["intercept"][0, 0], rel=1e-9)
    if model.best_estimator_.center_indices_ is not None:  # rows (pivots), not k-means' points
        np.testing.assert_array_equal(centres, X[model.best_estimator_.center_indices_])


def test_loo_past_loo_rows_scores_a_random_subset_of_rows(monkeypatch):
    monkeypatch.setattr(cv_module, "LOO_ROWS", 50)
    X, y = smooth_data(300, seed=4)
    model = NystromKRRCV(KERNEL, regs=REGS, length_scales=[0.3], n_centers=40, random_state=0).fit(X, y)
    rng = np.random.default_rng(0)
    seed = rng.integers(2**31 - 1, size=1)[0]
    rows = np.sort(rng.choice(300, 50, replace=False))
    centers, _, _ = select_centers(X, 40, "adaptive-cholesky", kernel=KERNEL, reg=1e-3,
                                   memory_budget=DEFAULT_MEMORY_BUDGET, y=y[:, None],
                                   rng=np.random.default_rng(seed))
    path = nystrom_path(X, y[:, None], KERNEL, centers, np.sort(REGS), criterion="loo", loo_rows=rows)
    np.testing.assert_allclose(-model.cv_results_["mean_test_score"], path["error"], rtol=1e-8)
    everything = nystrom_path(X, y[:, None], KERNEL, centers, np.sort(REGS), criterion="loo")["error"]
    assert not np.allclose(path["error"], everything)


def test_loo_best_estimator_with_zero_weights_is_the_fit_without_those_rows():
    X, y = smooth_data(90, seed=8)
    w = np.ones(90)
    w[[0, 17, 50, 89]] = 0.0
    params = dict(kernel=KERNEL, regs=REGS, length_scales=[0.3, 0.6], n_centers=86, random_state=0)
    weighted = NystromKRRCV(**params).fit(X, y, sample_weight=w)
    keep = np.flatnonzero(w > 0)
    reference = NystromKRRCV(**params).fit(X[keep], y[keep])
    np.testing.assert_array_equal(weighted.best_estimator_.center_indices_, keep)
    np.testing.assert_allclose(weighted.predict(X), reference.predict(X), rtol=1e-10)


def test_auto_stops_where_doubling_no_longer_pays():
    # a smooth target with little noise: the criterion flattens well before n centres
    X, y = smooth_data(3000, seed=2, noise=0.3)
    model = NystromKRRCV(Matern(0.8, nu=1.5), regs=[1e-3, 1e-4], length_scales=[0.8],
                         random_state=0).fit(X, y)
    curve = -model.cv_results_["mean_test_score"].reshape(-1, 2).max(axis=1)
    sizes = model.cv_results_["n_centers"][::2]
    assert sizes[-1] < 3000 and list(sizes) == [256 * 2**k for k in range(sizes.size)]
    assert np.sqrt(curve[-1] / curve[-2]) > 0.99  # the last doubling gained less than tol = 1 %


def test_auto_warns_when_the_memory_budget_stops_an_improving_curve():
    # a wavy target with almost no noise: 300 centres fit it better than 256, and more would too
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(1500, 2))
    y = np.sin(12 * X[:, 0]) * np.sin(12 * X[:, 1]) + 0.001 * rng.normal(size=1500)
    budget = 32 * 300**2  # room for 300 centres
    with pytest.warns(UserWarning, match="stopped growing at 300 centres.*raise memory_budget") as caught:
        model = NystromKRRCV(Matern(0.3, nu=1.5), regs=[1e-8], length_scales=[0.3],
                             memory_budget=budget, random_state=0).fit(X, y)
    assert list(model.cv_results_["n_centers"]) == [256, 300]
    assert caught[0].filename == __file__  # the warning points at the caller's fit


# finding 1: on y × 1e-200 (× 1e155) the criteria under- (over-)flowed, and the largest λ and the
# shortest ℓ were chosen; y is now standardised inside the fit
@pytest.mark.parametrize("cv", ["loo", "gcv", 3])
@pytest.mark.parametrize("scale", [1e-200, 1e-100, 1e-8, 1e8, 1e100, 1e155])
def test_cv_scale_of_y_leaves_the_choice_alone(cv, scale):
    X, y = smooth_data(200, seed=7)
    params = dict(n_centers=40, cv=cv, random_state=0)
    reference = NystromKRRCV(**params).fit(X, y)
    model = NystromKRRCV(**params).fit(X, scale * y)
    assert (model.reg_, model.length_scale_) == (reference.reg_, reference.length_scale_)
    np.testing.assert_array_equal(model.cv_results_["rank_test_score"],
                                  reference.cv_results_["rank_test_score"])
    np.testing.assert_allclose(model.predict(X) / scale, reference.predict(X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_cv_scale_of_y_constant_target(fit_intercept):
    # a zero-variance y: the intercept carries it, or (without one) its scale leaves the choice alone
    X, _ = smooth_data(100, seed=7)
    params = dict(n_centers=20, fit_intercept=fit_intercept, random_state=0)
    model = NystromKRRCV(**params).fit(X, np.full(100, 3e-250))
    assert np.all(np.isfinite(model.cv_results_["mean_test_score"]))
    if fit_intercept:
        np.testing.assert_allclose(model.predict(X), 3e-250, rtol=1e-12)
    else:
        reference = NystromKRRCV(**params).fit(X, np.ones(100))
        assert (model.reg_, model.length_scale_) == (reference.reg_, reference.length_scale_)
        np.testing.assert_allclose(model.predict(X) / 3e-250, reference.predict(X), rtol=1e-9)


def test_cv_zero_weight_with_explicit_splits():
    # finding 2: zero-weight rows were dropped, but the user's split indices still indexed all the
    # rows (IndexError); they refer to the rows of X, and zero-weight rows leave them
    X, y = smooth_data(90, seed=8)
    w = np.ones(90)
    w[[0, 17, 50, 89]] = 0.0
    folds = list(KFold(3, shuffle=True, random_state=0).split(X))
    keep = np.flatnonzero(w > 0)
    position = np.cumsum(w > 0) - 1
    dropped = [(position[np.intersect1d(train, keep)], position[np.intersect1d(test, keep)])
               for train, test in folds]
    params = dict(kernel=KERNEL, regs=REGS, length_scales=[0.3, 0.6], n_centers=90)
    with pytest.warns(UserWarning, match="larger than the number of samples"):  # every row a centre
        weighted = NystromKRRCV(cv=folds, **params).fit(X, y, sample_weight=w)
        reference = NystromKRRCV(cv=dropped, **params).fit(X[keep], y[keep])
    for key in ("mean_test_score", "split0_test_score", "split2_test_score"):
        np.testing.assert_allclose(weighted.cv_results_[key], reference.cv_results_[key], rtol=1e-10)
    np.testing.assert_allclose(weighted.predict(X), reference.predict(X), rtol=1e-10)


@pytest.mark.parametrize("folds, match", [
    ([(np.arange(10, 90), np.arange(0, 10)), (np.arange(0, 80), np.arange(80, 91))], "split 1 has test"),
    ([(np.arange(10, 90), np.arange(0, 4))], "split 0 leaves 80 training and 0 held-out"),
])
def test_cv_zero_weight_with_explicit_splits_refuses_bad_splits(folds, match):
    X, y = smooth_data(90, seed=8)
    w = np.ones(90)
    w[:4] = 0.0
    with pytest.raises(ValueError, match=match):
        NystromKRRCV(KERNEL, regs=REGS, length_scales=[0.3], n_centers=20, cv=folds).fit(
            X, y, sample_weight=w)


@pytest.mark.parametrize("cv", ["loo", "gcv", 3])
def test_cv_sample_weight_equivalence_with_the_choice_fixed(cv):
    """Zero weight is a dropped row, an integer weight repeated rows (scikit-learn's check), once
    the grid leaves one choice and every row is a centre (what differs otherwise: the draws, and
    leave-one-out and GCV, which count a repeated row as several)."""
    check_sample_weight_equivalence_on_dense_data(
        "NystromKRRCV", NystromKRRCV(regs=[1e-3], length_scales=[1.0], n_centers=1000, cv=cv,
                                     random_state=0))


def test_verbose_shows_progress_over_the_length_scales_and_logs_each(caplog, capsys):
    X, y = smooth_data(400)
    model = NystromKRRCV(Matern(nu=1.5), length_scales=[0.5, 1.0, 2.0], n_centers=40, random_state=0)
    with caplog.at_level(logging.INFO, logger="spectral_leverage.krr.cv"):
        model.set_params(verbose=True).fit(X, y)
    logged = [r.getMessage() for r in caplog.records if r.name == "spectral_leverage.krr.cv"]
    assert len(logged) == 3 and all("centres drawn at reg" in m and "best reg" in m for m in logged)
    out, err = capsys.readouterr()
    assert out == "" and "NystromKRRCV length scales" in err and "3/3" in err
    caplog.clear()
    with caplog.at_level(logging.INFO):
        model.set_params(verbose=False).fit(X, y)
    assert not [r for r in caplog.records if r.name.startswith("spectral_leverage.krr")]
    assert capsys.readouterr() == ("", "")

"""NystromKRR and LeverageNystroem: the intercept, sample weights and their metadata routing."""

import warnings

import numpy as np
import pytest
import sklearn
from conftest import load_xy
from hypothesis import given, settings
from hypothesis import strategies as st
from krr_problems import FixedScores, smooth_data
from sklearn.compose import TransformedTargetRegressor
from sklearn.gaussian_process.kernels import RBF, Matern
from sklearn.linear_model import Ridge
from sklearn.metrics import get_scorer
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from spectral_leverage import SpectralLeverage
from spectral_leverage.krr import LeverageNystroem, NystromKRR
from spectral_leverage.krr.centers import (
    AUTO_CENTERS_FACTOR,
    CAPPED_UNIFORM_SHARE,
    _draws,
    auto_centers,
    center_budget,
    draw_centers,
)

KERNEL = Matern(0.4, nu=1.5)


def _rmse(model, X, y):
    return float(np.sqrt(np.mean((model.predict(X) - y) ** 2)))


# 1. the intercept
def test_intercept_on_uncentred_ccpp_matches_the_centred_fit():
    """Issue 21, acceptance 2: on CCPP (target mean ≈ 454) the default fit_intercept=True is within
    2 % of the fit to centred targets; without the intercept the kernel must carry the mean."""
    X, y = load_xy("ccpp.csv")
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)

    def model(**kw):
        return make_pipeline(StandardScaler(), NystromKRR(Matern(0.5, nu=1.5), 1e-3, 300,
                                                          random_state=0, **kw))

    with_intercept = _rmse(model().fit(X_train, y_train), X_test, y_test)
    centred = _rmse(TransformedTargetRegressor(model(fit_intercept=False),
                                               transformer=StandardScaler(with_std=False))
                    .fit(X_train, y_train), X_test, y_test)
    without = _rmse(model(fit_intercept=False).fit(X_train, y_train), X_test, y_test)
    assert with_intercept <= 1.02 * centred, (with_intercept, centred)
    assert without > 5 * centred, (without, centred)


@settings(max_examples=20, deadline=None)
@given(shift=st.floats(-1e4, 1e4), scale=st.floats(1e-3, 1e3), seed=st.integers(0, 2**16))
def test_intercept_absorbs_shifts_and_weights_their_scale(shift, scale, seed):
    X, y = smooth_data(200, seed=seed)
    w = np.random.default_rng(seed).uniform(0.1, 2.0, size=200)
    kw = dict(kernel=KERNEL, reg=1e-3, n_centers=30, random_state=seed)
    base = NystromKRR(**kw).fit(X, y, sample_weight=w)
    moved = NystromKRR(**kw).fit(X, y + shift, sample_weight=scale * w)
    np.testing.assert_array_equal(moved.center_indices_, base.center_indices_)
    np.testing.assert_allclose(moved.coef_, base.coef_, rtol=1e-7, atol=1e-7 * np.abs(base.coef_).max())
    assert moved.intercept_ == pytest.approx(base.intercept_ + shift, abs=1e-7 * (1 + abs(shift)))


def test_no_intercept_is_zero_and_multi_output_has_one_per_column():
    X, Y = smooth_data(300, seed=1, t=2)
    assert NystromKRR(KERNEL, 1e-3, 30, fit_intercept=False).fit(X, Y[:, 0]).intercept_ == 0.0
    offsets = np.array([10.0, -5.0])
    # centres that do not read y (the default's do), so that each column's fit has the joint's
    joint = NystromKRR(KERNEL, 1e-3, 30, sampler="spectral", random_state=0).fit(X, Y + offsets)
    assert joint.intercept_.shape == (2,)
    for j in range(2):
        single = NystromKRR(KERNEL, 1e-3, 30, sampler="spectral", random_state=0).fit(
            X, Y[:, j] + offsets[j])
        assert isinstance(single.intercept_, float)
        assert single.intercept_ == pytest.approx(joint.intercept_[j], rel=1e-10)


# 2. weights: repeated rows, dropped rows, the centres' distribution
def _repeated(X, y, w):
    return np.repeat(X, w, axis=0), np.repeat(y, w)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_integer_weights_equal_repeated_rows(fit_intercept):
    """The same centres on both sides (the scores sit on each point's first copy, so the inverse-CDF
    draws pick the same points): the solves agree to 1e-8."""
    X, y = smooth_data(400, seed=2)
    rng = np.random.default_rng(2)
    w = rng.integers(1, 5, size=400)
    scores = rng.uniform(0.5, 2.0, size=400)
    X_rep, y_rep = _repeated(X, y, w)
    first = np.concatenate([[0], np.cumsum(w)[:-1]])
    rep_scores = np.zeros(X_rep.shape[0])
    rep_scores[first] = w * scores
    kw = dict(kernel=KERNEL, reg=1e-3, n_centers=60, fit_intercept=fit_intercept, random_state=3)
    weighted = NystromKRR(sampler=FixedScores(scores), **kw).fit(X, y, sample_weight=w)
    repeated = NystromKRR(sampler=FixedScores(rep_scores), **kw).fit(X_rep, y_rep)
    np.testing.assert_array_equal(weighted.centers_, repeated.centers_)
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-8,
                               atol=1e-8 * np.abs(repeated.coef_).max())
    pred = repeated.predict(X)
    np.testing.assert_allclose(weighted.predict(X), pred, rtol=1e-8, atol=1e-8 * np.abs(pred).max())


def test_weighted_draws_are_the_draws_of_repeated_rows():
    """Uniform sampler: probability ∝ w_i is the uniform draw over repeated rows, point for point."""
    X, y = smooth_data(500, seed=4)
    w = np.random.default_rng(4).integers(1, 4, size=500)
    X_rep, y_rep = _repeated(X, y, w)
    kw = dict(kernel=KERNEL, reg=1e-3, n_centers=80, sampler="uniform", random_state=5)
    weighted = NystromKRR(**kw).fit(X, y, sample_weight=w)
    repeated = NystromKRR(**kw).fit(X_rep, y_rep)
    np.testing.assert_array_equal(np.unique(weighted.centers_, axis=0),
                                  np.unique(repeated.centers_, axis=0))


@pytest.mark.parametrize("sampler", ["spectral", "uniform", "exact"])
@pytest.mark.parametrize("solver", ["direct", "cg"])
def test_zero_weights_equal_dropped_rows(sampler, solver):
    X, y = smooth_data(600, seed=6)
    rng = np.random.default_rng(6)
    w = rng.uniform(0.5, 2.0, size=600)
    w[rng.uniform(size=600) < 0.3] = 0.0
    keep = w > 0
    kw = dict(kernel=KERNEL, reg=1e-3, n_centers=60, sampler=sampler, solver=solver, random_state=7)
    weighted = NystromKRR(**kw).fit(X, y, sample_weight=w)
    dropped = NystromKRR(**kw).fit(X[keep], y[keep], sample_weight=w[keep])
    np.testing.assert_array_equal(weighted.center_indices_, np.flatnonzero(keep)[dropped.center_indices_])
    np.testing.assert_allclose(weighted.coef_, dropped.coef_, rtol=1e-12, atol=1e-12)
    assert weighted.intercept_ == pytest.approx(dropped.intercept_, rel=1e-12)
    transformer = LeverageNystroem(KERNEL, reg=1e-3, n_components=60, sampler=sampler, random_state=7)
    idx = transformer.fit(X, sample_weight=w).component_indices_
    np.testing.assert_array_equal(idx, np.flatnonzero(keep)[
        transformer.fit(X[keep], sample_weight=w[keep]).component_indices_])


def test_unit_weights_change_nothing():
    X, y = smooth_data(300, seed=8)
    plain = NystromKRR(KERNEL, 1e-3, 40, random_state=0).fit(X, y)
    unit = NystromKRR(KERNEL, 1e-3, 40, random_state=0).fit(X, y, sample_weight=np.ones(300))
    np.testing.assert_array_equal(unit.center_indices_, plain.center_indices_)
    np.testing.assert_allclose(unit.coef_, plain.coef_, rtol=1e-12, atol=1e-14)


def test_bad_weights_are_refused_by_name():
    X, y = smooth_data(50)
    model = NystromKRR(KERNEL, 1e-3, 10)
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        model.fit(X, y, sample_weight=-np.ones(50))
    with pytest.raises(ValueError, match=r"sample_weight.shape == \(49,\), expected \(50,\)"):
        model.fit(X, y, sample_weight=np.ones(49))
    with pytest.raises(ValueError, match="at least one non-zero"):
        model.fit(X, y, sample_weight=np.zeros(50))
    one = np.zeros(50)
    one[3] = 1.0
    with pytest.raises(ValueError, match="at least two rows need a positive weight"):
        model.fit(X, y, sample_weight=one)
    nan = np.ones(50)
    nan[0] = np.nan
    with pytest.raises(ValueError, match="sample_weight"):
        model.fit(X, y, sample_weight=nan)


def test_dask_refuses_weights_and_fits_the_intercept():
    da = pytest.importorskip("dask.array")
    X, y = smooth_data(2000, seed=9)
    Xd, yd = da.from_array(X, chunks=500), da.from_array(y + 100.0, chunks=500)
    with pytest.raises(ValueError, match="sample_weight is not available for Dask input"):
        NystromKRR(KERNEL, 1e-3, 50).fit(Xd, yd, sample_weight=np.ones(2000))
    # the density scores on both: in memory "auto" refines them, on Dask it keeps them
    density = SpectralLeverage(KERNEL, 1e-3, algorithm="density")
    lazy = NystromKRR(KERNEL, 1e-3, 50, sampler=density, random_state=0).fit(Xd, yd)
    local = NystromKRR(KERNEL, 1e-3, 50, sampler=density, random_state=0).fit(X, y + 100.0)
    assert lazy.intercept_ == pytest.approx(local.intercept_, rel=1e-10)
    np.testing.assert_allclose(lazy.predict(Xd).compute(), local.predict(X), rtol=1e-9)


# 3. metadata routing
@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _outliers(seed=10, n=400):
    """Targets with 10 % gross outliers, and weights that drop them."""
    X, y = smooth_data(n, seed=seed)
    bad = np.random.default_rng(seed).uniform(size=n) < 0.1
    y[bad] += 50.0
    return X, y, (~bad).astype(float)


def test_grid_search_routes_sample_weight(routing):
    X, y, w = _outliers()
    scorer = get_scorer("neg_mean_squared_error").set_score_request(sample_weight=True)
    estimator = NystromKRR(RBF(0.5), n_centers=40, random_state=0).set_fit_request(sample_weight=True)
    search = GridSearchCV(estimator, {"reg": [1e-4, 1e-2]}, cv=3, scoring=scorer)
    search.fit(X, y, sample_weight=w)
    refit = NystromKRR(RBF(0.5), n_centers=40, random_state=0, **search.best_params_).fit(
        X, y, sample_weight=w)
    np.testing.assert_allclose(search.best_estimator_.coef_, refit.coef_, rtol=1e-12)
    unweighted = NystromKRR(RBF(0.5), n_centers=40, random_state=0, **search.best_params_).fit(X, y)
    assert not np.allclose(unweighted.predict(X), refit.predict(X))
    # the weighted score of the held-out folds ignores the outliers: the weights reached the scorer
    assert -search.best_score_ < 1.0 < np.var(y)


def test_pipeline_routes_sample_weight_to_both_steps(routing):
    X, y, w = _outliers(seed=11)
    pipe = make_pipeline(
        LeverageNystroem(RBF(0.5), reg=1e-3, n_components=40, sampler="spectral",
                         random_state=0).set_fit_request(sample_weight=True),
        Ridge(1e-3).set_fit_request(sample_weight=True),
    ).fit(X, y, sample_weight=w)
    alone = LeverageNystroem(RBF(0.5), reg=1e-3, n_components=40, sampler="spectral",
                             random_state=0).fit(X, sample_weight=w)
    np.testing.assert_array_equal(pipe[0].component_indices_, alone.component_indices_)
    assert np.all(w[alone.component_indices_] > 0)
    pipe_krr = make_pipeline(
        StandardScaler().set_fit_request(sample_weight=False),
        NystromKRR(RBF(0.5), 1e-3, 40, random_state=0).set_fit_request(sample_weight=True),
    ).fit(X, y, sample_weight=w)
    assert _rmse(pipe_krr, X[w > 0], y[w > 0]) < 0.5


# 4. n_centers="auto"
def test_auto_centres_follow_the_effective_dimension():
    X, y = smooth_data(3000, seed=12)
    d_eff = SpectralLeverage(KERNEL, 1e-3, random_state=0).fit(X).effective_dimension_
    model = NystromKRR(KERNEL, 1e-3, "auto", sampler="uniform", random_state=0).fit(X, y)
    # in memory: exactly ⌈2 d_eff⌉ distinct rows (i.i.d. draws would repeat some)
    assert len(model.center_indices_) == int(np.ceil(AUTO_CENTERS_FACTOR * d_eff))


def test_auto_centres_are_distinct_rows_in_memory_and_draws_on_dask():
    da = pytest.importorskip("dask.array")
    X, _ = smooth_data(3000, seed=12)
    for data, replace in [(X, False), (da.from_array(X, chunks=1000), True)]:
        m, _, share, drawn_with_replacement = _draws(data, "auto", "spectral", kernel=KERNEL, reg=1e-3,
                                                     memory_budget=2**28, rng=np.random.default_rng(0))
        assert drawn_with_replacement is replace and 20 <= m < 3000 and share == 0.0
    assert _draws(X, 50, "spectral", kernel=KERNEL, reg=1e-3, memory_budget=2**28, rng=None) == (
        50, "spectral", 0.0, True)


def test_auto_centres_capped_by_the_budget_warn_and_mix_in_uniform_probabilities():
    X, _ = smooth_data(3000, seed=13)
    budget = 32 * 40**2  # 40 centres
    assert center_budget(budget) == 40
    with pytest.warns(UserWarning, match="exceed the 40 that memory_budget allows"):
        m, sampler, share = auto_centers(X, "spectral", kernel=KERNEL, reg=1e-5, memory_budget=budget,
                                         rng=np.random.default_rng(0))
    assert m == 40 and share == CAPPED_UNIFORM_SHARE and isinstance(sampler, SpectralLeverage)
    assert sampler.reg == 1e-5  # the scores at λ itself
    # below the cap: no mixture
    m, _, share = auto_centers(X, "spectral", kernel=KERNEL, reg=1e-2, memory_budget=2**28,
                               rng=np.random.default_rng(0))
    assert share == 0.0 and m < 3000
    # 2 d_eff beyond n but n within the budget: every row (exact KRR), no warning, no mixture
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m, _, share = auto_centers(X[:300], "spectral", kernel=KERNEL, reg=1e-7, memory_budget=2**28,
                                   rng=np.random.default_rng(0))
    assert (m, share) == (300, 0.0)
    assert not [w for w in caught if "memory_budget allows" in str(w.message)]


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_a_uniform_share_mixes_the_probabilities(share, weighted):
    # one draw at a time: row i comes up with probability ∝ w_i ((1 - u) s_i + u s̄)
    rng = np.random.default_rng(1)
    X = np.concatenate([rng.normal(size=(30, 2)), [[6.0, 6.0]]])  # an isolated row: a high score
    n, draws = X.shape[0], 20_000
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    sampler = SpectralLeverage(KERNEL, 1e-3, random_state=0).fit(X)
    mixed = (1 - share) * sampler.scores_ + share * sampler.scores_.mean()
    expected = mixed * (1.0 if w is None else w)
    expected /= expected.sum()
    draw_rng = np.random.default_rng(2)
    hits = np.bincount(np.concatenate([
        draw_centers(X, 1, sampler, kernel=KERNEL, reg=1e-3, rng=draw_rng, sample_weight=w,
                     uniform_share=share) for _ in range(draws)]), minlength=n)
    tolerance = 5 * np.sqrt(expected * (1 - expected) / draws)  # five standard errors
    np.testing.assert_array_less(np.abs(hits / draws - expected), tolerance)
    if share:  # the isolated row's share falls towards 1/n
        assert expected[-1] < sampler.probabilities_[-1]


@pytest.mark.parametrize("sampler", ["greedy-cholesky", "rp-cholesky", "spectral-greedy"])
def test_selectors_choose_among_rows_of_positive_weight(sampler):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(600, 2))
    y = np.sin(4 * X[:, 0])
    w = rng.integers(0, 3, size=600).astype(float)
    model = NystromKRR(Matern(0.5, nu=1.5), 1e-4, 30, sampler=sampler, random_state=0)
    model.fit(X, y, sample_weight=w)
    assert model.center_indices_.size == 30 and np.all(w[model.center_indices_] > 0)
    np.testing.assert_array_equal(model.centers_, X[model.center_indices_])

"""The registry (``SAMPLERS``, ``make_sampler``, ``leverage_scores``) and the contract every
approximate sampler of the literature honours: close to exact leverage, exact when it keeps every
point, deterministic, clonable, and bad input refused by name."""

from __future__ import annotations

import numpy as np
import pytest
from sampler_problems import (  # noqa: F401 (fixtures are used by name)
    KERNEL,
    REG,
    SAMPLERS,
    TAKE_ALL,
    TINY_N,
    N,
    assert_accurate,
    assert_draws_follow_probabilities,
    design,
    tiny,
)
from sklearn.base import clone
from sklearn.gaussian_process.kernels import RBF

from spectral_leverage import exact_leverage
from spectral_leverage.base import LeverageSampler
from spectral_leverage.datasets import make_bimodal
from spectral_leverage.samplers import (
    BLESS,
    SQUEAK,
    AlaouiMahoneySampler,
    ExactLeverage,
    RecursiveRLS,
    leverage_scores,
    make_sampler,
)
from spectral_leverage.samplers import SAMPLERS as REGISTRY

# --- the registry ----------------------------------------------------------------------------------


def test_every_sampler_is_registered_by_name():
    names = {"exact", "uniform", "alaoui-mahoney", "recursive-rls", "squeak", "bless", "spectral",
             "kmeans", "greedy-cholesky", "rp-cholesky", "spectral-greedy", "adaptive-cholesky"}
    assert set(REGISTRY) == names
    for cls in SAMPLERS:
        assert cls in REGISTRY.values()


def test_make_sampler_builds_by_name_and_returns_objects_as_they_are():
    built = make_sampler("bless", kernel=KERNEL, reg=2e-3, random_state=4)
    assert isinstance(built, BLESS) and built.reg == 2e-3 and built.random_state == 4
    given = SQUEAK(KERNEL)
    assert make_sampler(given, kernel=RBF(), reg=1.0) is given
    with pytest.raises(ValueError, match="unknown sampler"):
        make_sampler("fast", kernel=KERNEL, reg=1e-3)
    with pytest.raises(TypeError, match="sampler must be"):
        make_sampler(object(), kernel=KERNEL, reg=1e-3)


def test_leverage_scores_by_name_and_by_object():
    X = np.random.default_rng(0).uniform(size=(100, 1))
    exact = 100 * exact_leverage(X, KERNEL, 1e-3)
    np.testing.assert_allclose(leverage_scores(X, kernel=KERNEL, reg=1e-3, method="exact"), exact)
    sampler = ExactLeverage(KERNEL, 1e-3)
    np.testing.assert_allclose(leverage_scores(X, kernel=None, reg=None, method=sampler), exact)
    assert not hasattr(sampler, "scores_")  # the object is cloned, not fitted


# --- against exact leverage ------------------------------------------------------------------------


@pytest.mark.parametrize("cls", SAMPLERS, ids=lambda c: c.__name__)
def test_defaults_match_exact_scores(cls, design):
    X, exact = design
    sampler = cls(KERNEL, REG, random_state=0).fit(X)
    assert isinstance(sampler, LeverageSampler)
    assert sampler.scores_.shape == (N,)
    assert sampler.n_features_in_ == X.shape[1]
    assert_accurate(sampler.scores_, exact)
    np.testing.assert_allclose(sampler.probabilities_.sum(), 1.0)


@pytest.mark.parametrize("cls", SAMPLERS, ids=lambda c: c.__name__)
def test_tiny_problem_taking_every_point_is_exact(cls, tiny):
    X, exact = tiny
    sampler = cls(KERNEL, 1e-3, random_state=0, **TAKE_ALL[cls]).fit(X)
    kept = getattr(sampler, "dictionary_indices_", getattr(sampler, "column_indices_", None))
    np.testing.assert_array_equal(np.sort(kept), np.arange(TINY_N))
    np.testing.assert_allclose(sampler.scores_, exact, rtol=1e-6)


@pytest.mark.parametrize("cls", [RecursiveRLS, BLESS], ids=lambda c: c.__name__)
def test_tiny_problem_weighted_scoring_is_exact_with_unit_weights(cls, tiny):
    X, exact = tiny
    sampler = cls(KERNEL, 1e-3, scoring="weighted", random_state=0, **TAKE_ALL[cls]).fit(X)
    np.testing.assert_allclose(sampler.dictionary_probabilities_, 1.0)
    np.testing.assert_allclose(sampler.scores_, exact, rtol=1e-6)


# --- determinism and the scikit-learn contract -----------------------------------------------------


@pytest.mark.parametrize("cls", SAMPLERS, ids=lambda c: c.__name__)
def test_same_random_state_same_scores(cls):
    X = make_bimodal(1500, 2, random_state=np.random.default_rng(7))
    a = cls(KERNEL, 1e-3, random_state=11).fit(X).scores_
    b = cls(KERNEL, 1e-3, random_state=11).fit(X).scores_
    c = cls(KERNEL, 1e-3, random_state=np.random.default_rng(11)).fit(X).scores_
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, cls(KERNEL, 1e-3, random_state=12).fit(X).scores_)


@pytest.mark.parametrize("cls", SAMPLERS, ids=lambda c: c.__name__)
def test_init_stores_parameters_only_and_clones(cls):
    sampler = cls(RBF(0.3), 1e-3, random_state=0)
    params = sampler.get_params()
    assert params["reg"] == 1e-3 and params["random_state"] == 0
    assert not hasattr(sampler, "scores_")
    twin = clone(sampler)
    X = np.random.default_rng(0).normal(size=(200, 2))
    np.testing.assert_array_equal(sampler.fit(X).scores_, twin.fit(X).scores_)
    assert sampler.sample(10).shape == (10,)
    # independently of the shape: the draws are indices of X with the probabilities of the scores
    np.testing.assert_allclose(sampler.probabilities_, sampler.scores_ / sampler.scores_.sum())
    assert_draws_follow_probabilities(sampler)


# --- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", SAMPLERS, ids=lambda c: c.__name__)
def test_bad_data_and_reg_are_rejected(cls):
    X = np.random.default_rng(0).uniform(size=(50, 1))
    X_nan = X.copy()
    X_nan[3] = np.nan
    with pytest.raises(ValueError, match="X"):
        cls(KERNEL, 1e-3).fit(X_nan)
    for reg in (0.0, -1.0, np.inf):
        with pytest.raises(ValueError, match="reg"):
            cls(KERNEL, reg).fit(X)
    with pytest.raises(TypeError, match="reg"):
        cls(KERNEL, "small").fit(X)
    with pytest.raises(TypeError, match="kernel"):
        cls("matern", 1e-3).fit(X)
    with pytest.raises(TypeError, match="random_state"):
        cls(KERNEL, 1e-3, random_state="seed").fit(X)


BAD_PARAMS = [
    (AlaouiMahoneySampler, {"n_columns": 0}, ValueError, "n_columns"),
    (AlaouiMahoneySampler, {"n_columns": 2.5}, TypeError, "n_columns"),
    (RecursiveRLS, {"sample_size": 0}, ValueError, "sample_size"),
    (RecursiveRLS, {"sample_size": "auto"}, TypeError, "sample_size"),
    (RecursiveRLS, {"oversampling": 0.5}, ValueError, "oversampling"),
    (RecursiveRLS, {"scoring": "exact"}, ValueError, "scoring"),
    (SQUEAK, {"qbar": 0}, ValueError, "qbar"),
    (SQUEAK, {"qbar": 2.5}, TypeError, "qbar"),
    (SQUEAK, {"eps": 1.0}, ValueError, "eps"),
    (SQUEAK, {"eps": -0.1}, ValueError, "eps"),
    (SQUEAK, {"batch_size": 0}, ValueError, "batch_size"),
    (SQUEAK, {"scoring": None}, ValueError, "scoring"),
    (BLESS, {"qbar": 0.5}, ValueError, "qbar"),
    (BLESS, {"qbar": np.inf}, ValueError, "qbar"),
    (BLESS, {"n_steps": 1}, ValueError, "n_steps"),
    (BLESS, {"n_steps": 3.0}, TypeError, "n_steps"),
    (BLESS, {"scoring": "fast"}, ValueError, "scoring"),
]


@pytest.mark.parametrize(
    ("cls", "params", "error", "name"),
    BAD_PARAMS,
    ids=[f"{c.__name__}-{next(iter(p))}-{e.__name__}" for c, p, e, _ in BAD_PARAMS],
)
def test_bad_parameters_name_the_argument(cls, params, error, name):
    X = np.random.default_rng(0).uniform(size=(50, 1))
    with pytest.raises(error, match=name):
        cls(KERNEL, 1e-3, **params).fit(X)

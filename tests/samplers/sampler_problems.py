"""Designs, exact references and assertions shared by the samplers' tests."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chisquare
from sklearn.gaussian_process.kernels import Matern

from spectral_leverage import exact_leverage
from spectral_leverage.datasets import make_bimodal
from spectral_leverage.metrics import score_accuracy
from spectral_leverage.samplers.alaoui_mahoney import AlaouiMahoneySampler
from spectral_leverage.samplers.bless import BLESS
from spectral_leverage.samplers.recursive_rls import RecursiveRLS
from spectral_leverage.samplers.squeak import SQUEAK

N = 4000
KERNEL = Matern(length_scale=0.5, nu=1.5)
REG = N ** (-0.75)
#: the approximate samplers of the literature, checked against exact leverage
SAMPLERS = [AlaouiMahoneySampler, RecursiveRLS, SQUEAK, BLESS]

TINY_N = 40
#: parameters with which each sampler keeps every point of a TINY_N-point problem
TAKE_ALL = {
    AlaouiMahoneySampler: {"n_columns": TINY_N},
    RecursiveRLS: {"sample_size": TINY_N},
    SQUEAK: {"qbar": 10**7},
    BLESS: {"qbar": 1e7},
}


@pytest.fixture(scope="module", params=[1, 3], ids=["bimodal-1d", "bimodal-3d"])
def design(request, exact_cache):
    """(X, exact rescaled scores n·l_i), computed once per design for the whole session."""
    X = make_bimodal(N, request.param, random_state=np.random.default_rng(request.param))
    key = ("sampler-bimodal", repr(KERNEL), N, request.param)
    if key not in exact_cache:
        exact_cache[key] = N * exact_leverage(X, KERNEL, REG)
    return X, exact_cache[key]


@pytest.fixture(scope="module")
def tiny():
    """(X, exact rescaled scores) of a TINY_N-point problem at λ = 1e-3."""
    X = np.random.default_rng(3).uniform(size=(TINY_N, 2))
    return X, TINY_N * exact_leverage(X, KERNEL, 1e-3)


def assert_accurate(scores, exact):
    acc = score_accuracy(scores, exact)
    assert 0.9 <= acc["mean"] <= 1.15, acc
    assert 0.6 <= acc["p05"] <= 1.5, acc
    assert 0.6 <= acc["p95"] <= 1.5, acc
    assert 0.5 <= acc["scale"] <= 2.0, acc


def assert_draws_follow_probabilities(sampler, n_draws: int = 100_000, n_groups: int = 20):
    """Chi-square test of ``sampler.sample`` against ``probabilities_``, over groups of points of
    about equal probability mass (so that every cell is populous)."""
    draws = sampler.sample(n_draws, random_state=1)
    n = sampler.probabilities_.shape[0]
    assert draws.dtype.kind == "i" and draws.min() >= 0 and draws.max() < n
    order = np.argsort(sampler.probabilities_)
    mass = np.cumsum(sampler.probabilities_[order])
    group = np.empty(n, dtype=int)
    group[order] = np.minimum((mass * n_groups).astype(int), n_groups - 1)
    observed = np.bincount(group[draws], minlength=n_groups)
    expected = n_draws * np.bincount(group, weights=sampler.probabilities_, minlength=n_groups)
    keep = expected > 0
    assert observed[~keep].sum() == 0
    assert chisquare(observed[keep], expected[keep]).pvalue > 1e-4

"""SQUEAK: its one-pass dictionary, and DICT-MERGE of samplers fitted on separate chunks."""

from __future__ import annotations

import numpy as np
import pytest
from sampler_problems import KERNEL, REG, N, assert_accurate, design, tiny  # noqa: F401 (fixtures are used by name)

from spectral_leverage import exact_leverage
from spectral_leverage.datasets import make_bimodal
from spectral_leverage.samplers.bless import BLESS
from spectral_leverage.samplers.squeak import SQUEAK, merge_squeak


def test_merge_of_two_halves(design):
    X, exact = design
    left = SQUEAK(KERNEL, REG, random_state=1).fit(X[: N // 2])
    right = SQUEAK(KERNEL, REG, random_state=2).fit(X[N // 2 :])
    merged = left.merge(right)
    assert merged.scores_.shape == (N,)
    assert merged.dictionary_indices_.max() < N
    assert_accurate(merged.scores_, exact)


def test_merge_squeak_tree_of_three_chunks():
    X = make_bimodal(900, 1, random_state=np.random.default_rng(5))
    reg = 900**-0.75
    parts = [SQUEAK(KERNEL, reg, random_state=k).fit(X[300 * k : 300 * (k + 1)]) for k in range(3)]
    merged = merge_squeak(parts)
    assert_accurate(merged.scores_, 900 * exact_leverage(X, KERNEL, reg))


def test_weighted_scoring_converges_as_copies_grow(tiny):
    X, exact = tiny
    errors = []
    for qbar in (10**2, 10**6):
        scores = SQUEAK(KERNEL, 1e-3, qbar=qbar, scoring="weighted", random_state=0).fit(X).scores_
        errors.append(np.max(np.abs(scores / exact - 1)))
    assert errors[1] < errors[0]
    assert errors[1] < 0.02


def test_merge_is_deterministic():
    X = make_bimodal(1000, 1, random_state=np.random.default_rng(8))
    fits = [
        (SQUEAK(KERNEL, 1e-3, random_state=1).fit(X[:500]), SQUEAK(KERNEL, 1e-3, random_state=2).fit(X[500:]))
        for _ in range(2)
    ]
    np.testing.assert_array_equal(fits[0][0].merge(fits[0][1]).scores_, fits[1][0].merge(fits[1][1]).scores_)


def test_merge_rejects_incompatible_samplers():
    X = np.random.default_rng(0).uniform(size=(100, 1))
    a = SQUEAK(KERNEL, 1e-3, random_state=0).fit(X)
    with pytest.raises(ValueError, match="reg"):
        a.merge(SQUEAK(KERNEL, 2e-3, random_state=0).fit(X))
    with pytest.raises(ValueError, match="features"):
        a.merge(SQUEAK(KERNEL, 1e-3, random_state=0).fit(np.hstack([X, X])))
    with pytest.raises(TypeError, match="other"):
        a.merge(BLESS(KERNEL, 1e-3, random_state=0).fit(X))
    with pytest.raises(ValueError, match="samplers"):
        merge_squeak([])

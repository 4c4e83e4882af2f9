"""Recursive-RLS: the weights each level is scored with."""

from __future__ import annotations

import numpy as np
from sampler_problems import KERNEL

from spectral_leverage import exact_leverage
from spectral_leverage.datasets import make_bimodal
from spectral_leverage.metrics import score_accuracy
from spectral_leverage.samplers.recursive_rls import RecursiveRLS


def test_levels_score_with_the_half_sample_weights():
    """Musco & Musco's recursion scores each level with the weights the dictionary got in the
    uniform half below (leverage relative to the half: upper bounds). Rescaling them to the level
    (an earlier version) roughly halved every level's sampling probabilities: on this design the
    mean 5th / 95th R-ACC percentiles over seeds 0-7 were 0.80 / 1.17, against 0.83 / 1.14."""
    n = 2000
    X = make_bimodal(n, 3, random_state=np.random.default_rng(3))
    reg = n**-0.75
    exact = n * exact_leverage(X, KERNEL, reg)
    accs = [score_accuracy(RecursiveRLS(KERNEL, reg, random_state=seed).fit(X).scores_, exact)
            for seed in range(8)]
    assert np.mean([a["p05"] for a in accs]) >= 0.82, accs
    assert np.mean([a["p95"] for a in accs]) <= 1.16, accs


def test_final_dictionary_is_sorted_with_inclusion_probabilities():
    X = np.random.default_rng(0).uniform(size=(400, 1))
    rrls = RecursiveRLS(KERNEL, 1e-3, random_state=0).fit(X)
    idx, probs = rrls.dictionary_indices_, rrls.dictionary_probabilities_
    assert np.all(np.diff(idx) > 0) and idx.max() < 400
    assert probs.shape == idx.shape and np.all((probs > 0) & (probs <= 1))

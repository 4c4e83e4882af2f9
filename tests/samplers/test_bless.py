"""BLESS: the regularisation path and its final dictionary."""

from __future__ import annotations

import numpy as np
from sampler_problems import KERNEL

from spectral_leverage.samplers.bless import BLESS


def test_path_runs_geometrically_from_one_to_reg():
    X = np.random.default_rng(0).uniform(size=(500, 1))
    bless = BLESS(KERNEL, 1e-3, n_steps=5, random_state=0).fit(X)
    np.testing.assert_allclose(bless.reg_path_, np.geomspace(1.0, 1e-3, 5))
    idx, probs = bless.dictionary_indices_, bless.dictionary_probabilities_
    assert idx.size == np.unique(idx).size and idx.max() < 500
    assert probs.shape == idx.shape and np.all((probs > 0) & (probs <= 1))

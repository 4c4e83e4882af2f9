"""UniformSampler: the baseline, which estimates no leverage."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.gaussian_process.kernels import RBF

from spectral_leverage import UniformSampler


def test_every_point_equally_likely_and_no_effective_dimension():
    X = np.random.default_rng(0).normal(size=(40, 3))
    s = UniformSampler(RBF(0.3), 1e-2, random_state=0).fit(X)
    np.testing.assert_array_equal(s.scores_, np.ones(40))
    np.testing.assert_allclose(s.probabilities_, np.full(40, 1 / 40))
    assert np.isnan(s.effective_dimension_)
    assert s.n_features_in_ == 3
    assert sorted(s.sample(40, replace=False)) == list(range(40))


def test_kernel_and_reg_are_accepted_and_ignored():
    X = np.random.default_rng(0).normal(size=(10, 2))
    assert UniformSampler().reg == 1e-3 and UniformSampler().kernel is None
    for sampler in (UniformSampler(), UniformSampler(RBF(), None), UniformSampler(kernel="any", reg=5.0)):
        np.testing.assert_array_equal(sampler.fit(X).probabilities_, np.full(10, 0.1))
    with pytest.raises(ValueError, match="reg"):
        UniformSampler(reg=-1.0).fit(X)

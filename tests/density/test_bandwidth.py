"""The bandwidth rules' scale: the standard deviation, unless a few far rows inflate it."""

import numpy as np
import pytest

from spectral_leverage.density import BinnedDensity, TreeDensity, feature_bandwidths, robust_scale
from spectral_leverage.density.bandwidth import NORMAL_IQR


def test_robust_scale_is_the_standard_deviation_on_normal_data():
    X = np.random.default_rng(0).standard_normal((100_000, 3)) * [1.0, 5.0, 0.01]
    np.testing.assert_allclose(robust_scale(X.std(axis=0), X), X.std(axis=0), rtol=0.02)
    assert NORMAL_IQR == pytest.approx(2 * 0.6744897501960817)


def test_one_far_row_does_not_widen_the_bandwidths():
    """Issue 38 / 34: one row at 10^4 beside 20 000 standard normal rows made the standard
    deviation 70 and the Scott bandwidths 70 times too wide; the robust scale stays near 1."""
    X = np.random.default_rng(0).standard_normal((20_000, 3))
    far = np.vstack([X, np.full((1, 3), 1e4)])
    assert far.std(axis=0).min() > 50
    np.testing.assert_allclose(feature_bandwidths(far, "scott"), feature_bandwidths(X, "scott"), rtol=0.01)
    every = TreeDensity(max_samples=None)  # the same rows as anchors, but for the far one
    np.testing.assert_allclose(every.fit(far).bandwidth_, every.fit(X).bandwidth_, rtol=0.01)


def test_a_feature_with_coinciding_quartiles_keeps_its_standard_deviation():
    X = np.zeros((100, 2))
    X[:10, 0] = 1.0  # quartiles 0 and 0
    X[:, 1] = np.arange(100)
    scale = robust_scale(X.std(axis=0), X)
    assert scale[0] == pytest.approx(X[:, 0].std())
    assert scale[1] == pytest.approx(X[:, 1].std())
    assert BinnedDensity().fit(X).bandwidth_[0] > 0

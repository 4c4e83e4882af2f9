"""The bandwidth rules' scale: the standard deviation, unless a few far rows inflate it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spectral_leverage._keys import smallest_keys
from spectral_leverage.density import (
    BinnedDensity,
    TreeDensity,
    _anchor_draw,
    _anchor_indices,
    _anchor_keys,
    bandwidth_factor,
    feature_bandwidths,
    robust_scale,
)


def test_robust_scale_is_the_standard_deviation_on_normal_data():
    X = np.random.default_rng(0).standard_normal((100_000, 3)) * [1.0, 5.0, 0.01]
    np.testing.assert_allclose(robust_scale(X.std(axis=0), X), X.std(axis=0), rtol=0.002)


def test_one_far_row_does_not_widen_the_bandwidths():
    """Issue 38 / 34: one row at 10^4 beside 20 000 standard normal rows made the standard
    deviation 70 and the Scott bandwidths 70 times too wide; the robust scale stays near 1."""
    X = np.random.default_rng(0).standard_normal((20_000, 3))
    far = np.vstack([X, np.full((1, 3), 1e4)])
    assert far.std(axis=0).min() > 50
    np.testing.assert_allclose(feature_bandwidths(far, "scott"), feature_bandwidths(X, "scott"), rtol=0.01)
    every = TreeDensity(max_samples=None)  # the same rows as anchors, but for the far one
    np.testing.assert_allclose(every.fit(far).bandwidth_, every.fit(X).bandwidth_, rtol=0.01)


def test_a_sparse_mode_keeps_its_share_of_the_scale():
    """A mode of 2 % of the rows far from the rest is data, not an outlier: the scale is its
    standard deviation (Silverman's IQR rule shrank it 4-fold, and the spectral centres on such a
    design lost 8 % in risk)."""
    rng = np.random.default_rng(0)
    X = np.r_[rng.standard_normal(9800), 12 + rng.standard_normal(200)][:, None]
    assert robust_scale(X.std(axis=0), X)[0] == pytest.approx(X.std(), rel=0.01)
    assert BinnedDensity().fit(X).bandwidth_[0] == pytest.approx(
        X.std() * bandwidth_factor("scott", 10_000, 1), rel=0.01)


def test_a_rare_indicator_keeps_its_standard_deviation():
    """Review finding: a column constant but for under 0.1 % of its rows winsorizes to a constant;
    it keeps its standard deviation rather than the constant columns' scale of 1."""
    X = np.zeros((20_000, 2))
    X[:10, 0] = 1.0
    X[:, 1] = np.random.default_rng(0).standard_normal(20_000)
    scale = robust_scale(X.std(axis=0), X)
    assert scale[0] == pytest.approx(X[:, 0].std())
    factor = bandwidth_factor("scott", 20_000, 2)
    assert feature_bandwidths(X, "scott")[0] == pytest.approx(X[:, 0].std() * factor)


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 3000), st.integers(1, 3000), st.integers(0, 2**32 - 1))
def test_an_appended_row_leaves_the_anchors_but_the_one_it_displaces(n, size, seed):
    """Anchors drawn by one key a row: appending a row keeps every anchor of the first n rows but at
    most one (the appended row taking its place), where a fresh draw for n + 1 rows replaced most."""
    before, after = _anchor_indices(n, size, seed), _anchor_indices(n + 1, size, seed)
    if before is None:
        assert after is None or len(after) == size == n
        return
    assert len(after) == len(before) == size and np.all(np.diff(after) > 0)
    assert len(np.setdiff1d(before, after)) <= 1 and len(np.setdiff1d(after, before)) <= 1


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 3000), st.integers(1, 3000), st.integers(0, 2**32 - 1))
def test_the_anchors_smallest_keys_are_the_smaller_subsample(n, size, smaller, seed):
    """The ``smaller`` smallest of the anchors' keys pick the rows that ``max_samples=smaller``
    draws (nested subsamples by the rows' own keys, not by position among the anchors), and the
    keys are the anchors', in their order; where every row is an anchor, nothing is drawn and
    :func:`_anchor_keys` gives every row's key."""
    rows, keys = _anchor_draw(n, size, seed)
    if rows is None:
        assert keys is None and size >= n
        rows, keys = np.arange(n), _anchor_keys(n, seed)
    assert keys.shape == rows.shape == (min(n, size),) and np.all((keys >= 0) & (keys < 1))
    inner = _anchor_indices(n, smaller, seed)
    if smaller <= size:
        np.testing.assert_array_equal(rows[smallest_keys(keys, smaller)],
                                      np.arange(n) if inner is None else inner)


def test_the_anchor_draw_with_every_point_draws_nothing():
    """Where every row is an anchor (``max_samples`` None or at least n) nothing is drawn, and a
    Generator's stream is left as it was."""
    for size in (None, 10, 11):
        rng = np.random.default_rng(0)
        assert _anchor_draw(10, size, rng) == (None, None)
        assert rng.integers(2**63 - 1) == np.random.default_rng(0).integers(2**63 - 1)

"""Accuracy measures: neighbour recall against a count by sets, and its refusals."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spectral_leverage.metrics import neighbour_recall


@given(st.integers(1, 20), st.integers(1, 8), st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_recall_is_the_mean_share_of_exact_ids_found(rows, k_found, k_exact, seed):
    rng = np.random.default_rng(seed)
    found = np.array([rng.choice(30, k_found, replace=False) for _ in range(rows)])
    exact = np.array([rng.choice(30, k_exact, replace=False) for _ in range(rows)])
    by_sets = np.mean([len(set(f) & set(e)) / k_exact for f, e in zip(found, exact, strict=True)])
    assert neighbour_recall(found, exact) == pytest.approx(by_sets)
    # the order within a row does not matter
    assert neighbour_recall(found[:, ::-1], exact[:, ::-1]) == pytest.approx(by_sets)


@pytest.mark.parametrize(("found", "exact", "match"), [
    ([0, 1], [[0, 1]], "found must be a non-empty 2-D"),
    ([[0.0, 1.0]], [[0, 1]], "found must be .* integer row ids"),
    ([[0, 1]], np.zeros((1, 0), dtype=int), "exact must be a non-empty 2-D"),
    ([[0, 1], [2, 3]], [[0, 1]], "one row per query"),
])
def test_recall_refuses_what_is_not_two_tables_of_row_ids(found, exact, match):
    with pytest.raises(ValueError, match=match):
        neighbour_recall(found, exact)

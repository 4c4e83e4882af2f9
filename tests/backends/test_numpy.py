"""The in-memory backend's neighbour map: every row with its k nearest, groups handed over whole."""

import numpy as np
import pytest

from spectral_leverage.backends import numpy as backend


def group_view(points, near, labels):
    """For each row: how many rows of its label came in the same call, and its k nearest's ids."""
    counts = np.unique(labels, return_counts=True)
    return np.column_stack([counts[1][np.searchsorted(counts[0], labels)], np.sort(near[:, 1:], axis=1)])


@pytest.mark.parametrize("bytes_per_row", [1e3, 1e5, 1e9])
def test_map_near_hands_over_whole_groups_and_exact_neighbours(bytes_per_row):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    def groups(A):  # slabs of the first coordinate
        return np.floor(A[:, 0] * 8).astype(np.intp)

    labels = groups(X)
    out = {}

    def func(points, near, batch_labels):
        out.update(zip(near[:, 0], group_view(points, near, batch_labels), strict=True))
        np.testing.assert_array_equal(points, X[near])
        return near[:, 0].astype(float)

    rows = backend.map_near(func, X, 5, lambda Z: Z, groups, bytes_per_row=bytes_per_row, memory_budget=1e6)
    np.testing.assert_array_equal(rows, np.arange(500))
    distance = np.linalg.norm(X[:, None] - X[None], axis=2)
    np.fill_diagonal(distance, np.inf)
    nearest = np.sort(np.argsort(distance, axis=1)[:, :5], axis=1)
    view = np.array([out[i] for i in range(500)])
    _, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(view[:, 0], counts[inverse])  # the whole group at once
    np.testing.assert_array_equal(view[:, 1:], nearest)

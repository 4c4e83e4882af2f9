"""The Dask backend's neighbours by cells of space and halo rows equal one exact query over all rows."""

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dask_backend = pytest.importorskip("spectral_leverage.backends.dask")

from spectral_leverage.backends import _cells  # noqa: E402
from spectral_leverage.backends import numpy as numpy_backend  # noqa: E402

K = 10


def _rescale(Z):
    return Z / np.array([0.7, 1.3, 1.0, 2.0, 0.5, 1.0, 1.0, 1.0])[:Z.shape[1]]


class _Slabs:
    """Groups of rows for map_near: 80 slabs of the first rescaled coordinate, each anchored at the
    middle of its stretch on the first axis (at 0 on the others: most rows lie far from their
    group's cell)."""

    def __init__(self, d):
        middle = (np.arange(80) - 40) / 4.0 + 0.125
        self.anchors = np.column_stack([middle, np.zeros((80, d - 1))]) / _rescale(np.ones((1, d)))

    def __call__(self, rows):
        return np.clip(np.floor(_rescale(rows)[:, 0] * 4).astype(np.intp) + 40, 0, 79)


def _record(store):
    """A ``func`` for map_near that keeps every near block and returns each row's id."""
    def func(points, near, labels):
        store.append((near.copy(), points.copy()))
        return near[:, 0].astype(float)
    return func


def _map_near(X, chunks, memory_budget, monkeypatch):
    """(map_near's result computed, the near blocks by row, the rows' points, the cells used)."""
    made = []
    build = _cells.Cells.from_sample

    def spy(*args):
        made.append(build(*args))
        return made[-1]

    monkeypatch.setattr(_cells.Cells, "from_sample", spy)
    store = []
    with dask.config.set(scheduler="sync"):
        out = dask_backend.map_near(_record(store), da.from_array(X, chunks=(chunks, X.shape[1])), K,
                                    _rescale, _Slabs(X.shape[1]), bytes_per_row=100.0,
                                    memory_budget=memory_budget)
        assert out.chunks[0] == tuple(chunks)
        values = out.compute()
    near = np.empty((len(X), K + 1), dtype=np.intp)
    points = np.empty((len(X), K + 1, X.shape[1]))
    for block, rows in store:
        near[block[:, 0]] = block
        points[block[:, 0]] = rows
    return values, near, points, made[0]


def _brute(X):
    """Distances (n, n) in the rescaled coordinates, each row's own distance infinite."""
    Z = _rescale(X)
    distance = np.sqrt(((Z[:, None, :] - Z[None, :, :]) ** 2).sum(axis=-1))
    np.fill_diagonal(distance, np.inf)
    return distance


def _check_exact(X, near, points, values, ties=False):
    n = len(X)
    np.testing.assert_array_equal(values, np.arange(n))  # X's row order
    np.testing.assert_array_equal(near[:, 0], np.arange(n))
    assert not np.any(near[:, 1:] == np.arange(n)[:, None])
    np.testing.assert_array_equal(points, X[near])
    distance = _brute(X)
    expected = np.sort(distance, axis=1)[:, :K]
    found = np.sort(np.take_along_axis(distance, near[:, 1:], axis=1), axis=1)
    np.testing.assert_array_equal(found, expected)  # the k smallest distances, each row
    if not ties:
        np.testing.assert_array_equal(np.sort(near[:, 1:], axis=1),
                                      np.sort(np.argsort(distance, axis=1)[:, :K], axis=1))


def _uneven(n):
    return [n // 3, 7, n - n // 3 - 7 - n // 5, n // 5]


@pytest.mark.parametrize("d", [1, 3, 8])
def test_neighbours_exact_over_several_cells(d, monkeypatch):
    X = np.random.default_rng(d).normal(size=(1500, d))
    values, near, points, cells = _map_near(X, _uneven(1500), 2e5, monkeypatch)
    assert cells.count >= 8
    _check_exact(X, near, points, values)


def test_rows_on_cell_boundaries(monkeypatch):
    """Coordinates on a lattice along the widest axis: whole rows of X lie on the split planes."""
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.integers(0, 12, size=1200).astype(float), rng.normal(size=(1200, 2))])
    values, near, points, cells = _map_near(X, _uneven(1200), 2e5, monkeypatch)
    inner = cells.axis >= 0
    on_planes = _rescale(X)[:, cells.axis[inner]] == cells.threshold[inner]
    assert cells.count >= 8 and on_planes.any(axis=0).all()
    _check_exact(X, near, points, values)


def test_duplicated_rows_and_a_far_cluster(monkeypatch):
    """Rows three times each, 40 copies of one row (more than k + 1), a tight cluster far from the
    rest, and 4 rows farther still (fewer than k + 1: their neighbours lie in other cells)."""
    rng = np.random.default_rng(2)
    base = rng.normal(size=(400, 3))
    X = np.vstack([base, base, base, np.repeat(base[:1], 40, axis=0),
                   1e3 + rng.normal(size=(30, 3)), -1e4 + rng.normal(size=(4, 3))])
    X = X[rng.permutation(len(X))]
    values, near, points, cells = _map_near(X, _uneven(len(X)), 2e5, monkeypatch)
    assert cells.count >= 8
    _check_exact(X, near, points, values, ties=True)


def test_one_cell(monkeypatch):
    X = np.random.default_rng(3).normal(size=(600, 2))
    values, near, points, cells = _map_near(X, _uneven(600), 2**30, monkeypatch)
    assert cells.count == 1
    _check_exact(X, near, points, values)


def test_equals_the_in_memory_backend(monkeypatch):
    """A per-row function of the near blocks: the same values as NumPy's one query over all rows."""
    X = np.random.default_rng(4).standard_t(3, size=(2000, 3))

    def func(points, near, labels):
        """Per row: its near block's spread, its neighbours, and the rows of its group in the call."""
        gaps = np.sum((points - points[:, :1]) ** 2, axis=(1, 2))
        _, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
        members = np.array([near[labels == label, 0].sum() for label in labels])
        return gaps + np.sort(near[:, 1:], axis=1) @ np.arange(K) + 1e6 * counts[inverse] + 1e9 * members

    groups = _Slabs(3)
    expected = numpy_backend.map_near(func, X, K, _rescale, groups, bytes_per_row=100.0, memory_budget=2e5)
    with dask.config.set(scheduler="sync"):
        got = dask_backend.map_near(func, da.from_array(X, chunks=(_uneven(2000), 3)), K, _rescale, groups,
                                    bytes_per_row=100.0, memory_budget=2e5).compute()
    np.testing.assert_array_equal(got, expected)


def test_cells_partition_the_sample_evenly():
    Z = np.random.default_rng(5).normal(size=(4096, 3))
    cells = _cells.Cells.from_sample(Z, 16)
    where = cells.locate(Z)
    assert cells.count == 16 and np.all(np.bincount(where, minlength=16) == 256)
    assert np.all((cells.low[where] <= Z) & (Z <= cells.high[where]))
    boxes = np.concatenate([cells.low, cells.high])
    assert np.isinf(boxes).sum() > 0 and not np.isnan(boxes).any()


def test_box_distance_is_the_distance_to_the_clipped_point():
    rng = np.random.default_rng(6)
    Z = rng.normal(size=(200, 3)) * 3
    low, high = np.array([-1.0, -np.inf, 0.5]), np.array([1.0, 2.0, np.inf])
    expected = np.linalg.norm(Z - np.clip(Z, low, high), axis=1)
    np.testing.assert_allclose(_cells.box_distance(Z, low, high), expected, rtol=1e-15)
    # a box to a box: the distance between their nearest points
    assert _cells.box_distance(np.array([2.0, 3.0, 0.0]), low, high, np.array([4.0, 5.0, 0.0])) == \
        pytest.approx(1.5)  # gaps 1, 1 and 0.5


def test_split_by_keeps_the_order_within_groups():
    key = np.array([2, 0, 2, 1, 0, 2])
    parts = _cells.split_by(key, 4, np.arange(6), np.arange(6) * 10.0)
    assert [p[0].tolist() for p in parts] == [[1, 4], [3], [0, 2, 5], []]
    assert [p[1].tolist() for p in parts] == [[10.0, 40.0], [30.0], [0.0, 20.0, 50.0], []]

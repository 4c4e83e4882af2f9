"""Exact neighbours of every row of a chunked array, by cells of space and halo rows: the steps of the
Dask backend's ``map_near`` (its tasks; the graph is built in :mod:`~spectral_leverage.backends.dask`).

Cells are the leaves of a k-d partition (median splits along the widest axis) of evenly spaced
rows, in the coordinates ``rescale(X)`` where distances are measured: axis-aligned boxes, the outer
ones unbounded, with about :func:`rows_per_cell` rows each. Each chunk splits its rows by cell
(:func:`split_chunk`), each cell gathers its pieces (:func:`gather_cell`) and queries its own rows:
the distance :math:`r_i` of row i to its (k+1)-th nearest row of the cell (itself included) bounds
that to its (k+1)-th nearest row of X. A row j of another cell c' can be one of those only if
:math:`\\lVert z_i - z_j \\rVert \\le r_i`, hence only if the box of c' lies within :math:`r_i` of
:math:`z_i`: those rows i are queried against c' (:func:`halo`), and the k + 1 nearest they find in
c' are the halo rows c' lends. The k + 1 nearest of each row among its cell's rows and their halo
rows (:func:`near_cell`) are then its k + 1 nearest in X: the same rows as one query over all of X
but for ties at the k-th distance (rows at one distance from the query, or duplicates of one
point), so the near blocks agree to rounding.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ._neighbours import label_blocks, nearest_in, self_first

__all__ = ["Cells", "GroupCells", "box_distance", "gather_cell", "halo", "in_reach", "near_cell", "place",
           "rows_per_cell", "sample_rows", "split_by", "split_chunk", "split_result"]

#: evenly spaced rows per cell in the sample the cells are split from (at least SAMPLE_MIN in all)
SAMPLE_PER_CELL = 64
SAMPLE_MIN = 4096
#: relative slack on the reach r_i: rounding can only add a cell to search, never miss one
REACH_SLACK = 1e-9


def rows_per_cell(k: int, d: int, memory_budget: float) -> int:
    """Rows of a cell whose rows, halo (taken as large again) and candidates fit half of
    ``memory_budget`` (its near blocks take the other half: :func:`near_cell`), at about
    ``16 (k+1) (d+2) + 16 (2d + 2)`` bytes a row (the candidates' distances, ids and rows, and their
    near blocks' copies; the rows, ids, coordinates and reach of the cell and halo). At least k + 1."""
    per_row = 16.0 * (k + 1) * (d + 2) + 16.0 * (2 * d + 2)
    return max(k + 1, int(memory_budget / 2 // per_row))


def sample_rows(n: int, n_cells: int) -> np.ndarray:
    """Evenly spaced row ids (sorted) the cells are split from."""
    size = min(n, max(SAMPLE_MIN, SAMPLE_PER_CELL * n_cells))
    return np.unique(np.linspace(0, n - 1, size).round().astype(np.intp))


@dataclass(frozen=True)
class Cells:
    """A k-d partition of space: node ``i`` splits on ``axis[i]`` at ``threshold[i]`` (rows below
    go to ``child[i, 0]``, the others to ``child[i, 1]``) or is the leaf of cell ``leaf[i]``
    (``axis[i] = -1``); cell c is the box ``[low[c], high[c]]``."""

    axis: np.ndarray
    threshold: np.ndarray
    child: np.ndarray
    leaf: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @classmethod
    def from_sample(cls, Z: np.ndarray, n_cells: int) -> Cells:
        """About ``n_cells`` cells holding equal shares of the rows ``Z`` (fewer where a box holds
        fewer than two distinct sample rows)."""
        nodes, boxes = [], []  # nodes: [axis, threshold, left, right, leaf]

        def build(rows: np.ndarray, count: int, low: np.ndarray, high: np.ndarray) -> int:
            node = len(nodes)
            nodes.append([-1, np.nan, -1, -1, -1])
            sub = Z[rows]
            spread = sub.max(axis=0) - sub.min(axis=0) if len(sub) else np.zeros(Z.shape[1])
            if count == 1 or not np.any(spread > 0):
                nodes[node][4] = len(boxes)
                boxes.append((low, high))
                return node
            axis = int(np.argmax(spread))
            below = count // 2
            values = np.sort(sub[:, axis])
            threshold = values[len(values) * below // count]
            left = sub[:, axis] < threshold
            high_left, low_right = high.copy(), low.copy()
            high_left[axis] = low_right[axis] = threshold
            nodes[node][:4] = [axis, threshold,
                               build(rows[left], below, low, high_left),
                               build(rows[~left], count - below, low_right, high)]
            return node

        d = Z.shape[1]
        build(np.arange(len(Z)), max(1, n_cells), np.full(d, -np.inf), np.full(d, np.inf))
        table = np.array(nodes, dtype=float).reshape(-1, 5)
        low, high = (np.array([box[i] for box in boxes]) for i in (0, 1))
        return cls(table[:, 0].astype(np.intp), table[:, 1], table[:, 2:4].astype(np.intp),
                   table[:, 4].astype(np.intp), low, high)

    @property
    def count(self) -> int:
        return len(self.low)

    def locate(self, Z: np.ndarray) -> np.ndarray:
        """The cell of each row of ``Z`` (coordinates of the partition)."""
        node = np.zeros(len(Z), dtype=np.intp)
        inner = np.flatnonzero(self.axis[node] >= 0)
        while len(inner):
            at = node[inner]
            above = Z[inner, self.axis[at]] >= self.threshold[at]
            node[inner] = self.child[at, above.astype(np.intp)]
            inner = inner[self.axis[node[inner]] >= 0]
        return self.leaf[node]


def box_distance(Z: np.ndarray, low: np.ndarray, high: np.ndarray, upper: np.ndarray | None = None
                 ) -> np.ndarray:
    """Euclidean distance of each point ``Z`` (or box ``[Z, upper]``) to the box ``[low, high]``
    (bounds may be infinite; arrays broadcast over all but the last axis): a lower bound on the
    distance of the point (any point of the box) to any row in ``[low, high]``."""
    gap = np.maximum(np.maximum(low - (Z if upper is None else upper), Z - high), 0.0)
    return np.sqrt(np.sum(gap * gap, axis=-1))


def split_by(key: np.ndarray, parts: int, *arrays: np.ndarray) -> tuple:
    """``arrays`` (sharing their first axis) split into ``parts`` groups by ``key`` in
    ``range(parts)``: a tuple of ``parts`` tuples, rows in their order within each group."""
    order = np.argsort(key, kind="stable")
    bounds = np.searchsorted(key[order], np.arange(parts + 1))
    return tuple(tuple(a[order[lo:hi]] for a in arrays) for lo, hi in itertools.pairwise(bounds))


def split_chunk(block: np.ndarray, offset: int, count: int, where) -> tuple:
    """A chunk's (row ids, rows) split into ``count`` cells by ``where(block)`` (rows ``offset + i``
    of X)."""
    return split_by(where(block), count, offset + np.arange(len(block)), block)


class GroupCells:
    """The cell of each row: that of its group's anchor (``groups.anchors[label]``), so that the rows
    of a group share one cell."""

    def __init__(self, cells: Cells, groups, rescale):
        self.groups, self.anchor_cell = groups, cells.locate(rescale(groups.anchors))

    def __call__(self, block: np.ndarray) -> np.ndarray:
        return self.anchor_cell[self.groups(block)]


def gather_cell(k: int, rescale, pieces: list) -> tuple:
    """A cell from its pieces of every chunk: (row ids, rows, reach, (rows, lower and upper corner of
    the rows' bounding box in the coordinates ``rescale(.)``)).

    The reach of a row is its distance to its (k+1)-th nearest row of the cell (infinite in a cell
    of at most k rows). A cell's rows need not lie in its box of the partition (a group's rows go to
    the cell of its anchor): the cells' own bounding boxes say which rows can be neighbours.
    """
    ids = np.concatenate([p[0] for p in pieces])
    rows = np.concatenate([p[1] for p in pieces])
    if len(rows) <= k:
        reach = np.full(len(rows), np.inf)
    else:
        reach = nearest_in(rows, rows, k + 1, rescale)[0][:, -1] * (1 + REACH_SLACK)
    Z = rescale(rows)
    extent = (Z.min(axis=0), Z.max(axis=0)) if len(rows) else (None, None)
    return ids, rows, reach, (len(rows), *extent)


def in_reach(c: int, cell: tuple, low: np.ndarray, high: np.ndarray, rescale) -> np.ndarray:
    """The other cells whose bounding box (``low``, ``high``: (cells, d), of their rows) lies within the
    reach of one of the rows of ``cell`` (the c-th, from :func:`gather_cell`)."""
    _, rows, reach = cell[:3]
    Z = rescale(rows)
    # the boxes within the largest reach of the rows' bounding box, then row by row
    maybe = np.flatnonzero(box_distance(Z.min(axis=0), low, high, Z.max(axis=0)) <= reach.max())
    return np.array([o for o in maybe if o != c and np.any(box_distance(Z, low[o], high[o]) <= reach)],
                    dtype=np.intp)


def halo(cell: tuple, other: tuple, low: np.ndarray, high: np.ndarray, k: int, rescale) -> tuple:
    """The (row ids, rows) of cell ``other`` among the k + 1 nearest of the rows of ``cell`` (both
    from :func:`gather_cell`) whose reach meets the bounding box ``[low, high]`` of ``other``'s rows."""
    _, rows, reach = cell[:3]
    reaching = box_distance(rescale(rows), low, high) <= reach
    if not reaching.any():
        return other[0][:0], other[1][:0]
    found = np.unique(nearest_in(rows[reaching], other[1], k + 1, rescale)[1])
    return other[0][found], other[1][found]


def near_cell(cell: tuple, halos: list, k: int, rescale, groups, sizes: tuple, func, *args) -> tuple:
    """(row ids, ``func`` on their near blocks) of a cell: the k + 1 nearest of each row among the
    cell's rows and its ``halos`` (:func:`halo`), the rows ordered by their label ``groups(rows)``
    (then by row) and handed over in blocks of whole labels of ``sizes`` = (bytes per row, budget),
    as the in-memory backend does."""
    ids, rows = cell[:2]
    known = np.concatenate([ids] + [h[0] for h in halos])
    _, found, points = nearest_in(rows, np.concatenate([rows] + [h[1] for h in halos]), k + 1, rescale)
    found = known[found]
    keep = self_first(found, ids, k)
    b, d = rows.shape
    near = np.column_stack([ids, found[keep].reshape(b, k)])
    points = np.concatenate([rows[:, None, :], points[keep].reshape(b, k, d)], axis=1)
    labels = groups(rows)
    out = np.empty(b)
    for block in label_blocks(labels, ids, *sizes):
        out[block] = func(points[block], near[block], labels[block], *args)
    return ids, out


def split_result(result: tuple, offsets: np.ndarray) -> tuple:
    """A cell's (row ids, values) split by the chunks starting at rows ``offsets``."""
    ids, values = result
    return split_by(np.searchsorted(offsets, ids, side="right") - 1, len(offsets), ids, values)


def place(offset: int, size: int, pieces: list) -> np.ndarray:
    """A chunk of the result (rows ``offset`` to ``offset + size``) from its (row ids, values) pieces."""
    out = np.empty(size)
    for ids, values in pieces:
        out[ids - offset] = values
    return out

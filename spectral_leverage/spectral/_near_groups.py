"""The full-scale leverage's near field, row by row: the rows grouped by their nearest anchor
(:class:`AnchorGroups`), each group split into parts whose near blocks share one block
(:func:`split_group`), consecutive parts in runs whose factor rows are made once
(:func:`sharing_runs`), and the function mapped over the rows handed over with their neighbours
(:func:`near_leverage`, the same on every backend), which scores each run's blocks with
:meth:`~._conditional.NearField.leverage`.
"""

from __future__ import annotations

import numpy as np
from pykdtree.kdtree import KDTree
from scipy.spatial import cKDTree

from ._conditional import NearField

__all__ = ["AnchorGroups", "near_leverage", "sharing_runs", "split_group"]


class AnchorGroups:
    """Labels of rows: the nearest of the ``anchors`` (the pivots' rows, or evenly spaced rows of their
    subsample where the pivots are sparse; in the kernel's unit-length coordinates ``rescale``), the
    groups of rows whose near blocks share one factorisation (:func:`near_leverage`); the anchors
    place each group (on Dask, in the cell of its anchor)."""

    def __init__(self, anchors: np.ndarray, rescale):
        # labelled in a k-d tree's leaf order, so that groups of consecutive labels lie together and
        # the rows handed over at once share most of their near blocks' rows (their factor rows made
        # once)
        self.anchors = anchors[cKDTree(rescale(anchors)).indices]
        self.rescale = rescale

    def __call__(self, X: np.ndarray) -> np.ndarray:
        _, nearest = KDTree(self.rescale(self.anchors)).query(self.rescale(X), k=1)
        return nearest.astype(np.intp).ravel()


def near_leverage(points: np.ndarray, near: np.ndarray, labels: np.ndarray, near_field: NearField,
                  group_rows: int, block_rows: int, factor_bytes: float) -> np.ndarray:
    """Leverage of the first row of each near block (``points`` (b, k+1, d), row ids ``near``, the
    rows sorted by their group ``labels``): the rows of a group share one block, their own rows
    and their k nearest (:class:`AnchorGroups`, at most ``group_rows`` rows a group and
    ``block_rows`` in its block). The factor rows F of the blocks' distinct rows are made once for
    runs of consecutive parts (:func:`sharing_runs`) within ``factor_bytes``: all of it where F is
    kept, else three quarters, a quarter for the kernel rows they are made from; the run's blocks
    are then scored together (:meth:`NearField.leverage`, its batches within ``factor_bytes``
    again)."""
    starts = np.unique(labels, return_index=True)[1]  # labels sorted: where each group starts
    parts = [part for group in np.split(np.arange(len(near)), starts[1:])
             for part in split_group(group, near_field.spec.rescale(points[group, 0]), near[group],
                                     group_rows, block_rows)]
    made = near_field.kept is None  # then a quarter of factor_bytes for the kernel rows
    most = max(1, int((0.75 if made else 1.0) * factor_bytes // (8.0 * near_field.factor.rank)))
    out = np.empty(len(near))
    for run in sharing_runs(parts, near, most):
        held = np.concatenate(run)
        every, first, local = np.unique(near[held], return_index=True, return_inverse=True)
        local = local.reshape(len(held), -1)  # where each near block's rows are among the run's
        rows = points[held].reshape(-1, points.shape[-1])[first]
        F = near_field.factor_rows(rows, every, factor_bytes / 4)  # once for the rows of the run
        counts = [len(part) for part in run]
        scored = near_field.leverage(rows, F, _run_blocks(local, counts), counts, factor_bytes)
        for part, leverage in zip(run, scored, strict=True):
            out[part] = leverage
    return out


def _run_blocks(local: np.ndarray, counts: list) -> list:
    """Each part's block: the distinct rows (ids into the run's) that its rows' near blocks
    ``local`` (the run's rows, part by part, ``counts`` rows each) reach, in ascending order, with
    its members (the part's own rows, the first of each near block, in order) taken out and put
    last. For the whole run at once: (part, row) pairs as one integer each."""
    width = int(local.max()) + 1
    owner = np.repeat(np.arange(len(counts)), counts)
    own = owner * width + local[:, 0]  # the members, in order
    rest = np.setdiff1d(np.unique(owner[:, None] * width + local), own, assume_unique=True)
    pairs = np.concatenate([rest, own])
    order = np.lexsort((np.arange(len(pairs)) >= len(rest), pairs // width))  # stable: in order within
    return np.split(pairs[order] % width, np.cumsum(counts)[:-1] + np.cumsum(
        np.bincount(rest // width, minlength=len(counts)))[:-1])


def sharing_runs(parts: list, near: np.ndarray, most: int):
    """Yield runs of consecutive ``parts`` (positions into the near blocks' row ids ``near``) whose
    blocks reach at most ``most`` distinct rows together, a part reaching more alone: the rows a
    run's factor rows are made for. Counted, not estimated: how many a run reaches depends on the
    dimension (n = 8000 standard normal rows, λ = 1/n, Matérn 3/2 at ℓ = 0.3 and 1: 1.9 distinct
    rows a row in runs of 2000 rows in 3-D, 9.7 in runs of 220 rows in 8-D)."""
    local = np.unique(near, return_inverse=True)[1].reshape(near.shape)
    seen = np.zeros(local.size and int(local.max()) + 1, dtype=bool)
    run, reached = [], 0
    for part in parts:
        ids = np.unique(local[part])
        new = ids[~seen[ids]]
        if run and reached + len(new) > most:
            yield run
            seen[:] = False
            run, reached, new = [], 0, ids
        seen[new] = True
        run.append(part)
        reached += len(new)
    if run:
        yield run


def split_group(group: np.ndarray, points: np.ndarray, near: np.ndarray, group_rows: int,
                block_rows: int) -> list:
    """``group`` (positions of rows at ``points`` with near blocks ``near``) in parts of at most
    ``group_rows`` rows whose near blocks hold at most ``block_rows`` distinct rows (a part of one
    row excepted): halves split at the median of the widest coordinate (stable, so the same parts
    for the same rows in the same order on every backend)."""
    if len(group) == 1 or (len(group) <= group_rows and (near.size <= block_rows  # so at most that many
                                                         or len(np.unique(near)) <= block_rows)):
        return [group]
    j = np.argmax(np.ptp(points, axis=0))
    order = np.argsort(points[:, j], kind="stable")
    half = len(group) // 2
    return [part for side in (order[:half], order[half:])
            for part in split_group(group[side], points[side], near[side], group_rows, block_rows)]

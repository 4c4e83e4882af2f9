"""Each row with its k nearest other rows: the near blocks of the full-scale leverage, found the same
way on every backend.

A query returns the k + 1 nearest rows (the row itself among them, unless k other rows lie at
distance zero); :func:`self_first` puts the row in front and keeps k others. On a Dask array the
k + 1 nearest of each row chunk are found in every chunk, and the candidate lists are merged
(:func:`merge`: the k + 1 of smallest distance, a stable sort): the same rows as one query over all
of X but for ties at the k-th distance, which are rows at one distance from the query (and, for
duplicates, the same point), so the near blocks agree to rounding.
"""

from __future__ import annotations

import numpy as np
from pykdtree.kdtree import KDTree

__all__ = ["merge", "nearest_in", "self_first", "whole_groups"]


def nearest_in(query: np.ndarray, data: np.ndarray, offset: int, k: int, rescale) -> tuple:
    """(distances (b, k'), row ids (b, k'), the rows (b, k', d)) of the k' = min(k, len(data)) rows of
    ``data`` (rows ``offset + i`` of X) nearest to each row of ``query``, in the coordinates
    ``rescale(.)``, nearest first."""
    k = min(k, data.shape[0])
    distance, found = KDTree(rescale(data)).query(rescale(query), k=k)
    found = found.astype(np.intp).reshape(query.shape[0], k)
    return distance.reshape(query.shape[0], k), found + offset, data[found]


def merge(a: tuple, b: tuple, k: int) -> tuple:
    """The k nearest of two candidate lists of :func:`nearest_in` (a's first among equal distances)."""
    distance, ids, rows = (np.concatenate(pair, axis=1) for pair in zip(a, b, strict=True))
    keep = np.argsort(distance, axis=1, kind="stable")[:, :k]
    return tuple(np.take_along_axis(v, keep.reshape(keep.shape + (1,) * (v.ndim - 2)), axis=1)
                 for v in (distance, ids, rows))


def self_first(found: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """(b, k) mask of the columns of ``found`` (b, k+1 ids of the nearest rows of each of ``rows``)
    that are its k neighbours: the row itself dropped where the query returned it (not always first
    among duplicates), else the farthest."""
    is_self = found == rows[:, None]
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), k)
    keep = np.ones_like(found, dtype=bool)
    keep[np.arange(len(rows)), drop] = False
    return keep


def whole_groups(labels: np.ndarray, blocks):
    """The slices ``blocks`` (consecutive, covering the sorted ``labels``) with each end moved on to
    the next change of label, so that no label is split between two slices (empty ones dropped)."""
    change = np.append(np.flatnonzero(labels[1:] != labels[:-1]) + 1, len(labels))
    start = 0
    for block in blocks:
        stop = int(change[np.searchsorted(change, block.stop)])
        if stop > start:
            yield slice(start, stop)
            start = stop

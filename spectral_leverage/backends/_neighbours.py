"""Each row with its k nearest other rows: the near blocks of the full-scale leverage, found the same
way on every backend.

A query returns the k + 1 nearest rows (the row itself among them, unless k other rows lie at
distance zero); :func:`self_first` puts the row in front and keeps k others. In memory one query
runs over all of X; on a Dask array one per cell of space, over the cell's rows and the halo rows
its neighbouring cells lend it (:mod:`~spectral_leverage.backends._cells`).
"""

from __future__ import annotations

import numpy as np
from pykdtree.kdtree import KDTree

from .._blocks import row_chunks

__all__ = ["label_blocks", "nearest_in", "self_first", "whole_groups"]


def nearest_in(query: np.ndarray, data: np.ndarray, k: int, rescale) -> tuple:
    """(distances (b, k'), indices in ``data`` (b, k'), the rows (b, k', d)) of the k' = min(k, len(data))
    rows of ``data`` nearest to each row of ``query``, in the coordinates
    ``rescale(.)``, nearest first."""
    k = min(k, data.shape[0])
    distance, found = KDTree(rescale(data)).query(rescale(query), k=k)
    found = found.astype(np.intp).reshape(query.shape[0], k)
    return distance.reshape(query.shape[0], k), found, data[found]


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


def label_blocks(labels: np.ndarray, ids: np.ndarray, bytes_per_row: float, budget: float) -> list:
    """Positions of the rows of ``labels``, ordered by label and then by row id ``ids``, in blocks of
    whole labels (:func:`whole_groups`) of about ``bytes_per_row`` each within ``budget``: the same
    blocks on every backend for the same rows."""
    order = np.lexsort((ids, labels))
    chunks = row_chunks(len(labels), bytes_per_row, budget)
    return [order[part] for part in whole_groups(labels[order], chunks)]

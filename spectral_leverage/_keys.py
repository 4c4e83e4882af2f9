"""Subsamples drawn by one key a row: the rows of the smallest keys, as common random numbers.

A row's key does not depend on n, so a row appended to the data leaves every other row's
membership as it was but for the one it may displace, and the ``k`` smallest keys of a subsample
are the subsample of size ``k`` (nested subsamples). The anchors of the density estimates
(:func:`spectral_leverage.density._anchor_draw`) and the pivots' row subsample
(:func:`spectral_leverage.pivoted_cholesky.subsample_pivots`) are drawn so. The keys are drawn
:data:`KEY_CHUNK` at a time and the smallest kept: a subsample of a Dask array of 10^8 rows held
800 MB of keys at once.
"""

from __future__ import annotations

import numpy as np

__all__ = ["KEY_CHUNK", "smallest_drawn", "smallest_keys"]

#: Keys drawn at a time (8 bytes each) while the smallest are kept.
KEY_CHUNK = 2**20


def smallest_keys(keys: np.ndarray, size: int) -> np.ndarray:
    """Sorted positions of the ``size`` smallest of ``keys`` (all of them where there are fewer)."""
    if size >= keys.shape[0]:
        return np.arange(keys.shape[0])
    return np.sort(np.argpartition(keys, size - 1)[:size])


def smallest_drawn(stream: np.random.Generator, n: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, keys): the sorted rows of the ``size`` smallest of n keys ``stream.random(n)`` and
    their keys, in that order; the keys drawn :data:`KEY_CHUNK` at a time (the same numbers, and
    ``stream`` left in the same state, as one draw of n)."""
    rows, keys = np.empty(0, dtype=np.intp), np.empty(0)
    for start in range(0, n, KEY_CHUNK):
        more = stream.random(min(KEY_CHUNK, n - start))
        rows = np.concatenate([rows, np.arange(start, start + more.shape[0])])
        keys = np.concatenate([keys, more])
        kept = smallest_keys(keys, size)
        rows, keys = rows[kept], keys[kept]
    return rows, keys

"""Drawing rows with probability proportional to their scores by a two-level inverse CDF.

The scores are cut into segments of ``SEGMENT`` rows; a draw first picks a segment from the
segments' totals, then the row inside it. Sequential summation makes each total depend only on its
segment's values, so an array held in pieces (a Dask array cut at segment boundaries) gives
bit-identical totals, and both backends draw the same rows from the same uniforms.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SEGMENT", "locate", "segment_totals", "split_draws"]

SEGMENT = 2**16  # rows per segment


def segment_totals(scores: np.ndarray) -> np.ndarray:
    """Left-to-right sums of consecutive segments of ``SEGMENT`` scores."""
    return np.array([np.add.accumulate(scores[start:start + SEGMENT])[-1]
                     for start in range(0, scores.shape[0], SEGMENT)])


def split_draws(totals: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First level: for uniforms ``u`` in [0, 1), the segment each draw falls in and the mass left
    to walk inside it."""
    cumulative = np.cumsum(totals)
    target = u * cumulative[-1]
    last = np.flatnonzero(totals > 0)[-1]  # rounding can reach the end: stay on positive mass
    segment = np.minimum(np.searchsorted(cumulative, target, side="right"), last)
    residual = target - np.where(segment > 0, cumulative[segment - 1], 0.0)
    return segment, residual


def locate(scores: np.ndarray, first_segment: int, segment: np.ndarray,
           residual: np.ndarray) -> np.ndarray:
    """Second level: the row of each draw within ``scores``, which starts at segment
    ``first_segment`` (rows relative to ``scores[0]``). Zero scores are never drawn."""
    out = np.empty(segment.shape[0], dtype=np.intp)
    for seg in np.unique(segment):
        start = (int(seg) - first_segment) * SEGMENT
        values = scores[start:start + SEGMENT]
        draws = segment == seg
        row = np.searchsorted(np.add.accumulate(values), residual[draws], side="right")
        out[draws] = start + np.minimum(row, np.flatnonzero(values > 0)[-1])
    return out

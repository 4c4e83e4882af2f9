"""Accuracy of approximate leverage scores against exact ones (Chen & Yang 2021, §4.2), and of
approximate neighbours against exact ones (:func:`neighbour_recall`).

With :math:`q` the approximate and :math:`p` the exact sampling probabilities (each normalised to
sum 1), the relative accuracy of point i is :math:`\\mathrm{R\\text{-}ACC}_i = q_i / p_i`: 1 is
perfect, below 1 the point is under-sampled, above 1 over-sampled.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

__all__ = ["neighbour_recall", "relative_accuracy", "score_accuracy"]


def _check_pair(approx, exact) -> tuple[np.ndarray, np.ndarray]:
    approx, exact = np.asarray(approx, dtype=float), np.asarray(exact, dtype=float)
    if approx.ndim != 1 or approx.shape != exact.shape or approx.size == 0:
        raise ValueError(
            f"approx and exact must be non-empty 1-D arrays of equal length; got shapes "
            f"{approx.shape} and {exact.shape}."
        )
    for name, v in (("approx", approx), ("exact", exact)):
        if not np.all(np.isfinite(v)) or np.any(v <= 0):
            raise ValueError(f"{name} scores must be finite and > 0.")
    return approx, exact


def relative_accuracy(approx, exact) -> np.ndarray:
    """Per-point R-ACC :math:`q_i/p_i` of two score vectors (any positive scale each).

    Examples
    --------
    >>> relative_accuracy([1.0, 3.0], [2.0, 2.0])
    array([0.5, 1.5])
    """
    approx, exact = _check_pair(approx, exact)
    return (approx / approx.sum()) / (exact / exact.sum())


def score_accuracy(approx, exact) -> dict[str, float]:
    """Summary of approximate scores against exact ones.

    Returns
    -------
    summary : dict of str to float
        ``mean``, ``p05``, ``p95`` (of R-ACC), ``spearman`` (rank correlation) and ``scale``
        (``sum(approx) / sum(exact)``: 1 when both are on the same absolute scale, e.g. the ratio
        of effective dimensions when both are :math:`n\\,l_i`).

    Examples
    --------
    >>> score_accuracy([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])["mean"]
    1.0
    """
    approx, exact = _check_pair(approx, exact)
    racc = relative_accuracy(approx, exact)
    p05, p95 = np.percentile(racc, [5, 95])
    return {
        "mean": float(racc.mean()),
        "p05": float(p05),
        "p95": float(p95),
        "spearman": float(spearmanr(approx, exact).statistic),
        "scale": float(approx.sum() / exact.sum()),
    }


def neighbour_recall(found, exact) -> float:
    """Recall of approximate neighbours: the share of each row's exact neighbours found, averaged
    over the rows.

    Parameters
    ----------
    found : array_like of int, shape (b, k')
        Row ids an approximate search returned for b queries.
    exact : array_like of int, shape (b, k)
        The exact k nearest row ids of the same queries (order within a row does not matter).

    Returns
    -------
    recall : float in [0, 1]

    Examples
    --------
    >>> neighbour_recall([[0, 1, 2], [3, 4, 9]], [[2, 1, 0], [3, 4, 5]])
    0.8333333333333334
    """
    found, exact = np.asarray(found), np.asarray(exact)
    for name, ids in (("found", found), ("exact", exact)):
        if ids.ndim != 2 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"{name} must be a non-empty 2-D array of integer row ids, got shape "
                             f"{ids.shape} and dtype {ids.dtype}.")
    if found.shape[0] != exact.shape[0]:
        raise ValueError(f"found and exact must have one row per query each; got {found.shape[0]} "
                         f"and {exact.shape[0]} rows.")
    hits = (exact[:, :, None] == found[:, None, :]).any(axis=2)
    return float(hits.mean())

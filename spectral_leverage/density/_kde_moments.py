r"""The gradient and curvature of a Gaussian log-KDE at query points in whitened coordinates, from
their kernel terms against the anchors: the direct KDE's moments (the formulas are in
:mod:`spectral_leverage.density.tree`). :func:`log_kde_moments` in float64: the second moments
are of size about :math:`\lVert a \rVert^2` (bandwidths from the anchors' mean), and their variance
loses about 1e-16 of that; :func:`log_kde_slope` in the kernel terms' precision.
"""

from __future__ import annotations

import numpy as np

__all__ = ["anchor_powers", "left_out_moments", "log_kde_moments", "log_kde_slope"]


def anchor_powers(anchors: np.ndarray) -> np.ndarray:
    """The centred anchors' coordinates and their pairwise products :math:`a_i a_j`, i <= j, as
    columns, shape (m, d + d(d+1)/2): one matrix product with the kernel terms gives the weighted
    first and second moments (:func:`log_kde_moments`)."""
    upper = np.triu_indices(anchors.shape[1])
    return np.hstack([anchors, anchors[:, upper[0]] * anchors[:, upper[1]]])


def _gradient(mean: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gradient :math:`E_t[a] - w`, its norm, its direction (0 where the norm is))."""
    gradient = mean - query
    norm = np.sqrt(np.einsum("ij,ij->i", gradient, gradient))
    return gradient, norm, gradient / np.where(norm > 0, norm, 1.0)[:, None]


def log_kde_slope(terms: np.ndarray, total: np.ndarray, query: np.ndarray, anchors: np.ndarray,
                  anchors_t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""(gradient (k, d), curvature along it (k,)) at k centred queries, as :func:`log_kde_moments`
    without the Hessian: the curvature from the anchors' projections on the gradient's direction
    (2md flops a query where the second moments take md(d+1)); ``anchors`` (m, d) centred,
    ``anchors_t`` their transpose, both of the terms' dtype: in float32 the gradient and the
    curvature carry about the log-density's error, :math:`\epsilon_{32} (\lVert w \rVert + r) r`
    (:mod:`spectral_leverage.density.tree`; r the anchors' largest norm)."""
    mean = (terms @ anchors) / total[:, None]  # E_t[a]
    gradient, norm, direction = _gradient(mean, query)
    projection = direction.astype(terms.dtype) @ anchors_t  # u·a, (k, m)
    projection *= projection
    along = (np.einsum("ij,ij->i", terms, projection) / total
             - np.einsum("ij,ij->i", direction, mean) ** 2 - 1.0)
    return gradient, np.where(norm > 0, along, 0.0)


def log_kde_moments(terms: np.ndarray, total: np.ndarray, query: np.ndarray,
                    powers: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gradient (k, d), curvature along it (k,), Hessian's upper triangle (k, d(d+1)/2)) at k
    centred queries, from their kernel terms (k, m) with row sums ``total`` and the anchors'
    :func:`anchor_powers`."""
    d = query.shape[1]
    moments = (terms @ powers) / total[:, None]  # E_t[a], E_t[a_i a_j]
    mean, second = moments[:, :d], moments[:, d:]
    gradient, norm, direction = _gradient(mean, query)
    upper = np.triu_indices(d)
    # the Hessian Cov_t[a] - I: E_t[a_i a_j] - E_t[a_i] E_t[a_j] - [i = j]
    second -= mean[:, upper[0]] * mean[:, upper[1]]
    second[:, upper[0] == upper[1]] -= 1.0
    pairs = direction[:, upper[0]] * direction[:, upper[1]] * np.where(upper[0] == upper[1], 1.0, 2.0)
    along = np.einsum("ij,ij->i", pairs, second)  # ĝᵀ H ĝ
    return gradient, np.where(norm > 0, along, 0.0), second


def left_out_moments(total: np.ndarray, gradient: np.ndarray,
                     along: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""(change of the log-KDE, gradient, curvature along it, kept) at k anchors without their own
    kernel term, from the full KDE's: ``total`` (k,) the anchor's kernel terms summed, its own
    being 1, ``gradient`` (k, d) and ``along`` (k,). With :math:`r = T / (T - 1)` the log-KDE
    changes by :math:`-\log r` (the mean over the same m anchors), the gradient becomes
    :math:`r\,g` (the own term's offset is 0) and the curvature along it
    :math:`r\,(c + 1 + \lVert g\rVert^2) - r^2 \lVert g\rVert^2 - 1` (second moments about the
    anchor). ``kept`` is False where the others hold under 1e-6 of :math:`T`: there
    :math:`T - 1` has lost its digits (evaluate those directly)."""
    rest = total - 1.0
    kept = rest >= 1e-6 * total
    ratio = total / np.where(kept, rest, 1.0)
    square = np.einsum("ij,ij->i", gradient, gradient)
    bend = np.where(square > 0, ratio * (along + 1.0 + square) - ratio**2 * square - 1.0, 0.0)
    return -np.log(ratio), gradient * ratio[:, None], bend, kept

r"""Intrinsic dimension of the inputs from nearest-neighbour distances.

Real inputs rarely fill :math:`R^d`: they lie near a set of lower dimension :math:`d'`. An isotropic
Matérn or Gaussian kernel restricted to a :math:`d'`-dimensional linear subspace is the same kernel
in :math:`d'` dimensions, so the spectral-analysis scores should use :math:`d'` both in the density
(volume :math:`\propto r^{d'}`) and in the polar integral (:mod:`spectral_leverage.spectral.quadrature`).

Estimator: Levina & Bickel's maximum-likelihood estimate (NeurIPS 2004) with MacKay & Ghahramani's
correction (average the inverse of the per-point estimates), averaged over a range of neighbourhood
sizes :math:`k_1 \le k \le k_2`. With :math:`T_j(x)` the distance from :math:`x` to its j-th
nearest neighbour and :math:`x_i` up to ``max_queries`` points,

.. math::

    \hat m_k = \Big[\frac{1}{n}\sum_i \frac{1}{k-1}\sum_{j<k} \log\frac{T_k(x_i)}{T_j(x_i)}\Big]^{-1},
    \qquad \hat d' = \frac{1}{k_2 - k_1 + 1}\sum_{k=k_1}^{k_2} \hat m_k .

The range defaults to :math:`k \in [50, 100]`: the scale just above the k-NN density's own
neighbourhood (k = 50). Smaller neighbourhoods see measurement noise as extra dimensions (a cube
embedded in :math:`R^8` with noise 0.01 reads 3.7 at k = 10..20, 3.1 at k = 50..100). Larger ones,
in a small sample, reach its boundary from most points, where the estimate reads low: so
:math:`k_2` is at most a 40th of the (distinct, subsampled) points but at least 10, and
:math:`k_1` at most half of :math:`k_2` (:math:`k \in [50, 100]` from 4000 points on). With 50–100
neighbours a uniform 3-D cube of 1000 points read 2.69 and the 3-D bimodal design 2.44; with
12–25 they read 2.84 and 2.79, as at 4000 points (the noisy cube above reads 3.0 at 1000 points).
Duplicated
points are removed first (zero distances carry no scale information; a 2-nearest-neighbour query
finds them, and the sort that removes them runs only then).

The neighbours come from the whole subsample (the scale of the neighbourhoods is set by its size,
``max_samples``), but the average over points needs far fewer than that many: the per-point terms
have a relative spread of about :math:`1/\sqrt{k}`, so 2048 of them fix the mean to a few parts in
a thousand, and querying them costs an eighth of querying all 16384. They are evenly spread over
the subsample's rows, which keep the data's order (random rows of it when n > ``max_samples``), so
reordering the data can move the estimate by that much.

**Flatness of the neighbourhoods.** The estimate reads low on full-dimensional data too: from a
point near a face of the support the neighbours thin out as k grows, and in higher d most points
are near a face (at n = 4000 a uniform cube reads 2.8 in 3-D, 4.4 in 5-D, 6.6 in 8-D, 0.94–0.83
of d). The shape of the neighbourhoods tells the two apart: near a :math:`d'`-dimensional set the
k nearest neighbours spread along :math:`d'` directions and hardly at all across them, while at a
face, or a corner, a neighbourhood keeps some spread in every direction. With
``return_flatness=True`` the estimate comes with the median, over the queried points, of
:math:`\lambda_{\min} / \bar\lambda` of the covariance of each point's :math:`k_2` nearest
neighbours (the point included; smallest over mean eigenvalue), divided by the same median on as
many uniform points of :math:`[0, 1]^d` (one fixed sample per size and dimension, so the ratio
allows for the eigenvalues' sampling spread and for the faces). It reads 0.96–1.37 on uniform,
Gaussian and bimodal data in 3–8 dimensions at 500–16 000 points, 0.61–0.78 on the CCPP features,
at most 0.15 on a cube in :math:`R^4`–:math:`R^8` with noise 0.01, on a swiss roll and on CASP.
Fewer than 2d neighbours cannot show every direction's spread (the smallest eigenvalue of a
sample covariance of k points in d dimensions is about :math:`(1 - \sqrt{d/k})^2` of the true
one): the flatness is then NaN.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from pykdtree.kdtree import KDTree

from .._validation import check_data, check_samples
from ._row_keys import row_keys
from .bandwidth import _anchor_indices

__all__ = ["intrinsic_dimension"]

#: the neighbourhood sizes never shrink below this (for samples of fewer than 40 times as many points)
MIN_NEIGHBOURS = 10
#: the flatness needs at least this many neighbours per feature (else NaN)
NEIGHBOURS_PER_FEATURE = 2
#: floats in one block of neighbourhoods whose covariances are taken together (2 MiB: the estimate
#: runs inside fits whose memory_budget may be a few MiB)
FLATNESS_BLOCK = 2**18


def intrinsic_dimension(X, *, k_min: int = 50, k_max: int = 100, max_samples: int | None = 2**14,
                        max_queries: int | None = 2**11, random_state=None,
                        return_flatness: bool = False) -> float | tuple[float, float]:
    """Levina–Bickel / MacKay–Ghahramani MLE of the intrinsic dimension, clipped to [1, d].

    Parameters
    ----------
    X : array_like of shape (n, d)
        Distances are Euclidean in these coordinates (pass ``X / length_scale`` to see the
        geometry the kernel sees).
    k_min : int, default=50
        Smallest neighbourhood size averaged over (2 <= k_min <= k_max).
    k_max : int, default=100
        Largest neighbourhood size. For fewer than 40·k_max points it is reduced to a 40th of
        them (at least 10, at most n - 1) and k_min to at most half of it.
    max_samples : int or None, default=16384
        Estimate from a random subsample of at most this many points.
    max_queries : int or None, default=2048
        Average the per-point estimates over at most this many points of the subsample, evenly
        spread over its rows (None: all of them).
    random_state : int, numpy Generator or None
        Seeds the subsample.
    return_flatness : bool, default=False
        Also return the flatness of the neighbourhoods (see the module's docstring): about 1 on
        data that fill :math:`R^d`, near 0 on data near a lower-dimensional set.

    Returns
    -------
    float
        The estimate, in [1, d]; ``d`` itself when fewer than 3 distinct points exist.
    flatness : float
        Only with ``return_flatness``: the smallest local variance relative to uniform data's, from
        the :math:`k_2` nearest neighbours of the queried points; NaN when :math:`k_2 < 2d`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Q, _ = np.linalg.qr(rng.normal(size=(8, 2)))
    >>> plane = rng.normal(size=(4000, 2)) @ Q.T       # a 2-D Gaussian plane inside R^8
    >>> round(intrinsic_dimension(plane), 1)
    2.0
    >>> _, flatness = intrinsic_dimension(plane, return_flatness=True)
    >>> bool(flatness < 1e-6)                          # no spread across the plane
    True
    """
    X = check_data(X, min_samples=1)
    k_min, k_max = check_samples(k_min, "k_min"), check_samples(k_max, "k_max")
    if not 2 <= k_min <= k_max:
        raise ValueError(f"need 2 <= k_min <= k_max, got k_min={k_min}, k_max={k_max}.")
    d = X.shape[1]
    rows = _anchor_indices(X.shape[0], max_samples, random_state)  # the tree KDE's anchors
    if rows is not None:
        X = X[rows]
    if max_queries is not None:
        check_samples(max_queries, "max_queries")
    too_few = (float(d), np.nan) if return_flatness else float(d)
    if X.shape[0] < 3:
        return too_few
    # the estimate is scale-free: on the unit scale the distances' squares neither under- nor overflow
    # (rows of magnitude 1e-150 in the kernel's units had zero distances between distinct rows)
    spread = float(np.max(np.ptp(X, axis=0)))
    X = np.ascontiguousarray(X / spread if spread > 0 else X)
    if np.unique(row_keys(X)).size < X.shape[0]:  # duplicate rows: their zero distances have no log
        X = np.unique(X, axis=0)
        if X.shape[0] < 3:
            return too_few
    tree = KDTree(X)
    # at most a 40th of the points: larger neighbourhoods of a small sample reach its boundary
    k_max = min(k_max, max(MIN_NEIGHBOURS, X.shape[0] // 40))
    dist, neighbours = _neighbours(tree, X, k_max, max_queries)
    log_t = np.log(dist[:, 1:])  # drop the point itself
    k_max = log_t.shape[1]
    k_min = min(k_min, max(2, k_max // 2))
    cumulative = np.cumsum(log_t, axis=1)
    estimates = []
    for k in range(k_min, k_max + 1):
        # (1/(k-1)) Σ_{j<k} log(T_k / T_j) per point, then the inverse of its mean
        inverse = log_t[:, k - 1] - cumulative[:, k - 2] / (k - 1)
        estimates.append(1.0 / inverse.mean())
    estimate = float(np.clip(np.mean(estimates), 1.0, d))
    if not return_flatness:
        return estimate
    if k_max < NEIGHBOURS_PER_FEATURE * d:
        return estimate, np.nan
    return estimate, _flatness(X, neighbours) / _uniform_flatness(X.shape[0], d, k_max, max_queries)


def _neighbours(tree: KDTree, X: np.ndarray, k_max: int,
                max_queries: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Distances and indices of the min(k_max, n - 1) nearest neighbours, the point itself first,
    of up to ``max_queries`` evenly spread rows of X (n >= 3 distinct rows, ``tree`` built on
    them): two arrays of shape (queries, k + 1)."""
    n = X.shape[0]
    k = min(k_max, n - 1)
    queries = X if max_queries is None or max_queries >= n else \
        X[np.linspace(0, n - 1, max_queries).astype(np.intp)]
    dist, index = tree.query(queries, k=k + 1)
    shape = (queries.shape[0], k + 1)
    return dist.reshape(shape), index.reshape(shape).astype(np.intp)


def _flatness(X: np.ndarray, neighbours: np.ndarray) -> float:
    """Median over the rows of ``neighbours`` (indices into X) of the smallest over the mean
    eigenvalue of the covariance of those points of X."""
    per_block = max(1, FLATNESS_BLOCK // (neighbours.shape[1] * X.shape[1]))
    ratios = []
    for start in range(0, neighbours.shape[0], per_block):
        points = X[neighbours[start:start + per_block]]
        points -= points.mean(axis=1, keepdims=True)
        eigenvalues = np.linalg.eigvalsh(np.einsum("qki,qkj->qij", points, points))
        ratios.append(eigenvalues[:, 0] / eigenvalues.mean(axis=1))
    return float(np.median(np.concatenate(ratios)))


@lru_cache(maxsize=16)
def _uniform_flatness(n: int, d: int, k_max: int, max_queries: int | None) -> float:
    """:func:`_flatness` of n uniform points of [0, 1]^d (one fixed sample) with the neighbourhoods
    of the data it is compared with."""
    U = np.random.default_rng(0).uniform(size=(n, d))
    return _flatness(U, _neighbours(KDTree(U), U, k_max, max_queries)[1])

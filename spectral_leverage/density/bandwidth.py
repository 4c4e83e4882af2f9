r"""Bandwidths of the Gaussian KDEs, and the random anchor subsample.

Bandwidth rules act on a per-feature scale :math:`\sigma_j` (i.e. on standardised data) with the
anchor count m: Scott :math:`h_j = \sigma_j m^{-1/(d+4)}`, Silverman
:math:`h_j = \sigma_j (m(d+2)/4)^{-1/(d+4)}`. The scale is the standard deviation of the feature
winsorized at its 0.1 % quantiles where that is smaller (:func:`robust_scale`): the standard
deviation to within a fraction of a per cent, but not inflated by a few far rows, which would
otherwise smooth the density of all the others (one row at 10⁴ beside 20 000 standard normal rows
in 3-D made the standard deviation 70 and moved the other rows' scores by 0.85/1.08/1.38 at the
5th/50th/95th percentile). A float is an isotropic bandwidth in the units of X.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from .._blocks import column_summary
from .._keys import smallest_drawn
from .._validation import check_bandwidth_range, check_random_state, check_samples

__all__ = ["WINSOR", "bandwidth_factor", "check_bandwidth", "feature_bandwidths", "robust_range",
           "robust_scale"]

#: Share of rows clipped at each end before the scale is taken: robust to a few far rows (one in
#: 20 000, or 16 of the 16 384 anchors), and unlike the interquartile range blind to a sparse mode
#: (the IQR's Silverman scale shrank the bandwidths on a design with a sparse mode, and Nyström KRR
#: on its leverage centres lost 8 %: 1.585x exact KRR's risk against 1.467x).
WINSOR = 0.001


def bandwidth_factor(rule: str, n: int, d: float) -> float:
    """Scott's or Silverman's bandwidth factor for ``n`` points in dimension ``d``.

    Examples
    --------
    >>> round(bandwidth_factor("scott", 10**5, 1), 6)   # n^(-1/(d+4))
    0.1
    """
    if rule == "scott":
        return float(n ** (-1.0 / (d + 4)))
    if rule == "silverman":
        return float((n * (d + 2) / 4.0) ** (-1.0 / (d + 4)))
    raise ValueError(f"bandwidth must be 'scott', 'silverman' or a positive float, got {rule!r}.")


def check_bandwidth(bandwidth) -> str | float:
    """``bandwidth`` as a rule name or a positive float; ``ValueError`` naming it otherwise.

    Examples
    --------
    >>> check_bandwidth("silverman"), check_bandwidth(0.5)
    ('silverman', 0.5)
    """
    if isinstance(bandwidth, str) and bandwidth in ("scott", "silverman"):
        return bandwidth
    if isinstance(bandwidth, Real) and not isinstance(bandwidth, bool) and np.isfinite(bandwidth) \
            and bandwidth > 0:
        return float(bandwidth)
    raise ValueError(f"bandwidth must be 'scott', 'silverman' or a positive float, got {bandwidth!r}.")


def robust_range(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The :data:`WINSOR` and 1 - :data:`WINSOR` quantiles of each column of ``rows`` (the data,
    or a uniform subsample of them): two arrays of shape (d,), the range the bulk of the rows
    span, which a few far rows do not stretch.

    Examples
    --------
    >>> X = np.r_[np.linspace(0.0, 1.0, 10_001), 1e9][:, None]
    >>> [v.round(3).tolist() for v in robust_range(X)]
    [[0.001], [0.999]]
    """
    low, high = np.percentile(rows, [100 * WINSOR, 100 * (1 - WINSOR)], axis=0)
    return low, high


def robust_scale(std: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Per-feature scale of the bandwidth rules, shape (d,): the standard deviations ``std``, or
    where smaller those of ``rows`` (the data, or a uniform subsample of them) winsorized at the
    :data:`WINSOR` and 1 - :data:`WINSOR` quantiles: a few far rows no longer inflate it, and
    elsewhere it is the standard deviation to within a fraction of a per cent. A column whose
    winsorized values are all equal (constant but for a few rows) keeps its standard deviation.

    Examples
    --------
    >>> X = np.column_stack([np.arange(10_000.0), np.r_[np.arange(9_999.0), 1e9]])
    >>> X.std(axis=0).round(0).tolist()  # the far row inflates the second standard deviation
    [2887.0, 9999450.0]
    >>> robust_scale(X.std(axis=0), X).round(0).tolist()
    [2887.0, 2887.0]
    """
    std = np.asarray(std, dtype=float)
    low, high = robust_range(rows)
    winsorized = np.clip(rows, low, high).std(axis=0)
    # a column constant but for under 0.1 % of its rows (a rare indicator) keeps its deviation
    return np.where(winsorized > 0, np.minimum(std, winsorized), std)


def feature_bandwidths(X: np.ndarray, bandwidth) -> np.ndarray:
    """Per-feature bandwidths, shape (d,): a rule applied to the robust scales of X's columns
    (:func:`robust_scale`; constant columns count as 1) with X's row count, or an isotropic float
    (refused by :func:`~spectral_leverage._validation.check_bandwidth_range` when it leaves float64
    on X).

    Examples
    --------
    >>> X = np.column_stack([np.arange(10.0), np.zeros(10)])
    >>> feature_bandwidths(X, 0.3).tolist()
    [0.3, 0.3]
    >>> scott = feature_bandwidths(X, "scott") / bandwidth_factor("scott", 10, 2)
    >>> bool(np.allclose(scott, [robust_scale(X.std(axis=0), X)[0], 1.0]))
    True
    """
    bandwidth = check_bandwidth(bandwidth)
    n, d = X.shape
    low, high, sigma = column_summary(X)
    if isinstance(bandwidth, str):
        sigma = robust_scale(sigma, X)
        sigma[sigma == 0] = 1.0
        return sigma * bandwidth_factor(bandwidth, n, d)
    check_bandwidth_range(bandwidth, low, high)
    return np.full(d, bandwidth)


#: Second word of the anchors' seed (:func:`_anchor_draw`), so that their stream is not the one
#: the same seed gives elsewhere.
ANCHOR_STREAM = 0x616E63686F72


def _key_stream(random_state) -> np.random.Generator:
    """The rows' keys' stream, seeded by one draw of ``random_state``'s: keys drawn from
    random_state itself would be the very numbers of data drawn with the same seed
    (``default_rng(0).uniform(size=n)`` as a column, and ``random_state=0``, kept its n/12 smallest
    rows)."""
    seed = int(check_random_state(random_state).integers(2**63 - 1))
    return np.random.default_rng([seed, ANCHOR_STREAM])


def _anchor_keys(n: int, random_state) -> np.ndarray:
    """The keys of n rows (:func:`_anchor_draw`'s, for a set of rows that are all anchors)."""
    return _key_stream(random_state).random(n)


def _anchor_draw(n: int, max_samples: int | None,
                 random_state) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The anchor subsample of n points, drawn by one key a row: (rows, keys).

    ``rows`` are the sorted rows of the ``max_samples`` smallest keys and ``keys`` the anchors'
    keys in that order; (None, None) where every point is an anchor (nothing is drawn). Keys are
    common random numbers, as in the pivots' subsample: a row appended to the data leaves the
    others' membership as it was but for the one it may displace. With a fresh draw for every n,
    one far row among 10⁵ standard normal rows in 8-D (Matérn 3/2 at ℓ = 2, λ = n^-1/2) moved the
    others' scores by 0.948/1.055 (5th/95th percentile), because the KDE's anchors were others.
    Because the keys are the rows' own (:mod:`spectral_leverage._keys`), the ``k`` smallest of the
    anchors' keys are the anchors of ``max_samples=k``: nested subsamples (the tree KDE's 4096 of
    the 16 384 anchors in high dimension) are drawn by the same keys, not by the anchors'
    positions, where one row entering the anchors would shift every position after it."""
    if max_samples is None or check_samples(max_samples, "max_samples") >= n:
        return None, None
    return smallest_drawn(_key_stream(random_state), n, max_samples)


def _anchor_indices(n: int, max_samples: int | None, random_state) -> np.ndarray | None:
    """Sorted rows of the anchor subsample of n points (:func:`_anchor_draw`), or None when every
    point is used. The one place the subsample is drawn: the estimators fitted on anchors use
    exactly these rows, in memory or on a Dask cluster."""
    return _anchor_draw(n, max_samples, random_state)[0]


def _scale_factors(scale, bandwidth: np.ndarray) -> tuple:
    """Per-axis factors s / h of the chain rule from w = x / h to y = x / s (``scale`` s: None for
    h itself, a float, or one value per feature)."""
    if scale is None:
        return (1.0,) * len(bandwidth)
    scale = np.asarray(scale, dtype=float)
    if scale.ndim > 1 or scale.size not in (1, bandwidth.size):
        raise ValueError(f"scale must be a float or one value per feature ({bandwidth.size}), "
                         f"got shape {scale.shape}.")
    scale = np.broadcast_to(scale, bandwidth.shape)
    if not np.all(np.isfinite(scale)) or np.any(scale <= 0):
        raise ValueError(f"scale must be None or positive and finite per feature, got {scale!r}.")
    return tuple(float(f) for f in scale / bandwidth)

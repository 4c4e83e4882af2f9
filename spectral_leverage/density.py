r"""Gaussian kernel density estimates for millions of points: exact at anchors, interpolated elsewhere.

:class:`TreeDensity` estimates the input density :math:`p` with a Gaussian KDE of diagonal bandwidth
:math:`H = \mathrm{diag}(h_1..h_d)` built on a random subsample of at most ``max_samples`` points,
the *anchors*:

.. math::

    \hat p(x) = \frac{1}{m \prod_j h_j} \sum_{a=1}^{m} \varphi\big((x - x_a) / h\big),

with :math:`\varphi` the standard normal density in :math:`d` dimensions.

* At up to ``max_samples`` query points the KDE is evaluated directly by scikit-learn's dual-tree
  :class:`~sklearn.neighbors.KernelDensity`, with relative error at most ``rtol``.
* A larger batch of queries is answered by Nadaraya–Watson interpolation of the anchors'
  log-densities over the ``n_interp`` nearest anchors (one pykdtree k-NN query per point; Gaussian
  weights of half a bandwidth). The KDE is smooth on the scale of the bandwidth, and the anchors are
  a fraction of a bandwidth apart, so the interpolation costs little accuracy. A query point farther
  than one bandwidth from every anchor (an outlier) is evaluated directly.

Bandwidth rules act on per-feature standard deviations (i.e. on standardised data) with the anchor
count m: Scott :math:`h_j = \sigma_j m^{-1/(d+4)}`, Silverman
:math:`h_j = \sigma_j (m(d+2)/4)^{-1/(d+4)}`. A float is an isotropic bandwidth in the units of X.
"""

from __future__ import annotations

import logging
from numbers import Real

import numpy as np
from pykdtree.kdtree import KDTree
from scipy.special import gammaln
from sklearn.base import BaseEstimator
from sklearn.neighbors import KernelDensity
from tqdm.auto import tqdm

from ._blocks import DEFAULT_MEMORY_BUDGET, row_chunks
from ._validation import check_data, check_fitted_data, check_positive, check_random_state, check_samples

__all__ = [
    "KNNDensity",
    "TreeDensity",
    "bandwidth_factor",
    "check_bandwidth",
]

logger = logging.getLogger(__name__)


def bandwidth_factor(rule: str, n: int, d: float) -> float:
    """Scott's or Silverman's bandwidth factor for ``n`` points in dimension ``d``."""
    if rule == "scott":
        return float(n ** (-1.0 / (d + 4)))
    if rule == "silverman":
        return float((n * (d + 2) / 4.0) ** (-1.0 / (d + 4)))
    raise ValueError(f"bandwidth must be 'scott', 'silverman' or a positive float, got {rule!r}.")


def check_bandwidth(bandwidth) -> str | float:
    """``bandwidth`` as a rule name or a positive float; ``ValueError`` naming it otherwise."""
    if isinstance(bandwidth, str) and bandwidth in ("scott", "silverman"):
        return bandwidth
    if isinstance(bandwidth, Real) and not isinstance(bandwidth, bool) and np.isfinite(bandwidth) \
            and bandwidth > 0:
        return float(bandwidth)
    raise ValueError(f"bandwidth must be 'scott', 'silverman' or a positive float, got {bandwidth!r}.")


class TreeDensity(BaseEstimator):
    """Gaussian kernel density estimate, exact at anchor points and interpolated elsewhere.

    Parameters
    ----------
    bandwidth : str or float, default="scott"
        "scott" or "silverman" (rules applied to the standardised data), or an isotropic bandwidth
        in the units of X.
    rtol : float, default=1e-2
        Relative tolerance of the direct KDE (scikit-learn's dual-tree bound).
    max_samples : int or None, default=16384
        Anchors: the KDE is built on a random subsample of at most this many points. None uses
        every point and evaluates every query directly.
    n_interp : int, default=8
        Anchors interpolated per query in large batches.
    memory_budget : int, default=256 MiB
        Bytes of query temporaries per chunk.
    random_state : int, numpy Generator or None
        Seeds the anchor subsample.
    verbose : bool, default=False
        Show a progress bar over query chunks.

    Attributes
    ----------
    bandwidth_ : ndarray of shape (d,)
        Per-feature bandwidths used.
    n_tree_ : int
        Number of anchors.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(size=(2000, 2))
    >>> p = TreeDensity().fit(X).density(X)
    >>> bool(0.7 < np.median(p) < 1.3)
    True
    """

    def __init__(self, bandwidth="scott", *, rtol: float = 1e-2, max_samples: int | None = 2**14,
                 n_interp: int = 8, memory_budget: int = DEFAULT_MEMORY_BUDGET, random_state=None,
                 verbose: bool = False):
        self.bandwidth = bandwidth
        self.rtol = rtol
        self.max_samples = max_samples
        self.n_interp = n_interp
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y=None) -> TreeDensity:
        """Choose the anchors and bandwidths, and build the KDE and the anchor tree."""
        X = check_data(X, min_samples=1)
        n, d = X.shape
        check_samples(self.n_interp, "n_interp")
        rtol = check_positive(self.rtol, "rtol")
        if rtol >= 1:
            raise ValueError(f"rtol must be in (0, 1), got {self.rtol!r}.")
        if self.max_samples is not None and check_samples(self.max_samples, "max_samples") < n:
            rng = check_random_state(self.random_state)
            X = X[np.sort(rng.choice(n, self.max_samples, replace=False))]
        m = X.shape[0]
        bandwidth = check_bandwidth(self.bandwidth)
        if isinstance(bandwidth, str):
            sigma = X.std(axis=0)
            sigma[sigma == 0] = 1.0
            self.bandwidth_ = sigma * bandwidth_factor(bandwidth, m, d)
        else:
            self.bandwidth_ = np.full(d, bandwidth)
        self.n_features_in_ = d
        self.n_tree_ = m
        # whitened coordinates w = x / h: the KDE kernel is the standard normal there
        self._anchors = np.ascontiguousarray(X / self.bandwidth_)
        self._kde = KernelDensity(bandwidth=1.0, rtol=rtol).fit(self._anchors)
        self._log_det = float(np.sum(np.log(self.bandwidth_)))
        self._tree = None
        self._anchor_log_density = None
        return self

    def density(self, X) -> np.ndarray:
        """Density estimate at the rows of X, shape (n,). Anchors count themselves."""
        return np.exp(self.log_density(X))

    def log_density(self, X) -> np.ndarray:
        """Natural log of :meth:`density`, shape (n,)."""
        X = check_fitted_data(self, X, fitted_attribute="bandwidth_")
        W = X / self.bandwidth_
        if X.shape[0] <= self.n_tree_ or self.max_samples is None:
            return self._direct(W)
        return self._interpolate(W)

    def _direct(self, W: np.ndarray) -> np.ndarray:
        out = np.empty(W.shape[0])
        chunks = list(row_chunks(W.shape[0], 64.0 * W.shape[1], self.memory_budget))
        for rows in tqdm(chunks, disable=not self.verbose or len(chunks) < 2, desc="density"):
            out[rows] = self._kde.score_samples(W[rows])
        return out - self._log_det

    def _interpolate(self, W: np.ndarray) -> np.ndarray:
        """Nadaraya–Watson interpolation of the anchors' log-densities (outliers: direct KDE)."""
        if self._anchor_log_density is None:
            self._anchor_log_density = self._direct(self._anchors)
            self._tree = KDTree(self._anchors)
        k = min(self.n_interp, self.n_tree_)
        out = np.empty(W.shape[0])
        chunks = list(row_chunks(W.shape[0], 40.0 * k + 8 * W.shape[1], self.memory_budget))
        for rows in tqdm(chunks, disable=not self.verbose, desc="density", unit="chunk"):
            dist, idx = self._tree.query(np.ascontiguousarray(W[rows]), k=k)
            dist, idx = dist.reshape(-1, k), idx.reshape(-1, k).astype(np.intp)
            # weights exp(-r²/(2·0.5²)), shifted by the nearest anchor so they never underflow
            weights = np.exp(-2.0 * (dist**2 - dist[:, :1] ** 2))
            out[rows] = (weights * self._anchor_log_density[idx]).sum(axis=1) / weights.sum(axis=1)
            far = rows.start + np.flatnonzero(dist[:, 0] > 1.0)
            if far.size:
                out[far] = self._direct(W[far])
        return out


class KNNDensity(BaseEstimator):
    r"""k-nearest-neighbour density with a volume term in a chosen (intrinsic) dimension.

    :math:`\hat p(x) = (k - 1) / (m\,V_{d'}\,r_k(x)^{d'})`, with :math:`r_k(x)` the distance
    from x to its k-th nearest tree point (not counting x itself when x is a tree point),
    :math:`V_{d'} = \pi^{d'/2}/\Gamma(d'/2 + 1)` and m the tree size. This is a density with
    respect to :math:`d'`-dimensional volume on the set the data lie near; its bandwidth adapts to
    the local density, which suits real data whose density varies by orders of magnitude.

    Parameters
    ----------
    dim : float
        The dimension :math:`d' \ge 1` of the volume term.
    n_neighbors : int, default=50
    max_samples : int or None, default=16384
        Tree on a random subsample of at most this many points (None: every point).
    memory_budget : int, default=256 MiB
    random_state : int, numpy Generator or None
    verbose : bool, default=False

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(size=(4000, 2))
    >>> p = KNNDensity(dim=2).fit(X).density(X)
    >>> bool(0.8 < np.median(p) < 1.2)
    True
    """

    def __init__(self, dim: float, *, n_neighbors: int = 50, max_samples: int | None = 2**14,
                 memory_budget: int = DEFAULT_MEMORY_BUDGET, random_state=None, verbose: bool = False):
        self.dim = dim
        self.n_neighbors = n_neighbors
        self.max_samples = max_samples
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y=None) -> KNNDensity:
        """Build the KD-tree on X (or a random subsample)."""
        X = check_data(X, min_samples=2)
        dim = check_positive(self.dim, "dim")
        if dim < 1:
            raise ValueError(f"dim must be >= 1, got {self.dim!r}.")
        check_samples(self.n_neighbors, "n_neighbors")
        n = X.shape[0]
        self._self_in_tree = True
        if self.max_samples is not None and check_samples(self.max_samples, "max_samples") < n:
            X = X[np.sort(check_random_state(self.random_state).choice(n, self.max_samples, replace=False))]
            self._self_in_tree = False
        self.n_tree_ = X.shape[0]
        self.n_features_in_ = X.shape[1]
        self._training = X
        self._tree = KDTree(np.ascontiguousarray(X))
        return self

    def log_density(self, X, *, training: bool = False) -> np.ndarray:
        """Log-density at the rows of X; ``training=True`` when X is the data passed to ``fit``
        and every row is a tree point (its own distance 0 is then not counted)."""
        X = check_fitted_data(self, X, fitted_attribute="n_tree_")
        skip = int(training and self._self_in_tree)
        m = self.n_tree_ - skip
        k = min(self.n_neighbors, m)
        radius = np.empty(X.shape[0])
        chunks = list(row_chunks(X.shape[0], 16.0 * (k + skip), self.memory_budget))
        for rows in tqdm(chunks, disable=not self.verbose, desc="density", unit="chunk"):
            dist, _ = self._tree.query(np.ascontiguousarray(X[rows]), k=k + skip)
            radius[rows] = dist.reshape(-1, k + skip)[:, -1]
        positive = radius[radius > 0]
        # more than k duplicates of a point leave r_k = 0: use the smallest positive radius seen
        floor = positive.min() if positive.size else 1e-12 * max(float(np.ptp(self._training)), 1.0)
        radius = np.maximum(radius, floor)
        dim = float(self.dim)
        log_volume = 0.5 * dim * np.log(np.pi) - gammaln(0.5 * dim + 1)
        return np.log(max(k - 1, 1)) - np.log(m) - log_volume - dim * np.log(radius)

    def density(self, X, *, training: bool = False) -> np.ndarray:
        """Density at the rows of X (see :meth:`log_density`)."""
        return np.exp(self.log_density(X, training=training))

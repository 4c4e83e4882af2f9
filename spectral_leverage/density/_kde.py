r"""Gaussian kernel density estimates for millions of points: exact at anchors, interpolated elsewhere.

:class:`TreeDensity` estimates the input density :math:`p` with a Gaussian KDE of diagonal bandwidth
:math:`H = \mathrm{diag}(h_1..h_d)` built on a random subsample of at most ``max_samples`` points,
the *anchors*:

.. math::

    \hat p(x) = \frac{1}{m \prod_j h_j} \sum_{a=1}^{m} \varphi\big((x - x_a) / h\big),

with :math:`\varphi` the standard normal density in :math:`d` dimensions.

* At up to ``max_samples`` query points the KDE is evaluated directly and exactly: the squared
  distances to all anchors as one matrix product per block of rows (:math:`\|w - a\|^2 / 2 =
  \|w\|^2/2 + \|a\|^2/2 - w \cdot a` in whitened coordinates centred on the anchors' mean), then
  a log-sum-exp shifted by each row's nearest anchor, so that no query underflows however far it
  is (the exponentials in float32, summed in float64: relative error about 1e-7). The expansion
  loses about :math:`\epsilon\,\|w\|\,\|a\|` in the log (float64 :math:`\epsilon`, norms in
  bandwidths from the anchors' mean): nothing with the bandwidth rules, but :meth:`fit` warns when
  anchors lie more than about :math:`7 \cdot 10^4` bandwidths out (a float bandwidth far below the
  data's spread). In four or more
  dimensions this is several times faster than a dual-tree KDE at a tolerance of 1 %: the kernel is
  wide there, and tree pruning saves little.
* A larger batch of queries is answered by Nadaraya–Watson interpolation over the ``n_interp``
  nearest anchors (one pykdtree k-NN query per point; Gaussian weights of half a bandwidth), to
  first order: the weighted mean of :math:`\log \hat p(a) + \nabla \log \hat p(a) \cdot (w - a)`
  with the anchors' exact gradients (below). The KDE is smooth on the scale of the bandwidth, and
  the anchors are a fraction of a bandwidth apart, so the interpolation costs little accuracy; the
  first-order term halves its error where the density changes fastest (4096 anchors of a uniform
  cube: 90th percentile over the cube 0.13 → 0.06 in the log, the largest errors at its faces).
  A query point farther than one bandwidth from every anchor (an outlier) is evaluated directly.
* For the boundary correction (:mod:`spectral_leverage.spectral.boundary`) the same kernel terms give the
  log-density's gradient and curvature in whitened coordinates: with :math:`E_t` the mean over the
  anchors weighted by their kernel terms at :math:`w`,
  :math:`\nabla_w \log \hat p = E_t[a] - w` and :math:`\nabla_w^2 \log \hat p = \mathrm{Cov}_t[a] - I`,
  so the curvature along the unit gradient :math:`\hat g` is :math:`\mathrm{Var}_t[\hat g \cdot a] - 1`
  (one more matrix product per block, in float64, of the kernel terms with the anchors'
  coordinates and their pairwise products). They are interpolated like the log-density: the
  gradient to first order with the Hessian taken along the gradient only,
  :math:`c\,\hat g \hat g^\top`, the curvature to zeroth order.

Bandwidth rules act on per-feature standard deviations (i.e. on standardised data) with the anchor
count m: Scott :math:`h_j = \sigma_j m^{-1/(d+4)}`, Silverman
:math:`h_j = \sigma_j (m(d+2)/4)^{-1/(d+4)}`. A float is an isotropic bandwidth in the units of X.
"""

from __future__ import annotations

import logging
import warnings
from numbers import Real

import numpy as np
from pykdtree.kdtree import KDTree
from scipy.ndimage import gaussian_filter
from scipy.special import gammaln
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted
from tqdm.auto import tqdm

from .._blocks import DEFAULT_MEMORY_BUDGET, N_THREADS, column_summary, on_all_cores, row_chunks
from .._validation import check_data, check_fitted_data, check_positive, check_random_state, check_samples

__all__ = [
    "BinnedDensity",
    "KNNDensity",
    "TreeDensity",
    "bandwidth_factor",
    "check_bandwidth",
    "feature_bandwidths",
]

logger = logging.getLogger(__name__)

#: The norm of a Gaussian KDE's log-gradient, in bandwidths, at a face of a half-space of data,
#: φ(0)/Φ(0) = sqrt(2/π), and its log-density's curvature across the face there, -2/π.
FACE_SLOPE = float(np.sqrt(2 / np.pi))
FACE_CURVATURE = float(-2 / np.pi)


def _curvature_along(slab_gradients: dict, norm: np.ndarray, keep: tuple, step: float) -> np.ndarray:
    """ĝᵀ H ĝ on the kept cells of a slab, as the derivative of the gradient's norm ``norm`` along ĝ
    (∇‖g‖ = H g / ‖g‖): d more differences instead of d(d+1)/2."""
    numerator = sum(g[keep] * np.gradient(norm, step, axis=axis)[keep] for axis, g in slab_gradients.items())
    norm = norm[keep]
    return np.divide(numerator, norm, out=np.zeros_like(norm), where=norm > 0)


def _cell_corners(cells: np.ndarray, shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Multilinear (linear binning) weights of points at grid coordinates ``cells`` (n, d), in
    cells, each in [0, ``shape - 1``] along its axis: the flat C-order indices of the 2^d corners of
    each point's cell and their weights, both of shape (2^d, n). A point on the grid's last face
    reads the cell below it, at its upper corner."""
    d = cells.shape[1]
    base = np.clip(np.floor(cells), 0, np.asarray(shape) - 2)
    upper = (cells - base).T  # (d, n): weight of the upper neighbour along each axis
    strides = np.cumprod((1, *shape[:0:-1]))[::-1]
    corners = np.indices((2,) * d).reshape(d, -1)  # (d, 2^d), C order
    index = (base.astype(np.intp) @ strides)[None, :] + (strides @ corners)[:, None]
    weight = np.ones((2**d, cells.shape[0]))
    for axis in range(d):
        factors = np.stack([1.0 - upper[axis], upper[axis]])
        weight *= factors[corners[axis]]
    return index, weight


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


def feature_bandwidths(X: np.ndarray, bandwidth) -> np.ndarray:
    """Per-feature bandwidths, shape (d,): a rule applied to the standard deviations of X's
    columns (constant columns count as 1) with X's row count, or an isotropic float.

    Examples
    --------
    >>> X = np.column_stack([np.arange(10.0), np.zeros(10)])
    >>> feature_bandwidths(X, 0.3).tolist()
    [0.3, 0.3]
    >>> scott = feature_bandwidths(X, "scott") / bandwidth_factor("scott", 10, 2)
    >>> bool(np.allclose(scott, [X[:, 0].std(), 1.0]))
    True
    """
    bandwidth = check_bandwidth(bandwidth)
    n, d = X.shape
    if isinstance(bandwidth, str):
        sigma = column_summary(X)[2]
        sigma[sigma == 0] = 1.0
        return sigma * bandwidth_factor(bandwidth, n, d)
    return np.full(d, bandwidth)


def _anchor_indices(n: int, max_samples: int | None, random_state) -> np.ndarray | None:
    """Sorted rows of the random anchor subsample of n points, or None when every point is used.

    The one place the subsample is drawn, so that :mod:`spectral_leverage.distributed` gathers
    exactly the rows the in-memory fit uses."""
    if max_samples is None or check_samples(max_samples, "max_samples") >= n:
        return None
    return np.sort(check_random_state(random_state).choice(n, max_samples, replace=False))


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


class _RebuildsTree:
    """Pickling for estimators holding a pykdtree ``KDTree`` in ``_tree`` (which does not pickle):
    the tree is dropped and rebuilt by ``_rebuild_tree`` on unpickling (e.g. on a Dask worker)."""

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: object.__getstate__ returns __dict__ itself
        state["_tree"] = None
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        self._rebuild_tree()


class TreeDensity(_RebuildsTree, BaseEstimator):
    """Gaussian kernel density estimate, exact at anchor points and interpolated elsewhere.

    Parameters
    ----------
    bandwidth : str or float, default="scott"
        "scott" or "silverman" (rules applied to the standardised data), or an isotropic bandwidth
        in the units of X.
    max_samples : int or None, default=16384
        Anchors: the KDE is built on a random subsample of at most this many points. None uses
        every point and evaluates every query directly: :math:`O(n^2)` time, for small n only.
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

    def __init__(self, bandwidth="scott", *, max_samples: int | None = 2**14, n_interp: int = 8,
                 memory_budget: int = DEFAULT_MEMORY_BUDGET, random_state=None, verbose: bool = False):
        self.bandwidth = bandwidth
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
        anchors = _anchor_indices(n, self.max_samples, self.random_state)
        if anchors is not None:
            X = X[anchors]
        m = X.shape[0]
        self.bandwidth_ = feature_bandwidths(X, self.bandwidth)
        self.n_features_in_ = d
        self.n_tree_ = m
        # whitened coordinates w = x / h: the KDE kernel is the standard normal there
        self._anchors = np.ascontiguousarray(X / self.bandwidth_)
        # log of the normalisation 1 / (m (2π)^{d/2} Π h_j)
        self._log_norm = -float(np.log(m) + 0.5 * d * np.log(2 * np.pi) + np.sum(np.log(self.bandwidth_)))
        # the matrix-product distances lose about eps·‖w‖·‖a‖ (centred) in the log
        self._centre = self._anchors.mean(axis=0)
        radius = float(np.sqrt(np.max(np.sum((self._anchors - self._centre) ** 2, axis=1))))
        if np.finfo(float).eps * radius**2 > self.MAX_LOG_ERROR:
            warnings.warn(
                f"the data span {radius:.3g} bandwidths from their mean: the KDE's log-density carries "
                f"errors up to about {np.finfo(float).eps * radius**2:.2g}; use a wider bandwidth (or "
                "the 'scott' rule) for data this spread out.", stacklevel=2)
        self._tree = None
        self._anchor_log_density = self._anchor_gradient = self._anchor_curvature = None
        return self

    def density(self, X) -> np.ndarray:
        """Density estimate at the rows of X, shape (n,). Anchors count themselves."""
        return np.exp(self.log_density(X))

    def log_density(self, X) -> np.ndarray:
        """Natural log of :meth:`density`, shape (n,)."""
        X = check_fitted_data(self, X, fitted_attribute="bandwidth_")
        return self._log_density(X, X.shape[0])

    def density_and_slopes(self, X, scales=(None,), *,
                           curvature: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
        r"""(:meth:`density`, [the norm of the log-density's gradient in the coordinates
        :math:`y = x/s` for each ``scale`` s, then, with ``curvature``, the log-density's curvature
        along its gradient in whitened coordinates]) at the rows of X, as
        :meth:`BinnedDensity.density_and_slopes` but exact at the anchors (module docstring).

        Parameters
        ----------
        X : array_like of shape (n, d)
        scales : sequence of None, float or array_like of shape (d,)
            None: the bandwidths (whitened coordinates :math:`w = x/h`).
        curvature : bool, default=False
            :math:`\hat g^\top (\nabla_w^2 \log \hat p)\, \hat g`, 0 where the gradient is 0.

        Examples
        --------
        A half-space of data: at its face the slope is that of a Gaussian's half,
        :math:`\varphi(0)/\Phi(0) = \sqrt{2/\pi}`, and deep inside close to 0:

        >>> import numpy as np
        >>> X = np.random.default_rng(0).uniform(size=(4000, 1))
        >>> kde = TreeDensity().fit(X)
        >>> _, (slope,) = kde.density_and_slopes(np.array([[0.0], [0.5]]))
        >>> np.round(slope, 1)
        array([0.8, 0. ])
        """
        X = check_fitted_data(self, X, fitted_attribute="bandwidth_")
        log_p, values = self._log_density_and_slopes(X, X.shape[0], scales, curvature)
        return np.exp(log_p), values

    def _log_density(self, X: np.ndarray, n_batch: int) -> np.ndarray:
        """Log-density at validated rows X that are part of a batch of ``n_batch`` queries: the
        batch size chooses direct evaluation or interpolation (a distributed batch is evaluated
        block by block)."""
        return self._evaluate(X / self.bandwidth_, n_batch, moments=False)[0]

    def _log_density_and_slopes(self, X: np.ndarray, n_batch: int, scales,
                                curvature: bool) -> tuple[np.ndarray, list[np.ndarray]]:
        """(log-density, [slopes per scale, curvature]) at validated rows X of a batch of
        ``n_batch`` queries (see :meth:`density_and_slopes`)."""
        factors = [np.asarray(_scale_factors(scale, self.bandwidth_)) for scale in scales]
        log_p, gradient, along = self._evaluate(X / self.bandwidth_, n_batch, moments=True)
        slopes = [np.linalg.norm(gradient * f, axis=1) for f in factors]
        return log_p, slopes + ([along] if curvature else [])

    def _evaluate(self, W: np.ndarray, n_batch: int, moments: bool) -> tuple:
        """(log-density, whitened gradient, curvature along it) at whitened rows W, directly or by
        interpolation as ``n_batch`` chooses; the last two None without ``moments``."""
        if n_batch <= self.n_tree_ or self.max_samples is None:
            return self._direct(W, moments)
        return self._interpolate(W, moments)

    def _rebuild_tree(self) -> None:
        if getattr(self, "_anchor_log_density", None) is not None:
            self._tree = KDTree(self._anchors)

    #: largest error in the log-density :meth:`fit` accepts without a warning (module docstring)
    MAX_LOG_ERROR = 1e-6

    def _direct(self, W: np.ndarray, moments: bool = False) -> tuple:
        """Exact log-KDE at whitened rows W (module docstring): blocks of rows against all anchors,
        on all cores; with ``moments`` also its whitened gradient and curvature along it
        (:func:`_log_kde_moments`), else None for them."""
        centre = self._centre
        anchors = self._anchors - centre
        anchors_t = np.ascontiguousarray(anchors.T)
        half_sq = 0.5 * np.einsum("ij,ij->i", anchors, anchors)
        out = np.empty(W.shape[0])
        gradient, along = (np.empty(W.shape), np.empty(W.shape[0])) if moments else (None, None)
        powers = _anchor_powers(anchors) if moments else None
        # per row: the float64 exponents and their float32 exponentials (for the moments copied
        # back into the exponents' buffer as float64); blocks of a few MiB stay in cache
        bytes_per_row = 12.0 * anchors.shape[0]
        chunk_bytes = min(self.memory_budget / (2 * N_THREADS), 2**22)
        chunks = list(row_chunks(W.shape[0], bytes_per_row, chunk_bytes))
        progress = tqdm(total=len(chunks), disable=not self.verbose or len(chunks) < 2, desc="density")

        def fill(rows: slice) -> None:
            query = W[rows] - centre
            exponent = query @ anchors_t  # -‖w - a‖²/2 + ‖w‖²/2
            exponent -= half_sq
            top = exponent.max(axis=1)
            exponent -= top[:, None]
            terms = np.exp(exponent.astype(np.float32))
            total = terms.sum(axis=1, dtype=float)
            out[rows] = np.log(total) + top - 0.5 * np.einsum("ij,ij->i", query, query)
            if moments:
                np.copyto(exponent, terms)
                gradient[rows], along[rows] = _log_kde_moments(exponent, total, query, powers)
            progress.update()

        try:
            on_all_cores(fill, chunks)
        finally:
            progress.close()
        return out + self._log_norm, gradient, along

    def _prepare_interpolation(self) -> None:
        """Evaluate the anchors' own log-densities, gradients and curvatures and build their
        KD-tree, once (before a fitted model is shipped to workers, say); :meth:`_interpolate`
        calls it on first use."""
        if self._anchor_log_density is None:
            self._anchor_log_density, self._anchor_gradient, self._anchor_curvature = \
                self._direct(self._anchors, moments=True)
            self._tree = KDTree(self._anchors)

    def _interpolate(self, W: np.ndarray, moments: bool = False) -> tuple:
        """Nadaraya–Watson interpolation of the anchors' log-densities, to first order (module
        docstring), and with ``moments`` of their gradients and curvatures (outliers: direct KDE);
        as :meth:`_direct`."""
        self._prepare_interpolation()
        k = min(self.n_interp, self.n_tree_)
        d = W.shape[1]
        out = np.empty(W.shape[0])
        gradient, along = (np.empty(W.shape), np.empty(W.shape[0])) if moments else (None, None)
        bytes_per_row = 40.0 * k + 8 * d + 8.0 * k * (4 * d + 1)
        chunks = list(row_chunks(W.shape[0], bytes_per_row, self.memory_budget))
        for rows in tqdm(chunks, disable=not self.verbose, desc="density", unit="chunk"):
            dist, idx = self._tree.query(np.ascontiguousarray(W[rows]), k=k)
            dist, idx = dist.reshape(-1, k), idx.reshape(-1, k).astype(np.intp)
            # weights exp(-r²/(2·0.5²)), shifted by the nearest anchor so they never underflow
            weights = np.exp(-2.0 * (dist**2 - dist[:, :1] ** 2))
            weights /= weights.sum(axis=1, keepdims=True)
            offsets, anchor_gradient = W[rows][:, None, :] - self._anchors[idx], self._anchor_gradient[idx]
            # to first order: log p(a) + ∇ log p(a)·(w - a)
            out[rows] = np.einsum("ij,ij->i", weights, self._anchor_log_density[idx])
            out[rows] += np.einsum("ij,ijk,ijk->i", weights, anchor_gradient, offsets)
            if moments:
                # the gradient to first order too, its Hessian taken along the gradient only,
                # c ĝ ĝᵀ: across a face that is all of it, and it keeps the slope rising past it
                norms = np.linalg.norm(anchor_gradient, axis=2, keepdims=True)
                unit = anchor_gradient / np.where(norms > 0, norms, 1.0)
                step = np.einsum("ijk,ijk->ij", unit, offsets) * self._anchor_curvature[idx]
                anchor_gradient += step[:, :, None] * unit
                gradient[rows] = np.einsum("ij,ijk->ik", weights, anchor_gradient)
                along[rows] = np.einsum("ij,ij->i", weights, self._anchor_curvature[idx])
            far = rows.start + np.flatnonzero(dist[:, 0] > 1.0)
            if far.size:
                values = self._direct(W[far], moments)
                out[far] = values[0]
                if moments:
                    gradient[far], along[far] = values[1:]
        return out, gradient, along


class KNNDensity(_RebuildsTree, BaseEstimator):
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
        anchors = _anchor_indices(n, self.max_samples, self.random_state)
        self._self_in_tree = anchors is None
        if anchors is not None:
            X = X[anchors]
        self.n_tree_ = X.shape[0]
        self.n_features_in_ = X.shape[1]
        self._training = X
        self._tree = KDTree(np.ascontiguousarray(X))
        return self

    def log_density(self, X, *, training: bool = False) -> np.ndarray:
        """Log-density at the rows of X; ``training=True`` when X is the data passed to ``fit``
        and every row is a tree point (its own distance 0 is then not counted)."""
        X = check_fitted_data(self, X, fitted_attribute="n_tree_")
        radius = self._kth_radius(X, training)
        positive = radius[radius > 0]
        # more than k duplicates of a point leave r_k = 0: use the smallest positive radius seen
        return self._log_density_at(radius, positive.min() if positive.size else None, training)

    def _counts(self, training: bool) -> tuple[int, int, int]:
        """(self-matches skipped, tree points counted m, neighbours k)."""
        skip = int(training and self._self_in_tree)
        m = self.n_tree_ - skip
        return skip, m, min(self.n_neighbors, m)

    def _kth_radius(self, X: np.ndarray, training: bool) -> np.ndarray:
        """Distance from each (validated) row of X to its k-th nearest tree point."""
        skip, _, k = self._counts(training)
        radius = np.empty(X.shape[0])
        chunks = list(row_chunks(X.shape[0], 16.0 * (k + skip), self.memory_budget))
        for rows in tqdm(chunks, disable=not self.verbose, desc="density", unit="chunk"):
            dist, _ = self._tree.query(np.ascontiguousarray(X[rows]), k=k + skip)
            radius[rows] = dist.reshape(-1, k + skip)[:, -1]
        return radius

    def _log_density_at(self, radius: np.ndarray, floor: float | None, training: bool) -> np.ndarray:
        """Log-density from k-th neighbour radii, raised to ``floor`` (the batch's smallest positive
        radius; None when it has none)."""
        _, m, k = self._counts(training)
        if floor is None:
            floor = 1e-12 * max(float(np.ptp(self._training)), 1.0)
        radius = np.maximum(radius, floor)
        dim = float(self.dim)
        log_volume = 0.5 * dim * np.log(np.pi) - gammaln(0.5 * dim + 1)
        return np.log(max(k - 1, 1)) - np.log(m) - log_volume - dim * np.log(radius)

    def density(self, X, *, training: bool = False) -> np.ndarray:
        """Density at the rows of X (see :meth:`log_density`)."""
        return np.exp(self.log_density(X, training=training))

    def _rebuild_tree(self) -> None:
        if getattr(self, "_training", None) is not None:
            self._tree = KDTree(np.ascontiguousarray(self._training))


def _anchor_powers(anchors: np.ndarray) -> np.ndarray:
    """The centred anchors' coordinates and their pairwise products :math:`a_i a_j`, i <= j, as
    columns, shape (m, d + d(d+1)/2): one matrix product with the kernel terms gives the weighted
    first and second moments (:func:`_log_kde_moments`)."""
    upper = np.triu_indices(anchors.shape[1])
    return np.hstack([anchors, anchors[:, upper[0]] * anchors[:, upper[1]]])


def _log_kde_moments(terms: np.ndarray, total: np.ndarray, query: np.ndarray,
                     powers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(gradient (k, d), curvature along it (k,)) of a Gaussian log-KDE in whitened coordinates at
    k centred queries, from their kernel terms (k, m) with row sums ``total`` and the anchors'
    :func:`_anchor_powers` (module docstring). In float64: the second moments are of size about
    ‖a‖² (bandwidths from the anchors' mean) and their variance loses about 1e-16 of that."""
    d = query.shape[1]
    moments = (terms @ powers) / total[:, None]  # E_t[a], E_t[a_i a_j]
    mean, second = moments[:, :d], moments[:, d:]
    gradient = mean - query
    norm = np.sqrt(np.einsum("ij,ij->i", gradient, gradient))
    direction = gradient / np.where(norm > 0, norm, 1.0)[:, None]
    upper = np.triu_indices(d)
    pairs = direction[:, upper[0]] * direction[:, upper[1]] * np.where(upper[0] == upper[1], 1.0, 2.0)
    # Var_t[ĝ·a] - 1 = E_t[(ĝ·a)²] - (ĝ·E_t[a])² - 1
    along = np.einsum("ij,ij->i", pairs, second) - np.einsum("ij,ij->i", direction, mean) ** 2 - 1.0
    return gradient, np.where(norm > 0, along, 0.0)


class BinnedDensity(BaseEstimator):
    r"""Gaussian kernel density estimate of all n points on a grid: linear time in low dimension.

    The estimate is the KDE of :class:`TreeDensity` with every point as an anchor (bandwidth rule
    applied with n), computed the way binned KDEs are (Wand, 1994): in whitened coordinates
    :math:`w = x / h` the points are linearly binned onto a regular grid of spacing
    :math:`\delta = 1/` ``cells_per_bandwidth``, the grid counts are convolved with a sampled
    normal (separable, truncated at ``truncate`` bandwidths; its variance below), and the result is
    interpolated multilinearly at the query points. Cost :math:`O(n\,2^d + G\,d\,\tau)` for a grid
    of :math:`G` cells and :math:`\tau` taps per axis, against :math:`O(n \log n)` tree searches.
    Binning and interpolation each spread a point's mass over the corners of its cell: along an
    axis, at fraction :math:`t` of the way across a cell, with mean 0 and variance
    :math:`t(1 - t)\,\delta^2`, which averages :math:`\delta^2/6` over the cell. So the sampled normal
    has variance :math:`1 - \delta^2/3` (in bandwidths) and the two blurs restore the KDE's on
    average. Binning's part averages out over the data points; the read-back's depends on where the
    query falls, from :math:`-\delta^2/6` (on a grid node) to :math:`+\delta^2/12` (mid-cell) per
    axis: the relative error is second order in :math:`\delta` and unbiased on average over the
    data points. At the default 3 cells per
    bandwidth it is about 0.1 % there (at most 0.5 %; with 4 cells and no variance correction it was
    1 %) and grows in the tails with the log-density's curvature, to about 4 % where the density is
    1 % of its peak.

    The grid spans the data plus ``truncate + 1`` bandwidths on each side, so it suits low
    dimension: :meth:`grid_cells` tells its size before fitting, and ``fit`` refuses a grid that
    would not fit in ``memory_budget``. Queries farther than ``truncate`` bandwidths from every
    data point get the floor density of one point at that distance (an upper bound of the KDE).

    Parameters
    ----------
    bandwidth : str or float, default="scott"
        "scott" or "silverman" (rules on the standard deviations, with n points), or an isotropic
        bandwidth in the units of X.
    cells_per_bandwidth : int, default=3
        Grid cells per bandwidth along each axis.
    truncate : float, default=4.0
        The Gaussian kernel is cut at this many bandwidths (relative mass lost < 1e-4 per axis).
    memory_budget : int, default=256 MiB
        Bytes for the grid (three float64 copies) and for the per-chunk binning temporaries.
    verbose : bool, default=False
        Progress bar over chunks.

    Attributes
    ----------
    bandwidth_ : ndarray of shape (d,)
    grid_shape_ : tuple of int
    grid_cells_ : int
        ``prod(grid_shape_)``.
    n_features_in_ : int

    References
    ----------
    M. P. Wand. Fast computation of multivariate kernel estimators. J. Comput. Graph. Stat. 3(4),
    1994.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(size=(20000, 2))
    >>> p = BinnedDensity().fit(X).density(X)
    >>> bool(0.9 < np.median(p) < 1.1)
    True
    """

    def __init__(self, bandwidth="scott", *, cells_per_bandwidth: int = 3, truncate: float = 4.0,
                 memory_budget: int = DEFAULT_MEMORY_BUDGET, verbose: bool = False):
        self.bandwidth = bandwidth
        self.cells_per_bandwidth = cells_per_bandwidth
        self.truncate = truncate
        self.memory_budget = memory_budget
        self.verbose = verbose

    def set_layout(self, n: int, std: np.ndarray, low: np.ndarray, high: np.ndarray) -> BinnedDensity:
        """Fix the bandwidths and the grid from summary statistics of the data: row count, column
        standard deviations, minima and maxima (what :meth:`fit` computes; a distributed fit
        reduces them over blocks). Sets ``bandwidth_``, ``grid_shape_``, ``grid_cells_`` and
        ``n_features_in_``; :meth:`fit` also checks the grid against ``memory_budget``."""
        check_samples(self.cells_per_bandwidth, "cells_per_bandwidth")
        check_positive(self.truncate, "truncate")
        bandwidth = check_bandwidth(self.bandwidth)
        std, low, high = (np.asarray(a, dtype=float) for a in (std, low, high))
        if isinstance(bandwidth, str):
            self.bandwidth_ = np.where(std == 0, 1.0, std) * bandwidth_factor(bandwidth, n, std.shape[0])
        else:
            self.bandwidth_ = np.full(std.shape[0], bandwidth)
        pad = self.truncate + 1.0
        self._origin = low / self.bandwidth_ - pad
        span = (high - low) / self.bandwidth_ + 2 * pad
        self.grid_shape_ = tuple(int(c) for c in np.ceil(span * self.cells_per_bandwidth) + 2)
        self.grid_cells_ = int(np.prod(self.grid_shape_, dtype=float))
        # the cells the data's bounding box reads (the rest pads the grid for the smoothing), and
        # one more each side: a point on the box's face may round into the next cell when read back
        first = np.full(span.shape, int(np.floor(pad * self.cells_per_bandwidth)) - 1)
        last = np.floor((span - pad) * self.cells_per_bandwidth).astype(int) + 3
        self._data_box = tuple(slice(max(a, 0), min(b, size))
                               for a, b, size in zip(first, last, self.grid_shape_, strict=True))
        self.n_features_in_ = std.shape[0]
        return self

    def grid_cells(self, X) -> int:
        """Number of grid cells ``fit(X)`` would use (cheap: one pass over X; fits nothing)."""
        return clone(self)._layout_cells(check_data(X, min_samples=1))

    def _layout_cells(self, X: np.ndarray) -> int:
        low, high, std = column_summary(X)
        return self.set_layout(X.shape[0], std, low, high).grid_cells_

    def max_cells(self) -> int:
        """Largest grid the memory budget allows (three float64 copies)."""
        return int(self.memory_budget // 24)

    def fits_budget(self) -> bool:
        """Whether the grid fixed by :meth:`set_layout` fits in ``memory_budget``."""
        return self.grid_cells_ <= self.max_cells()

    def check_budget(self) -> BinnedDensity:
        """``ValueError`` when the grid fixed by :meth:`set_layout` exceeds ``memory_budget``."""
        if not self.fits_budget():
            raise ValueError(
                f"BinnedDensity needs a grid of {self.grid_cells_:,} cells ({self.grid_shape_}), more "
                f"than memory_budget={self.memory_budget} allows; raise memory_budget or use the tree "
                "KDE (high dimension, or outliers far from the data)."
            )
        return self

    def fit(self, X, y=None) -> BinnedDensity:
        """Bin X onto the grid and smooth it."""
        X = check_data(X, min_samples=1)
        self._layout_cells(X)
        return self.check_budget().smooth(self.bin_counts(X), X.shape[0])

    def bin_counts(self, X: np.ndarray) -> np.ndarray:
        """Linear-binning weights of the rows of X on the grid, flat (``prod(grid_shape_)``,); the
        counts of disjoint row sets add up. Needs :meth:`set_layout` (or :meth:`fit`) first."""
        d = X.shape[1]
        counts = np.zeros(self.grid_cells_)
        # per row: d coordinates, then 2^d corner indices and weights (one bincount per chunk)
        chunks = list(row_chunks(X.shape[0], 8.0 * (4 * d + 2 * 2**d + 4), self.memory_budget / 4))
        for rows in tqdm(chunks, disable=not self.verbose or len(chunks) < 2, desc="binning"):
            index, weight = _cell_corners(self._cells(X[rows]), self.grid_shape_)
            counts += np.bincount(index.ravel(), weights=weight.ravel(), minlength=counts.shape[0])
        return counts

    def _cells(self, X: np.ndarray) -> np.ndarray:
        """Grid coordinates of the rows of X, in cells, shape (n, d)."""
        return (X / self.bandwidth_ - self._origin) * self.cells_per_bandwidth

    def smooth(self, counts: np.ndarray, n: int) -> BinnedDensity:
        """Turn the summed :meth:`bin_counts` of all n points into the density grid; returns self."""
        d, cells = len(self.grid_shape_), self.cells_per_bandwidth
        step = 1.0 / cells
        # binning and read-back each add δ²/6 of variance on average (class docstring); the cut
        # stays at `truncate` bandwidths
        sigma = np.sqrt(cells**2 - 1.0 / 3.0)
        grid = gaussian_filter(counts.reshape(self.grid_shape_), sigma=sigma,
                               truncate=self.truncate * cells / sigma, mode="constant")
        # the sampled kernel sums to 1 over cells: divide by n and by the cell volume (w, then x units)
        grid /= n * step**d * np.prod(self.bandwidth_)
        self._grid, self._slope_grids = grid, {}
        self._floor = float(np.exp(-0.5 * self.truncate**2 - 0.5 * d * np.log(2 * np.pi))
                            / (n * np.prod(self.bandwidth_)))
        return self

    def density(self, X) -> np.ndarray:
        """Density estimate at the rows of X, shape (n,)."""
        X = check_fitted_data(self, X, fitted_attribute="grid_shape_")
        return np.maximum(self._read_back((self._grid,), X, "density")[0], self._floor)

    def log_density_slope(self, X, scale=None) -> np.ndarray:
        r"""Norm of the gradient of the log-density, :math:`\|\nabla_y \log \hat p\|` with
        :math:`y = x / s`, at the rows of X, shape (n,).

        Central differences of the log of the smoothed grid (the density floored as in
        :meth:`density`), interpolated like the density. With the default ``scale`` (the bandwidths,
        :math:`y = w`, whitened coordinates) and a Gaussian KDE of a half-space it is the inverse
        Mills ratio of the depth in bandwidths (:mod:`spectral_leverage.spectral.boundary`); 0 far inside
        the data, ``FACE_SLOPE`` beyond the data's bounding box (see :meth:`slope_grids`).

        Parameters
        ----------
        X : array_like of shape (n, d)
        scale : None, float or array_like of shape (d,)
            The coordinates' units :math:`s > 0`, in the units of X; None: ``bandwidth_``.
        """
        return self.density_and_slopes(X, (scale,))[1][0]

    def density_and_slopes(self, X, scales=(None,), *,
                           curvature: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
        """(:meth:`density`, [:meth:`log_density_slope` for each of ``scales``, then, with
        ``curvature``, the log-density's curvature along its gradient (:meth:`slope_grids`)]) at
        the rows of X, in one pass over X."""
        X = check_fitted_data(self, X, fitted_attribute="grid_shape_")
        values = self._read_back((self._grid, *self.slope_grids(scales, curvature=curvature)), X, "density")
        return np.maximum(values[0], self._floor, out=values[0]), list(values[1:])

    def slope_grids(self, scales=(None,), *, curvature: bool = False) -> list[np.ndarray]:
        r"""The grids read by :meth:`log_density_slope` for each of ``scales``, and with
        ``curvature`` one more: the curvature of the log-density along its gradient in whitened
        coordinates, :math:`\hat g^\top (\nabla_w^2 \log \hat p)\, \hat g` with
        :math:`\hat g = \nabla_w \log \hat p / \|\nabla_w \log \hat p\|` (0 where the gradient is 0;
        computed as the derivative of the gradient's norm along it).

        Computed on first use (together, one pass) and kept: one more grid each. They are computed
        over the cells the data's bounding box reads. Beyond that box the KDE falls at least as
        steeply as at a face of a half-space, so the padding holds that face's values: slope
        :math:`\sqrt{2/\pi}` in whitened coordinates (times the geometric mean of the scale factors
        in others), curvature :math:`-2/\pi`, rather than the smoothing tails'. The temporaries are
        slabs along the first axis, a quarter of ``memory_budget``."""
        check_is_fitted(self, "_grid")
        keys = [_scale_factors(scale, self.bandwidth_) for scale in scales]
        keys += ["curvature"] if curvature else []
        cache = self.__dict__.setdefault("_slope_grids", {})
        missing = [key for key in dict.fromkeys(keys) if key not in cache]
        if missing:
            grid, step, d = self._grid, 1.0 / self.cells_per_bandwidth, self._grid.ndim
            box = getattr(self, "_data_box", tuple(slice(0, size) for size in grid.shape))
            # two more cells each side, so that the box's own cells get the (second) central
            # differences of the whole grid
            halo = tuple(slice(max(b.start - 2, 0), min(b.stop + 2, size))
                         for b, size in zip(box, grid.shape, strict=True))
            inner = tuple(slice(b.start - h.start, b.stop - h.start) for b, h in zip(box, halo, strict=True))
            new = {key: np.full(grid.shape, FACE_CURVATURE if key == "curvature"
                                else FACE_SLOPE * np.exp(np.mean(np.log(key)))) for key in missing}
            bytes_per_row = 8.0 * (2 * d + 6) * np.prod([h.stop - h.start for h in halo[1:]])
            for rows in row_chunks(box[0].stop - box[0].start, bytes_per_row, self.memory_budget / 4):
                start, stop = box[0].start + rows.start, box[0].start + rows.stop
                lo, hi = max(start - 2, 0), min(stop + 2, grid.shape[0])
                log_slab = np.log(np.maximum(grid[(slice(lo, hi), *halo[1:])], self._floor))
                keep = (slice(start - lo, stop - lo), *inner[1:])
                axes = [axis for axis in range(d) if log_slab.shape[axis] > 2]
                slab_gradients = {axis: np.gradient(log_slab, step, axis=axis) for axis in axes}
                norm = np.sqrt(sum(g**2 for g in slab_gradients.values()))  # the whitened slope
                target = (slice(start, stop), *box[1:])
                for key, out in new.items():
                    if key == "curvature":
                        out[target] = _curvature_along(slab_gradients, norm, keep, step)
                    elif set(key) == {1.0}:
                        out[target] = norm[keep]
                    else:
                        out[target] = np.sqrt(sum((key[axis] * g[keep]) ** 2
                                                  for axis, g in slab_gradients.items()))
            cache.update(new)
        return [cache[key] for key in keys]

    def _read_back(self, grids: tuple, X: np.ndarray, desc: str) -> np.ndarray:
        """Multilinear interpolation of each of ``grids`` at the rows of X (0 off the grid), shape
        ``(len(grids), n)``: the corners and weights once, then one gather per grid."""
        d, shape = X.shape[1], np.array(self.grid_shape_)
        out = np.empty((len(grids), X.shape[0]))
        # NumPy's gathers release the GIL: chunks of at most 2^16 rows, on all cores; per row: the
        # coordinates and their floor and fraction, then 2^d indices, weights, a weight factor and
        # gathered values
        bytes_per_row = 8.0 * (4 * d + 4 * 2**d + 2)
        chunk_bytes = min(self.memory_budget / (4 * N_THREADS), bytes_per_row * 2**16)
        chunks = list(row_chunks(X.shape[0], bytes_per_row, chunk_bytes))
        progress = tqdm(total=len(chunks), disable=not self.verbose or len(chunks) < 2, desc=desc)

        def fill(rows: slice) -> None:
            cells = self._cells(X[rows])
            off = np.any((cells < 0) | (cells > shape - 1), axis=1)
            index, weight = _cell_corners(np.clip(cells, 0, shape - 1), self.grid_shape_)
            weight[:, off] = 0.0
            for k, grid in enumerate(grids):
                out[k, rows] = np.einsum("ij,ij->j", np.take(grid.ravel(), index), weight)
            progress.update()

        try:
            on_all_cores(fill, chunks)
        finally:
            progress.close()
        return out

    def log_density(self, X) -> np.ndarray:
        """Natural log of :meth:`density`, shape (n,)."""
        return np.log(self.density(X))

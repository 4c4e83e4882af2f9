r"""Gaussian kernel density estimates for millions of points: exact at anchors, interpolated elsewhere.

:class:`TreeDensity` estimates the input density :math:`p` with a Gaussian KDE of diagonal bandwidth
:math:`H = \mathrm{diag}(h_1..h_d)` built on a random subsample of at most ``max_samples`` points,
the *anchors*:

.. math::

    \hat p(x) = \frac{1}{m \prod_j h_j} \sum_{a=1}^{m} \varphi\big((x - x_a) / h\big),

with :math:`\varphi` the standard normal density in :math:`d` dimensions.

* At up to ``max_samples`` query points the KDE is evaluated directly and exactly: the exponents
  :math:`-\|w - a\|^2 / 2 + \|w\|^2/2 = w \cdot a - \|a\|^2/2` against all anchors as one matrix
  product per block of rows (in whitened coordinates centred on the anchors' mean), then a
  log-sum-exp shifted by each row's largest, so that no query underflows however far it is. The
  expansion loses about :math:`\epsilon\,(\|w\| + r)\,r` in the log, with :math:`r` the
  anchors' largest norm (both in bandwidths from the anchors' mean) and :math:`\epsilon` the
  working precision's. The work runs in float32 when :math:`\epsilon_{32} r^2 \le 10^{-4}`
  (:attr:`TreeDensity.SINGLE_LOG_ERROR`: anchors within 41 bandwidths of their mean, standardised
  data without far outliers), an error that changes no score (:math:`h` moves by less than
  :math:`p` does), else in float64; float32 halves the product's cost and the memory traffic of
  every pass over the kernel terms (measured, 8-D, 16384 anchors: 7.8 ns a row and anchor in
  float64 against 2.1 in float32, about 4 with the moments). In float64 :meth:`fit` warns when
  anchors lie more than about :math:`7 \cdot 10^4` bandwidths out (a float bandwidth far below
  the data's spread). In four or more dimensions this is several times faster than a dual-tree
  KDE at a tolerance of 1 %: the kernel is wide there, and tree pruning saves little.
* A query on an anchor (bitwise: the anchor's own row, or an exact copy of it) is given the KDE
  of the other :math:`m - 1` anchors, its value and its moments alike: its own kernel term would
  count the row as its own neighbour. From about five dimensions on that term is no longer small:
  with Scott's rule on 16384 anchors of standard normal rows it is, at a row of typical norm,
  16 % of the density in 5-D and twice it in 8-D (the Gaussian's formula), and when it was kept
  (measured, 8-D, n = 10^5) the anchors' density read 2.5x the true one at the median and their
  density scores 0.6x, so a row's score depended on whether it was drawn as an anchor.
  Identical rows get the same value.
* A larger batch of queries, where that costs less (:meth:`TreeDensity.interpolates`: in few
  dimensions, with many rows within reach of an anchor), is answered by Nadaraya–Watson
  interpolation over the ``n_interp``
  nearest anchors (one pykdtree k-NN query per point; Gaussian weights of half a bandwidth), to
  second order: the weighted mean of :math:`\log \hat p(a) + \nabla \log \hat p(a) \cdot \delta +
  \delta^\top \nabla^2 \log \hat p(a)\, \delta / 2`, :math:`\delta = w - a`, with the anchors' exact
  gradients and Hessians (below). The KDE is smooth on the scale of the bandwidth, so the
  interpolation costs little accuracy. From five dimensions on the anchors are about a bandwidth
  apart or more (16384 anchors, Scott's rule: the median query lies 0.98 bandwidths from its
  nearest anchor in a 5-D cube, 1.97 in 8-D), where the first order does not suffice: against the
  direct KDE (90th percentiles of the log-density's error, 16384 anchors) the first order read
  0.16 within one bandwidth and 0.29 at 1–1.5 in a 5-D cube; the second 0.03 and 0.10
  (4096 anchors of a 3-D cube: 0.13 at zeroth order, 0.06 at first, 0.009 at second). A query
  point farther than 1.5 bandwidths from every anchor (an outlier, or most points of an 8-D cube)
  is evaluated directly.
* For the boundary correction (:mod:`spectral_leverage.spectral.boundary`) the same kernel terms give the
  log-density's gradient and curvature in whitened coordinates: with :math:`E_t` the mean over the
  anchors weighted by their kernel terms at :math:`w`,
  :math:`\nabla_w \log \hat p = E_t[a] - w` and :math:`\nabla_w^2 \log \hat p = \mathrm{Cov}_t[a] - I`,
  so the curvature along the unit gradient :math:`\hat g` is :math:`\mathrm{Var}_t[\hat g \cdot a] - 1`
  (one more matrix product per block of the kernel terms with the anchors' coordinates and with
  their projections on :math:`\hat g`, in the direct KDE's precision; the anchors' own Hessians,
  which the interpolation reads, with their pairwise products in float64). They are interpolated
  like the log-density: the gradient to first order,
  :math:`\nabla \log \hat p(a) + \nabla^2 \log \hat p(a)\, \delta`, the curvature to zeroth
  order (the full Hessian halved the slope's error against the Hessian taken along the gradient
  only: 90th percentile 0.065 → 0.029 over a 3-D cube).
"""

from __future__ import annotations

import logging
import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from pykdtree.kdtree import KDTree
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import validate_data

from .._blocks import DEFAULT_MEMORY_BUDGET, N_THREADS, on_all_cores, progress, row_chunks, use_n_jobs
from .._validation import (
    MEMORY_BUDGET,
    N_JOBS,
    POSITIVE_INT,
    RANDOM_STATE,
    NumericInterval,
    check_density_range,
    check_fitted_data,
    validate_params,
)
from ._kde_moments import anchor_powers, log_kde_moments, log_kde_slope
from ._row_keys import row_keys
from ._tree_interpolation import _Interpolation
from ._tree_pickling import _RebuildsTree
from .bandwidth import _anchor_indices, _scale_factors, feature_bandwidths

__all__ = ["TreeDensity"]

logger = logging.getLogger(__name__)


class TreeDensity(_RebuildsTree, _Interpolation, BaseEstimator):
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
    memory_budget : int, default=1 GiB
        Bytes of query temporaries per chunk.
    random_state : int, numpy Generator or None
        Seeds the anchor subsample.
    verbose : bool, default=False
        Show a progress bar over query chunks.
    n_jobs : int or None, default=None
        Threads of the fit, BLAS's included, with joblib's meaning: None is 1 unless inside a
        ``joblib.parallel_config(n_jobs=...)`` context, -1 every core (at most one per core).
        BLAS is held to one thread while the row blocks run, threaded or not, and to ``n_jobs``
        threads between them (never above a limit set outside).

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

    _parameter_constraints: ClassVar[dict] = {
        "bandwidth": [StrOptions({"scott", "silverman"}), NumericInterval(Real, 0, None, closed="neither")],
        "max_samples": [NumericInterval(Integral, 1, None, closed="left"), None],
        "n_interp": POSITIVE_INT,
        "memory_budget": MEMORY_BUDGET,
        "random_state": RANDOM_STATE,
        "verbose": ["boolean"],
        "n_jobs": N_JOBS,
    }

    def __init__(self, bandwidth="scott", *, max_samples: int | None = 2**14, n_interp: int = 8,
                 memory_budget: int = DEFAULT_MEMORY_BUDGET, random_state=None, verbose: bool = False,
                 n_jobs=None):
        self.bandwidth = bandwidth
        self.max_samples = max_samples
        self.n_interp = n_interp
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    @use_n_jobs
    def fit(self, X, y=None) -> TreeDensity:
        """Choose the anchors and bandwidths, and build the KDE and the anchor tree."""
        validate_params(self)
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=1)
        check_density_range(X)
        n, d = X.shape
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
        # a row on an anchor: the mean over the other m - 1, not m
        self._leave_out_log = float(np.log(m / (m - 1))) if m > 1 else 0.0
        # the matrix-product distances lose about eps·‖w‖·‖a‖ (centred) in the log
        self._centre = self._anchors.mean(axis=0)
        radius = float(np.sqrt(np.max(np.sum((self._anchors - self._centre) ** 2, axis=1))))
        single = np.finfo(np.float32).eps * radius**2 <= self.SINGLE_LOG_ERROR
        self._dtype = np.float32 if single else np.float64
        # the anchors' rows as byte strings, sorted: a query row is matched to the anchor it is
        # bitwise (+ 0.0: -0.0 reads as 0.0) in O(log m)
        self._anchor_keys = row_keys(self._anchors)
        self._anchor_order = np.argsort(self._anchor_keys, kind="stable")
        self._anchor_keys = self._anchor_keys[self._anchor_order]
        if np.finfo(float).eps * radius**2 > self.MAX_LOG_ERROR:
            warnings.warn(
                f"the data span {radius:.3g} bandwidths from their mean: the KDE's log-density carries "
                f"errors up to about {np.finfo(float).eps * radius**2:.2g}; use a wider bandwidth (or "
                "the 'scott' rule) for data this spread out.", stacklevel=2)
        self._tree = self._near_share = None
        self._anchor_log_density = self._anchor_gradient = self._anchor_curvature = None
        self._anchor_hessian = None
        return self

    @use_n_jobs
    def density(self, X) -> np.ndarray:
        """Density estimate at the rows of X, shape (n,). A row on an anchor leaves it out
        (module docstring)."""
        return np.exp(self.log_density(X))

    @use_n_jobs
    def log_density(self, X) -> np.ndarray:
        """Natural log of :meth:`density`, shape (n,)."""
        X = check_fitted_data(self, X, fitted_attribute="bandwidth_")
        return self._log_density(X, X.shape[0])

    @use_n_jobs
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
        interpolation as ``n_batch`` chooses (:meth:`interpolates`); the last two None without
        ``moments``."""
        return self._interpolate(W, moments) if self.interpolates(n_batch) else self._direct(W, moments)

    def _rebuild_tree(self) -> None:
        if getattr(self, "_anchor_log_density", None) is not None:
            self._tree = KDTree(self._anchors)

    #: largest error in the log-density :meth:`fit` accepts without a warning (module docstring)
    MAX_LOG_ERROR = 1e-6
    #: the direct KDE runs in float32 when its error bound, float32's epsilon times the anchors'
    #: squared radius in bandwidths, is at most this (anchors within 41 bandwidths of their mean);
    #: else in float64 (module docstring)
    SINGLE_LOG_ERROR = 1e-4
    #: the direct KDE's exponents, shifted by each row's largest, are raised to this (float32's
    #: smallest normal exponential is e^-87.3): a kernel term under it is nothing in the sums
    EXPONENT_FLOOR = -87.0

    def _on_anchor(self, W: np.ndarray) -> np.ndarray:
        """Index of the anchor each whitened row of W is bitwise (an exact copy of), else -1."""
        keys = row_keys(W)
        at = np.minimum(np.searchsorted(self._anchor_keys, keys), self._anchor_keys.shape[0] - 1)
        return np.where(self._anchor_keys[at] == keys, self._anchor_order[at], -1)

    def _direct(self, W: np.ndarray, moments: bool = False, hessian: bool = False,
                leave_out: bool = True) -> tuple:
        """Exact log-KDE at whitened rows W (module docstring): blocks of rows against all anchors,
        on all cores; with ``moments`` also its whitened gradient and curvature along it
        (:mod:`~._kde_moments`), else None for them; with ``hessian`` (and ``moments``) a fourth
        value, the whitened Hessians' upper triangles (:func:`~._kde_moments.anchor_powers`' order).
        ``leave_out``: a row on an anchor is the KDE of the other anchors (off for the anchors'
        own full values, which the interpolation reads)."""
        centre = self._centre
        anchors = self._anchors - centre
        half_sq = 0.5 * np.einsum("ij,ij->i", anchors, anchors)
        # the Hessians' second moments take float64 (about ‖a‖² each, their covariance about 1)
        dtype = np.float64 if moments and hessian else self._dtype
        # one product of [w, 1] with [a, -‖a‖²/2] gives w·a - ‖a‖²/2 = -‖w - a‖²/2 + ‖w‖²/2
        lifted_t = np.vstack([anchors.T, -half_sq]).astype(dtype)
        anchors_low, ones = anchors.astype(dtype), np.ones(anchors.shape[0], dtype)
        out = np.empty(W.shape[0])
        gradient, along = (np.empty(W.shape), np.empty(W.shape[0])) if moments else (None, None)
        powers = anchor_powers(anchors) if moments and hessian else None
        hessians = np.empty((W.shape[0], powers.shape[1] - W.shape[1])) if powers is not None else None
        matches = self._on_anchor(W) if leave_out else np.full(W.shape[0], -1)
        # per row the exponents (turned into the kernel terms in place) and, for the slope, the
        # anchors' projections; blocks of a few MiB stay in cache, the same with the moments or
        # without (float32 sums depend on the blocks: the density must not depend on the moments)
        bytes_per_row = 2.0 * np.dtype(dtype).itemsize * anchors.shape[0]
        chunk_bytes = min(self.memory_budget / (2 * N_THREADS), 2**22)
        chunks = list(row_chunks(W.shape[0], bytes_per_row, chunk_bytes))
        bar = progress(total=len(chunks), verbose=self.verbose and len(chunks) >= 2, desc="density")

        def fill(rows: slice) -> None:
            query = W[rows] - centre
            lifted = np.ones((query.shape[0], query.shape[1] + 1), dtype)
            lifted[:, :-1] = query
            terms = lifted @ lifted_t
            top = terms.max(axis=1)
            terms -= top[:, None]
            # float32 exp takes a slow path (about 10x) where its result leaves the normal range;
            # terms under e^-87 of the largest change no sum here
            np.maximum(terms, self.EXPONENT_FLOOR, out=terms)
            np.exp(terms, out=terms)
            # a row on an anchor (bitwise: the same row) leaves it out: the mean over the other
            # m - 1 (one anchor alone: nothing)
            on = np.flatnonzero(matches[rows] >= 0)
            terms[on, matches[rows][on]] = 0.0
            total = (terms @ ones).astype(float)
            total[on] = np.maximum(total[on], np.finfo(float).tiny)
            out[rows] = np.log(total) + top - 0.5 * np.einsum("ij,ij->i", query, query)
            out[rows.start + on] += self._leave_out_log
            if moments:
                if hessian:
                    gradient[rows], along[rows], hessians[rows] = log_kde_moments(terms, total, query, powers)
                else:
                    gradient[rows], along[rows] = log_kde_slope(terms, total, query, anchors_low,
                                                                lifted_t[:-1])
            bar.update()

        try:
            on_all_cores(fill, chunks)
        finally:
            bar.close()
        out += self._log_norm
        return (out, gradient, along, hessians) if hessian else (out, gradient, along)


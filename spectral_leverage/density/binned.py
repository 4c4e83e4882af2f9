r"""Gaussian kernel density estimate of every point, binned on a grid (low dimension).

Linear binning, a Gaussian filter and multilinear read-back: linear time in n; the grid's size
bounds the memory (see :class:`BinnedDensity`).
"""

from __future__ import annotations

import logging
from numbers import Real
from typing import ClassVar

import numpy as np
from scipy.ndimage import gaussian_filter
from sklearn.base import BaseEstimator, clone
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._blocks import (
    DEFAULT_MEMORY_BUDGET,
    N_THREADS,
    column_summary,
    on_all_cores,
    progress,
    row_chunks,
    use_n_jobs,
)
from .._validation import (
    MEMORY_BUDGET,
    N_JOBS,
    POSITIVE_INT,
    NumericInterval,
    check_bandwidth_range,
    check_data,
    check_density_range,
    check_fitted_data,
    check_positive,
    check_samples,
    validate_params,
)
from ._grid import FACE_CURVATURE, FACE_SLOPE, cell_corners, face_value, log_slope_grids
from .bandwidth import _scale_factors, bandwidth_factor, check_bandwidth, robust_range, robust_scale
from .far_rows import FarRows

__all__ = ["FACE_CURVATURE", "FACE_SLOPE", "BinnedDensity"]

logger = logging.getLogger(__name__)

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
    would not fit in ``memory_budget``. Rows more than :attr:`BOX_MARGIN` bandwidths outside the
    range of the bulk of the data (:func:`~spectral_leverage.density.bandwidth.robust_range`) do not
    stretch it: their kernel sums are added directly (:mod:`~spectral_leverage.density.far_rows`),
    exactly. Queries farther than ``truncate`` bandwidths from every data point get the floor
    density of one point at that distance (an upper bound of the KDE).

    Parameters
    ----------
    bandwidth : str or float, default="scott"
        "scott" or "silverman" (rules on the standard deviations, with n points), or an isotropic
        bandwidth in the units of X.
    cells_per_bandwidth : int, default=3
        Grid cells per bandwidth along each axis.
    truncate : float, default=4.0
        The Gaussian kernel is cut at this many bandwidths (relative mass lost < 1e-4 per axis).
    memory_budget : int, default=1 GiB
        Bytes for the grid (three float64 copies) and for the per-chunk binning temporaries.
    verbose : bool, default=False
        Progress bar over chunks.
    n_jobs : int or None, default=None
        Threads of the fit, BLAS's included, with joblib's meaning: None is 1 unless inside a
        ``joblib.parallel_config(n_jobs=...)`` context, -1 every core (at most one per core).
        BLAS is held to one thread while the row blocks run, threaded or not, and to ``n_jobs``
        threads between them (never above a limit set outside).

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

    #: scikit-learn checks this estimator fails by design (:func:`~spectral_leverage._validation.
    #: expected_failed_checks`): the binned KDE is the low-dimensional one
    _expected_failed_checks: ClassVar[dict[str, str]] = dict.fromkeys(
        ["check_estimators_dtypes", "check_dtype_object"],
        "on the check's 5- and 10-feature data the grid exceeds memory_budget, and fit refuses with a "
        "ValueError naming the fix (the tree KDE, which SpectralLeverage picks there by itself)")

    _parameter_constraints: ClassVar[dict] = {
        "bandwidth": [StrOptions({"scott", "silverman"}), NumericInterval(Real, 0, None, closed="neither")],
        "cells_per_bandwidth": POSITIVE_INT,
        "truncate": [NumericInterval(Real, 0, None, closed="neither")],
        "memory_budget": MEMORY_BUDGET,
        "verbose": ["boolean"],
        "n_jobs": N_JOBS,
    }

    #: Bandwidths the grid reaches past the bulk's range (a standard normal sample's extremes lie
    #: 7 bandwidths past its 0.1 % quantiles at n = 10⁵, d = 3): rows beyond are far rows.
    BOX_MARGIN = 8.0

    def __init__(self, bandwidth="scott", *, cells_per_bandwidth: int = 3, truncate: float = 4.0,
                 memory_budget: int = DEFAULT_MEMORY_BUDGET, verbose: bool = False, n_jobs=None):
        self.bandwidth = bandwidth
        self.cells_per_bandwidth = cells_per_bandwidth
        self.truncate = truncate
        self.memory_budget = memory_budget
        self.verbose = verbose
        self.n_jobs = n_jobs

    def set_layout(self, n: int, std: np.ndarray, low: np.ndarray, high: np.ndarray,
                   bulk: tuple | None = None) -> BinnedDensity:
        """Fix the bandwidths and the grid from summary statistics of the data: row count, column
        scales (:func:`~spectral_leverage.density.bandwidth.robust_scale`), minima and maxima, and
        the range of the bulk of the rows (:func:`~spectral_leverage.density.bandwidth.robust_range`;
        None: the minima and maxima), what :meth:`fit` computes (a distributed fit reduces them
        over blocks). The grid spans the bulk's range widened by :attr:`BOX_MARGIN` bandwidths,
        within the minima and maxima; rows outside it are far rows (:meth:`is_far`), which need
        :meth:`set_far_rows` before the density is read. Sets ``bandwidth_``, ``grid_shape_``,
        ``grid_cells_``, ``has_far_rows_`` and ``n_features_in_``; :meth:`fit` also checks the grid
        against ``memory_budget``."""
        check_samples(self.cells_per_bandwidth, "cells_per_bandwidth")
        check_positive(self.truncate, "truncate")
        bandwidth = check_bandwidth(self.bandwidth)
        std, low, high = (np.asarray(a, dtype=float) for a in (std, low, high))
        if isinstance(bandwidth, str):
            self.bandwidth_ = np.where(std == 0, 1.0, std) * bandwidth_factor(bandwidth, n, std.shape[0])
        else:
            check_bandwidth_range(bandwidth, low, high)
            self.bandwidth_ = np.full(std.shape[0], bandwidth)
        if bulk is not None:
            margin = self.BOX_MARGIN * self.bandwidth_
            box = (np.maximum(low, bulk[0] - margin), np.minimum(high, bulk[1] + margin))
            self.has_far_rows_ = bool(np.any(box[0] > low) or np.any(box[1] < high))
            low, high = box
        else:
            self.has_far_rows_ = False
        self._box, self._n = (low, high), n
        self.set_far_rows(np.empty((0, std.shape[0])))  # none until the caller gives them
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
        return self.set_layout(X.shape[0], robust_scale(std, X), low, high, robust_range(X)).grid_cells_

    def is_far(self, X: np.ndarray) -> np.ndarray:
        """Whether each row of X lies outside the grid's box: the far rows, shape (n,) bool."""
        low, high = self._box
        return np.any((X < low) | (X > high), axis=1)

    def set_far_rows(self, rows: np.ndarray) -> BinnedDensity:
        """Take the far rows (:meth:`is_far`) of the data, every one of them; returns self."""
        self._far = FarRows(np.asarray(rows, dtype=float) / self.bandwidth_, self.truncate,
                            1.0 / (self._n * np.prod(self.bandwidth_)))
        return self

    def max_cells(self, nbytes: float | None = None) -> int:
        """Largest grid ``nbytes`` (default ``memory_budget``) allow (three float64 copies)."""
        return int((self.memory_budget if nbytes is None else nbytes) // 24)

    def fits_budget(self, nbytes: float | None = None) -> bool:
        """Whether the grid fixed by :meth:`set_layout` fits in ``nbytes`` (default ``memory_budget``)."""
        return self.grid_cells_ <= self.max_cells(nbytes)

    def check_budget(self) -> BinnedDensity:
        """``ValueError`` when the grid fixed by :meth:`set_layout` exceeds ``memory_budget``."""
        if not self.fits_budget():
            raise ValueError(
                f"BinnedDensity needs a grid of {self.grid_cells_:,} cells ({self.grid_shape_}), more "
                f"than memory_budget={self.memory_budget} allows; raise memory_budget or use the tree "
                "KDE (high dimension, or outliers far from the data)."
            )
        return self

    @use_n_jobs
    def fit(self, X, y=None) -> BinnedDensity:
        """Bin X onto the grid and smooth it."""
        validate_params(self)
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        check_density_range(X)
        self._layout_cells(X)
        if self.has_far_rows_:
            self.set_far_rows(X[self.is_far(X)])
        return self.check_budget().smooth(self.bin_counts(X), X.shape[0])

    def bin_counts(self, X: np.ndarray) -> np.ndarray:
        """Linear-binning weights of the rows of X on the grid, flat (``prod(grid_shape_)``,), far
        rows left out; the counts of disjoint row sets add up. Needs :meth:`set_layout` (or
        :meth:`fit`) first."""
        if self.has_far_rows_:
            X = X[~self.is_far(X)]
        d = X.shape[1]
        counts = np.zeros(self.grid_cells_)
        # per row: d coordinates, then 2^d corner indices and weights (one bincount per chunk)
        chunks = list(row_chunks(X.shape[0], 8.0 * (4 * d + 2 * 2**d + 4), self.memory_budget / 4))
        for rows in progress(chunks, verbose=self.verbose and len(chunks) >= 2, desc="binning"):
            index, weight = cell_corners(self._cells(X[rows]), self.grid_shape_)
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

    @use_n_jobs
    def density(self, X, *, training: bool = False) -> np.ndarray:
        """Density estimate at the rows of X, shape (n,); ``training``: X are rows of the fitted data,
        whose far rows (:mod:`~spectral_leverage.density.far_rows`) leave out their own term."""
        X = check_fitted_data(self, X, fitted_attribute="grid_shape_")
        values = self._with_far_rows(X, self._read_back((self._grid,), X, "density"), [], training)
        return np.maximum(values[0], self._floor)

    @use_n_jobs
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

    @use_n_jobs
    def density_and_slopes(self, X, scales=(None,), *, curvature: bool = False,
                           training: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
        """(:meth:`density`, [:meth:`log_density_slope` for each of ``scales``, then, with
        ``curvature``, the log-density's curvature along its gradient (:meth:`slope_grids`)]) at
        the rows of X, in one pass over X (``training`` as in :meth:`density`)."""
        X = check_fitted_data(self, X, fitted_attribute="grid_shape_")
        values = self._read_back((self._grid, *self.slope_grids(scales, curvature=curvature)), X, "density")
        faces = [face_value(_scale_factors(scale, self.bandwidth_)) for scale in scales] \
            + ([face_value("curvature")] if curvature else [])
        values = self._with_far_rows(X, values, faces, training)
        return np.maximum(values[0], self._floor, out=values[0]), list(values[1:])

    def _with_far_rows(self, X: np.ndarray, values: np.ndarray, faces: list, training: bool) -> np.ndarray:
        """``values`` read back from the grids with the far rows' sums added to the density (the
        first row), and off the grid the slope grids' padding values (``faces``): beyond the data
        the KDE falls at least as steeply as at a face."""
        if not len(self._far):
            return values
        low, high = self._box
        reach = self.truncate * self.bandwidth_  # the far rows lie outside the box: rows within
        near = np.flatnonzero(np.any((X < low + reach) | (X > high - reach), axis=1))  # reach of one
        values[0, near] += self._far.density(X[near] / self.bandwidth_, training)
        pad = (self.truncate + 1.0) * self.bandwidth_
        off = near[np.any((X[near] < low - pad) | (X[near] > high + pad), axis=1)]
        for row, face in enumerate(faces, start=1):
            values[row, off] = face
        return values

    @use_n_jobs
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
            box = getattr(self, "_data_box", tuple(slice(0, size) for size in self._grid.shape))
            cache.update(log_slope_grids(self._grid, box, self._floor, 1.0 / self.cells_per_bandwidth,
                                         missing, self.memory_budget / 4))
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
        bar = progress(total=len(chunks), verbose=self.verbose and len(chunks) >= 2, desc=desc)

        def fill(rows: slice) -> None:
            cells = self._cells(X[rows])
            off = np.any((cells < 0) | (cells > shape - 1), axis=1)
            index, weight = cell_corners(np.clip(cells, 0, shape - 1), self.grid_shape_)
            weight[:, off] = 0.0
            for k, grid in enumerate(grids):
                out[k, rows] = np.einsum("ij,ij->j", np.take(grid.ravel(), index), weight)
            bar.update()

        try:
            on_all_cores(fill, chunks)
        finally:
            bar.close()
        return out

    @use_n_jobs
    def log_density(self, X) -> np.ndarray:
        """Natural log of :meth:`density`, shape (n,)."""
        return np.log(self.density(X))

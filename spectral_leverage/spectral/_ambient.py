"""The fitted density as the scores see it, and the per-block steps of the scores' fit.

Each function here runs on one row block of X (the whole array in memory, a chunk on Dask) and is
small and picklable, so that :class:`~spectral_leverage.spectral.SpectralLeverage` runs the same
fit on every backend (:mod:`spectral_leverage.backends`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Real

import numpy as np

from .._blocks import row_chunks
from ..density import BinnedDensity, KNNDensity, TreeDensity, intrinsic_dimension
from .boundary import boundary_density

__all__ = ["TINY_DENSITY", "AmbientDensity", "ambient_block", "bin_block", "capped_scores",
           "check_spread", "choose_dimension", "far_block", "given_density", "knn_density_block",
           "knn_radius_block"]

#: Floor of the ambient densities, so that a density underflowing far from all data stays > 0.
TINY_DENSITY = float(np.finfo(float).tiny)


@dataclass(frozen=True, eq=False)
class AmbientDensity:
    """A fitted ambient KDE as the scores see it; small and picklable (the Dask path ships it to
    the workers). Called on rows of the active features (units of X), it returns the KDE per unit
    length-scale volume and the density the scores are taken of: the half-space model's
    :func:`~spectral_leverage.spectral.boundary.boundary_density` when ``boundary`` holds its
    (unit kernel, reg, d), else the KDE itself."""

    model: BinnedDensity | TreeDensity
    length: np.ndarray
    boundary: tuple | None

    #: bandwidths within this factor of proportional to the length scales count as proportional
    ISOTROPY = 1.1

    @property
    def _scales(self) -> tuple:
        """Coordinates of the slopes read: whitened, and the kernel's unit-length ones when the
        bandwidths are not proportional to the length scales (within ``ISOTROPY``)."""
        ratio = self.model.bandwidth_ / self.length
        return (None,) if ratio.max() <= self.ISOTROPY * ratio.min() else (None, self.length)

    def prepare(self) -> AmbientDensity:
        """Compute the binned KDE's slope grids now (before the object is shipped); returns self."""
        if self.boundary is not None and isinstance(self.model, BinnedDensity):
            self.model.slope_grids(self._scales, curvature=True)
        return self

    def __call__(self, active: np.ndarray, n_batch: int | None = None,
                 training: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(KDE per unit volume, density for the scores) at validated rows ``active``, part of a
        batch of ``n_batch`` rows (default: these rows; the tree KDE's choice of evaluation);
        ``training``: rows of the fitted data (the binned KDE's far rows leave out their own term)."""
        volume, corrected = np.prod(self.length), self.boundary is not None
        if isinstance(self.model, TreeDensity):
            n_batch = active.shape[0] if n_batch is None else n_batch
            log_p, values = (self.model._log_density_and_slopes(active, n_batch, self._scales, True)
                             if corrected else (self.model._log_density(active, n_batch), []))
            # far from all data the density underflows to 0; h's limit there is k(0)/λ, which the
            # smallest normal float gives (the scores are capped at the isolated point's bound)
            p_unit = np.maximum(np.exp(log_p + np.log(volume)), TINY_DENSITY)
        elif corrected:
            p_unit, values = self.model.density_and_slopes(active, self._scales, curvature=True,
                                                           training=training)
            p_unit *= volume
        else:
            p_unit, values = self.model.density(active, training=training) * volume, []
        if not corrected:
            return p_unit, p_unit
        *slopes, curvature = values
        # the bandwidth in unit-length coordinates: their geometric mean if they are about equal,
        # else the one along the log-gradient: a depth of u bandwidths there is
        # u ‖∇_w log p‖ / ‖∇_z log p‖ unit lengths (w = x / b, z = x / ℓ)
        unit_bandwidth = float(np.exp(np.mean(np.log(self.model.bandwidth_ / self.length))))
        if len(slopes) == 2:
            flat = np.full(p_unit.shape, unit_bandwidth)
            unit_bandwidth = np.divide(slopes[0], slopes[1], out=flat, where=slopes[1] > 0)
        return p_unit, boundary_density(p_unit, slopes[0], *self.boundary, unit_bandwidth, curvature)


#: the densities are held as float64 in X's units and in the kernel's: their volume factors,
#: prod(spread) and prod(length / spread), must stay well inside its range (1e±308)
MAX_LOG10_VOLUME = 250.0
#: |log10| of a feature's spread beyond which squared distances in X's units (the KD-trees, the
#: intrinsic dimension) leave float64's normal range
MAX_LOG10_SPREAD = 150.0
#: a length scale this many times the data's spread (geometric mean over features) warns
WIDE_KERNEL = 30.0
#: features whose spreads in the kernel's units differ by this factor warn
UNEVEN_FEATURES = 100.0


def check_spread(std: np.ndarray, length: np.ndarray) -> None:
    """Refuse data whose densities would overflow or underflow float64 (an extreme magnitude, or a
    length scale extremely far from the data's spread); warn where the answer says little: a
    length scale much wider than the data (every point sees every other, the effective dimension
    is small, and density-based scores underestimate it), or features whose spreads in the
    kernel's units differ by more than 100x (the kernel sees mostly the widest)."""
    spread = np.where(std > 0, std, length)
    log_volume, log_ratio = float(np.sum(np.log10(spread))), float(np.sum(np.log10(length / spread)))
    if (max(abs(log_volume), abs(log_ratio)) > MAX_LOG10_VOLUME
            or np.max(np.abs(np.log10(spread))) > MAX_LOG10_SPREAD):
        raise ValueError(
            f"X's spread (standard deviations {np.min(spread):.3g}..{np.max(spread):.3g}) and the "
            f"kernel's length scale ({np.min(length):.3g}..{np.max(length):.3g}) are too extreme for "
            "float64 densities: standardise X and choose a length scale near its spread.")
    wide = float(np.exp(np.mean(np.log(length / spread))))
    if wide > WIDE_KERNEL:
        warnings.warn(
            f"the kernel's length scale is {wide:.3g}x the data's standard deviation: the effective "
            "dimension is small there and the spectral scores underestimate it; standardise X and use "
            "a length scale near 1, or method='recursive-rls' or 'exact'.", UserWarning, stacklevel=3)
    unit = spread / length
    if unit.max() > UNEVEN_FEATURES * unit.min():
        warnings.warn(
            f"the features' spreads in the kernel's units differ by {unit.max() / unit.min():.3g}x, so "
            "the kernel sees mostly the widest: standardise X (and drop a target column if X has one).",
            UserWarning, stacklevel=3)


def bin_block(block: np.ndarray, model: BinnedDensity, active: np.ndarray) -> tuple[np.ndarray]:
    """The binned KDE's grid counts of a block's active features (summed over blocks)."""
    return (model.bin_counts(block[:, active]),)


def far_block(block: np.ndarray, model: BinnedDensity, active: np.ndarray) -> np.ndarray:
    """Whether each row of a block is a far row of the binned KDE (outside its grid's box)."""
    return model.is_far(block[:, active])


#: Copies of a row the density's evaluation makes at once (the active features, whitened rows,
#: gradients and their scaled copies): a block is evaluated in chunks of rows whose copies fit
#: the memory budget, not as one (at n = 10⁶ in 32-D four copies of X took 1 GiB).
ROW_COPIES = 8


def _row_blocks(block: np.ndarray, memory_budget: float):
    """Slices of ``block``'s rows whose :data:`ROW_COPIES` copies fit ``memory_budget``
    (:func:`~spectral_leverage._blocks.row_chunks`)."""
    return row_chunks(block.shape[0], 8.0 * ROW_COPIES * block.shape[1], memory_budget)


def ambient_block(block: np.ndarray, ambient: AmbientDensity, active: np.ndarray, n: int) -> np.ndarray:
    """KDE per unit length-scale volume of a block's rows, part of a batch of n rows, and with the
    boundary correction the density the scores are taken of as a second column."""
    out = np.empty((block.shape[0], 1 if ambient.boundary is None else 2))
    for rows in _row_blocks(block, ambient.model.memory_budget):
        p_unit, p_score = ambient(block[rows, active], n, training=True)
        out[rows, 0] = p_unit
        if ambient.boundary is not None:
            out[rows, 1] = p_score
    return out[:, 0] if ambient.boundary is None else out


def knn_radius_block(block: np.ndarray, model: KNNDensity, active: np.ndarray,
                     length: np.ndarray) -> np.ndarray:
    """(distance to its k-th tree point, tree points counted) of each row of the fitted data, in
    the kernel's unit-length coordinates
    (:meth:`~spectral_leverage.density.KNNDensity._kth_neighbour`)."""
    found = np.empty((block.shape[0], 2))
    for rows in _row_blocks(block, model.memory_budget):
        found[rows] = model._kth_neighbour(block[rows, active] / length, True)
    return found


def knn_density_block(found: np.ndarray, model: KNNDensity, floor: float | None) -> np.ndarray:
    """The k-NN density from :func:`knn_radius_block`'s rows, the radii raised to ``floor`` (the
    smallest positive radius)."""
    return np.exp(model._log_density_at(found, floor, True))


def capped_scores(p: np.ndarray, h, cap: float) -> np.ndarray:
    """``h(p)``, capped at the isolated point's bound ``cap``."""
    return np.minimum(h(p), cap)


def given_density(density, X: np.ndarray) -> np.ndarray:
    """A user's density at the rows of X: ``density`` is a number, an (n,) array or a callable
    ``density(X)``; checked to give one finite positive value per row."""
    density = density(X) if callable(density) else density
    if isinstance(density, Real):
        density = np.full(X.shape[0], float(density))
    density = np.asarray(density, dtype=float)
    if density.shape != (X.shape[0],):
        raise ValueError(
            f"density must give one value per row of X, shape ({X.shape[0]},); got shape {density.shape}."
        )
    if not np.all(np.isfinite(density)) or np.any(density <= 0):
        raise ValueError("density values must be finite and > 0.")
    return density


#: "auto" reads the data as lying near a lower-dimensional set when the estimate is below this
#: share of d ...
LOW_DIMENSION = 0.9
#: ... and the neighbourhoods' flatness (the smallest local variance relative to uniform data's) is
#: below this: full-dimensional data read 0.96-1.37, CCPP 0.61-0.78, embedded sets at most 0.15
FLAT = 0.3


def choose_dimension(choice, Z: np.ndarray | None, d: int, given: bool, max_samples: int | None,
                     random_state) -> tuple[float, bool]:
    """(d', whether to use the k-NN density in d') per ``intrinsic_dim`` ``choice`` for d
    non-constant features with unit-length geometry Z: d' with the k-NN density for a given
    number, and for "auto" when the data lie near a lower-dimensional set; else the ambient d with
    the KDE (None, a ``given`` density, or "auto" on data that fill :math:`R^d`).

    "auto" takes the intrinsic path when the estimate
    (:func:`~spectral_leverage.density.intrinsic_dimension`) is below 90 % of d *and* the
    neighbourhoods are flat (flatness below 0.3; NaN, too few neighbours to tell, counts as flat).
    The estimate alone also fires on full-dimensional data near their faces, which in d >= 4 is
    most of a cube: the bimodal design reads 3.6, 4.4, 5.1, 6.5 in 4, 5, 6, 8 dimensions and CCPP
    3.2 in 4, and there the ambient KDE is closer to exact scores (at n = 4000, Matérn 3/2,
    ℓ = 0.5, λ = n^-3/4, bimodal 5-D: R-ACC 5th percentile 0.92 against 0.41 on the k-NN path).
    Their neighbourhoods are not flat (flatness 1.0 and 0.7), while those of the 3-D cube in
    :math:`R^8`, CASP and a swiss roll, where the k-NN path restores the effective dimension, are
    (at most 0.15). See docs/validation.md, "Real data and the intrinsic dimension"."""
    if choice is None or (choice == "auto" and given):
        return float(d), False  # a given density is taken as a density on R^d
    if choice == "auto":
        estimate, flatness = intrinsic_dimension(Z, max_samples=max_samples, random_state=random_state,
                                                 return_flatness=True)
        low = estimate < LOW_DIMENSION * d and not flatness >= FLAT  # NaN: the estimate decides
        return (estimate, True) if low else (float(d), False)
    value = float(choice)
    if value > d:
        raise ValueError(
            f"intrinsic_dim must be between 1 and the number of non-constant features ({d}), "
            f"got {choice!r}."
        )
    return value, True

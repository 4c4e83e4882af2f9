"""The inputs of :class:`~spectral_leverage.krr.cv.NystromKRRCV`'s search: the default kernels, λ
and ℓ grids, the user's kernels and grids checked, the target standardised, the user's (train,
test) splits mapped onto the rows of positive weight."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import pdist
from sklearn.base import clone
from sklearn.gaussian_process.kernels import RBF, Kernel, Matern

__all__ = ["DEFAULT_KERNELS", "check_grid", "check_kernels", "default_length_scales", "default_regs",
           "explicit_splits", "standardised_target", "with_length_scale"]

_N_REGS = 20
_LENGTH_FACTORS = (0.125, 0.25, 0.5, 1.0)
_MEDIAN_ROWS = 1000

#: ``kernel=None``: the families searched. Neither wins everywhere at 20 000 training rows: Matérn 3/2
#: reached a 1.4 % lower test RMSE than RBF on CASP, RBF a 2.2 % lower one on Friedman 1
#: (docs/notes/centres.md); the race drops the worse family's length scales after the first sizes.
DEFAULT_KERNELS = (Matern(length_scale=1.0, nu=1.5), RBF(length_scale=1.0))


def check_kernels(kernel) -> list:
    """The kernels to choose from: ``kernel`` itself, each of a list, or :data:`DEFAULT_KERNELS` for
    None; ``TypeError`` for anything else (each kernel's family is checked where it is parsed).

    Examples
    --------
    >>> [type(k).__name__ for k in check_kernels(None)]
    ['Matern', 'RBF']
    """
    if kernel is None:
        return list(DEFAULT_KERNELS)
    if isinstance(kernel, Kernel):
        return [kernel]
    kernels = list(kernel) if isinstance(kernel, (list, tuple)) else None
    if not kernels or not all(isinstance(k, Kernel) for k in kernels):
        raise TypeError(f"kernel must be a scikit-learn kernel, a non-empty list of them or None, got "
                        f"{kernel!r}.")
    return kernels


def default_regs(n: int) -> np.ndarray:
    r"""The default λ grid: 20 values log-spaced from :math:`10^{-1}` down to :math:`10^{-3}/n`.

    On standardised inputs with a unit-amplitude kernel, :math:`n\lambda` is compared with the
    eigenvalues of K, which run from about n down to 0: the grid spans over-smoothing (nλ ≈ n/10)
    to interpolation of all but the smallest components (nλ = 10⁻³), below the
    :math:`n^{-1}`–:math:`n^{-1/2}` range of the minimax rates.
    """
    return np.geomspace(1e-1, 1e-3 / n, _N_REGS)


def default_length_scales(X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The default ℓ grid: the median distance between rows (of at most 1000 drawn at random; the
    "median heuristic") times 1/8, 1/4, 1/2 and 1."""
    rows = X if X.shape[0] <= _MEDIAN_ROWS else X[rng.choice(X.shape[0], _MEDIAN_ROWS, replace=False)]
    median = float(np.median(pdist(rows)))
    return median * np.asarray(_LENGTH_FACTORS) if median > 0 else np.ones(1)


def check_grid(values, name: str) -> np.ndarray:
    try:
        grid = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        grid = np.empty(0)
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
        raise ValueError(
            f"{name} must be a non-empty 1-D sequence of finite values > 0, got {values!r}; "
            f"pass None for the default grid."
        )
    return np.unique(grid)


def standardised_target(Y: np.ndarray, weights: np.ndarray | None,
                        fit_intercept: bool) -> tuple[np.ndarray, float, np.ndarray | float]:
    r"""(Z, s, c) with Y = s Z + c: Y centred by its weighted mean c when ``fit_intercept`` (else
    c = 0) and divided by a scale s, so that the criteria are computed on values of order one,
    whatever y's units, and a solution on Z maps back to y's units as (s·coef, s·intercept + c).
    On y itself their squares under- or overflow (y × 1e-200 gave every criterion 0, y × 1e155
    gave inf, and the largest λ and shortest ℓ were chosen). s is the weighted root mean square of
    the centred values (one s for every output, so the mean over outputs weighs them as before),
    1 for a constant y; s and c are computed relative to the largest :math:`|y|`, so that their
    squares stay in range. The chosen (λ, ℓ) do not change: an intercept absorbs the shift, and
    the criteria scale by :math:`s^2`."""
    peak = float(np.max(np.abs(Y), initial=0.0))
    if peak == 0:
        return Y, 1.0, 0.0
    Y = Y / peak
    offset = np.average(Y, axis=0, weights=weights) if fit_intercept else np.zeros(Y.shape[1])
    Y = Y - offset
    spread = float(np.sqrt(np.average(np.mean(Y**2, axis=1), weights=weights)))
    if spread == 0:
        return Y, peak, peak * offset
    return Y / spread, peak * spread, peak * offset


def explicit_splits(splits, n: int, rows: np.ndarray | None) -> list:
    """The user's (train, test) pairs of row indices of X (n rows) as indices into ``rows``, the
    rows of positive weight (None: every row): zero-weight rows leave both sides. A ``ValueError``
    names ``cv`` for indices outside 0..n-1 and for a split left without two training rows or a
    held-out row of positive weight."""
    position = np.arange(n)
    if rows is not None:
        position = np.full(n, -1)
        position[rows] = np.arange(rows.size)
    out = []
    for k, pair in enumerate(splits):
        mapped = []
        for side, idx in zip(("train", "test"), pair, strict=True):
            idx = np.asarray(idx)
            if idx.dtype == bool and idx.shape == (n,):
                idx = np.flatnonzero(idx)
            if idx.ndim != 1 or (idx.size and (idx.dtype.kind not in "iu" or idx.min() < 0
                                               or idx.max() >= n)):
                raise ValueError(f"cv's split {k} has {side} indices that are not rows 0..{n - 1} of X: "
                                 "give (train, test) pairs of row indices of X.")
            at = position[idx.astype(np.intp)]
            mapped.append(at[at >= 0])
        if mapped[0].size < 2 or mapped[1].size == 0:
            raise ValueError(f"cv's split {k} leaves {mapped[0].size} training and {mapped[1].size} "
                             "held-out rows of positive sample_weight: give every split at least two "
                             "training rows and one held-out row of positive weight.")
        out.append(tuple(mapped))
    return out


def with_length_scale(kernel, length_scale: float):
    """A clone of ``kernel`` (Matérn or RBF, possibly times a constant) with another length scale."""
    key = next(k for k in kernel.get_params() if k.endswith("length_scale"))
    return clone(kernel).set_params(**{key: length_scale})

r"""Exact ridge leverage scores, :math:`O(n^3)` time and :math:`O(n^2)` memory (validation only).

:math:`l_i = [K(K + n\lambda I)^{-1}]_{ii} = 1 - n\lambda\,[(K + n\lambda I)^{-1}]_{ii}`, the
diagonal of the inverse taken from a Cholesky factor L computed in place (LAPACK ``potrf``) and
inverted in place (``trtri``): entry i is the squared norm of column i of :math:`L^{-1}`, a third
less work than forming the whole inverse (``potri``). One :math:`n \times n` matrix is the whole
memory cost (the kernel is filled into it by blocks of columns, so its temporaries stay within the
memory budget too).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from scipy.linalg import blas, lapack
from sklearn.utils.validation import validate_data

from .._blocks import DEFAULT_MEMORY_BUDGET, KERNEL_BYTES_PER_ENTRY, row_chunks
from .._spd import inverse_diagonal, potrf
from .._validation import (
    DEFAULT_REG,
    KERNEL,
    MEMORY_BUDGET,
    POSITIVE,
    RANDOM_STATE,
    check_data,
    check_positive,
    validate_params,
)
from ..base import LeverageSampler
from ..kernels import indefinite_kernel_error, parse_kernel, resolve_kernel
from ._dictionary import MIN_BLOCK_ROWS

__all__ = ["MAX_EXACT_SAMPLES", "ExactLeverage", "exact_leverage"]

MAX_EXACT_SAMPLES = 30_000
#: leverage below which 1 - nλ[(K + nλI)^{-1}]_ii has lost its digits to cancellation
CANCELLATION = 1e-6


def exact_leverage(X, kernel, reg: float, *, force: bool = False,
                   memory_budget: float | None = None) -> np.ndarray:
    """Exact ridge leverage scores :math:`l_i = [K(K + n\\lambda I)^{-1}]_{ii}`.

    Parameters
    ----------
    X : array_like of shape (n, d)
    kernel : sklearn kernel
        Matérn or RBF, optionally times ConstantKernel (see :func:`spectral_leverage.kernels.parse_kernel`).
    reg : float
        :math:`\\lambda > 0`.
    force : bool, default=False
        Allow n > 30 000 (the n×n matrix takes 8·n² bytes: 7.2 GB at n = 30 000).
    memory_budget : float or None, default=None
        Bytes for the n×n matrix and the kernel's temporaries (blocks of columns); a larger n is
        refused with a ValueError. None sets no limit beyond ``force`` (blocks of the default 1 GiB).

    Returns
    -------
    leverage : ndarray of shape (n,)
        Values in (0, 1), summing to the effective dimension.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> X = np.random.default_rng(0).uniform(size=(500, 1))
    >>> lev = exact_leverage(X, Matern(0.5, nu=1.5), reg=500 ** -0.75)
    >>> bool(np.all((lev > 0) & (lev < 1)))
    True
    """
    X = check_data(X)
    parse_kernel(kernel).check_inputs(X)
    reg = check_positive(reg, "reg")
    n = X.shape[0]
    if n > MAX_EXACT_SAMPLES and not force:
        raise ValueError(
            f"exact leverage scores need an n×n matrix ({8 * n * n / 1e9:.1f} GB for n={n}); "
            f"n above {MAX_EXACT_SAMPLES} needs force=True, or use an approximate method."
        )
    column = KERNEL_BYTES_PER_ENTRY * n  # one column of the kernel and its temporaries
    budget = DEFAULT_MEMORY_BUDGET + 8.0 * n * n if memory_budget is None else float(memory_budget)
    need = 8.0 * n * n + column * min(n, MIN_BLOCK_ROWS)
    if need > budget:
        raise ValueError(
            f"exact leverage scores of n={n} points need an n×n matrix of {8 * n * n / 2**20:.1f} MiB, "
            f"more than memory_budget={budget:.0f} bytes; raise memory_budget to at least "
            f"{int(need)}, or use an approximate method such as 'spectral'."
        )
    A = np.empty((n, n), order="F")
    for cols in row_chunks(n, column, budget - 8.0 * n * n):
        A[:, cols] = kernel(X, X[cols])
    # k(x, x) from kernel.diag: scikit-learn's general-ν Matern gives 0·∞ = NaN at zero distance
    # between two arrays (it fixes the diagonal only for kernel(X) alone)
    diagonal = np.asarray(kernel.diag(X), dtype=float)
    A[np.diag_indices(n)] = diagonal + n * reg
    chol, info = potrf(A, lower=True, overwrite_a=True)
    if info != 0:
        raise indefinite_kernel_error(f"Cholesky of K + nλI failed (LAPACK info={info})")
    root, info = lapack.dtrtri(chol, lower=True, overwrite_c=True)
    if info != 0:
        raise np.linalg.LinAlgError(f"inverse of the Cholesky factor failed (LAPACK info={info}).")
    leverage = 1.0 - n * reg * inverse_diagonal(root)
    # where nλ dwarfs k(0), 1 - nλ[(K + nλI)^{-1}]_ii cancels to rounding noise (even below 0): there
    # l_i = Σ_j [(K + nλI)^{-1}]_ij K_ij, row i of the inverse being L^{-T} L^{-1} e_i (one trmv)
    for i in np.flatnonzero(leverage < CANCELLATION):
        unit = np.zeros(n)
        unit[i:] = root[i:, i]
        row = blas.dtrmv(root, unit, lower=True, trans=True)
        k_row = kernel(X[i : i + 1], X)[0]
        k_row[i] = diagonal[i]
        leverage[i] = row @ k_row
    if leverage.min(initial=0.0) < -1e-9:  # K + nλI is positive definite, but K itself is not
        raise indefinite_kernel_error(f"exact leverage {leverage.min():.3g} < 0 of the kernel matrix")
    return leverage


class ExactLeverage(LeverageSampler):
    """Sampler by exact ridge leverage scores (the ``"exact"`` method; validation-scale n only).

    Parameters
    ----------
    kernel : sklearn kernel or None, default=None
        As in :func:`exact_leverage`; None is ``Matern(length_scale=1.0, nu=1.5)``.
    reg : float, default=1e-3
        :math:`\\lambda > 0`.
    force : bool, default=False
        Allow n above 30 000.
    memory_budget : int, default=1 GiB
        Bytes for the n×n matrix and the kernel's temporaries (at most n ≈ 5 200 at the default);
        a larger n stops the fit with a ValueError naming the budget that would do.
    random_state : int, numpy Generator or None, default=None
        Default seed of :meth:`sample` (the scores themselves are deterministic).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> X = np.random.default_rng(0).normal(size=(300, 2))
    >>> ExactLeverage(RBF(1.0), reg=1e-3).fit(X).sample(5, random_state=0).shape
    (5,)
    """

    _parameter_constraints: ClassVar[dict] = {
        "kernel": KERNEL,
        "reg": POSITIVE,
        "force": ["boolean"],
        "memory_budget": MEMORY_BUDGET,
        "random_state": RANDOM_STATE,
    }

    def __init__(self, kernel=None, reg: float = DEFAULT_REG, *, force: bool = False,
                 memory_budget: int = DEFAULT_MEMORY_BUDGET, random_state=None):
        self.kernel = kernel
        self.reg = reg
        self.force = force
        self.memory_budget = memory_budget
        self.random_state = random_state

    def fit(self, X, y=None) -> ExactLeverage:
        """Compute exact scores ``scores_ = n · l_i``."""
        validate_params(self)
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        leverage = exact_leverage(X, resolve_kernel(self.kernel), self.reg, force=self.force,
                                  memory_budget=self.memory_budget)
        self._set_scores(X.shape[0] * leverage)
        return self

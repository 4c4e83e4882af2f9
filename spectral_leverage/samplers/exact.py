r"""Exact ridge leverage scores, :math:`O(n^3)` time and :math:`O(n^2)` memory (validation only).

:math:`l_i = [K(K + n\lambda I)^{-1}]_{ii} = 1 - n\lambda\,[(K + n\lambda I)^{-1}]_{ii}`, the
diagonal of the inverse taken from a Cholesky factor computed in place (LAPACK ``potrf`` and
``potri``), so one :math:`n \times n` matrix is the whole memory cost.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from scipy.linalg import lapack
from sklearn.utils.validation import validate_data

from .._validation import (
    DEFAULT_REG,
    KERNEL,
    POSITIVE,
    RANDOM_STATE,
    check_data,
    check_positive,
    validate_params,
)
from ..base import LeverageSampler
from ..kernels import parse_kernel, resolve_kernel

__all__ = ["MAX_EXACT_SAMPLES", "ExactLeverage", "exact_leverage"]

MAX_EXACT_SAMPLES = 30_000
#: leverage below which 1 - nλ[(K + nλI)^{-1}]_ii has lost its digits to cancellation
CANCELLATION = 1e-6


def exact_leverage(X, kernel, reg: float, *, force: bool = False) -> np.ndarray:
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
    A = np.asfortranarray(kernel(X))
    A[np.diag_indices(n)] += n * reg
    chol, info = lapack.dpotrf(A, lower=True, overwrite_a=True)
    if info != 0:
        raise np.linalg.LinAlgError(f"Cholesky of K + nλI failed (LAPACK info={info}).")
    inv, info = lapack.dpotri(chol, lower=True, overwrite_c=True)
    if info != 0:
        raise np.linalg.LinAlgError(f"inverse from Cholesky failed (LAPACK info={info}).")
    leverage = 1.0 - n * reg * np.diag(inv)
    # where nλ dwarfs k(0), 1 - nλ[(K + nλI)^{-1}]_ii cancels to rounding noise (even below 0): there
    # l_i = Σ_j [(K + nλI)^{-1}]_ij K_ij, from the lower triangle dpotri leaves and one kernel row
    for i in np.flatnonzero(leverage < CANCELLATION):
        row = np.concatenate([inv[i, : i + 1], inv[i + 1 :, i]])
        leverage[i] = row @ kernel(X[i : i + 1], X)[0]
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
        "random_state": RANDOM_STATE,
    }

    def __init__(self, kernel=None, reg: float = DEFAULT_REG, *, force: bool = False, random_state=None):
        self.kernel = kernel
        self.reg = reg
        self.force = force
        self.random_state = random_state

    def fit(self, X, y=None) -> ExactLeverage:
        """Compute exact scores ``scores_ = n · l_i``."""
        validate_params(self)
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        leverage = exact_leverage(X, resolve_kernel(self.kernel), self.reg, force=self.force)
        self._set_scores(X.shape[0] * leverage)
        return self

r"""Inverses of symmetric positive definite matrices from their Cholesky factors (LAPACK ``potrf``).

With :math:`A = LL^\top`, :math:`A^{-1} = L^{-\top}L^{-1}`, so :math:`[A^{-1}]_{jj}` is the squared
norm of column j of :math:`L^{-1}`, which is lower triangular: the columns of the last c rows need
only the trailing c×c block of L. A third of the work of LU and its solve with unit vectors, and
half that of a whole inverse (``potri``) where only a diagonal is wanted. Only lower triangles are
read. Where a matrix positive definite in exact arithmetic fails ``potrf`` by rounding, LU answers
instead.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

__all__ = ["inverse_diagonal", "spd_inverse_lower", "trailing_inverse_diagonal"]


def inverse_diagonal(root: np.ndarray, block: int = 256) -> np.ndarray:
    """diag((L L^T)^{-1}) from ``root`` = L^{-1} in its lower triangle (the upper one is ignored):
    entry j is the squared norm of column j of L^{-1}, summed by blocks of columns."""
    n = root.shape[0]
    out = np.empty(n)
    for start in range(0, n, block):
        stop = min(start + block, n)
        squares = root[start:, start:stop] ** 2
        squares[: stop - start] = np.tril(squares[: stop - start])
        out[start:stop] = squares.sum(axis=0)
    return out


def spd_inverse_lower(A: np.ndarray) -> np.ndarray:
    """The inverse of A (n, n) in the lower triangle of the result (the upper one is not set), from
    A's lower triangle: the mirror image costs as much as a tenth of the inverse, and
    :func:`trailing_inverse_diagonal` reads the lower triangle only."""
    chol, info = lapack.dpotrf(A, lower=True)
    if info != 0:
        return np.linalg.inv(_symmetric(A))
    return lapack.dpotri(chol, lower=True, overwrite_c=True)[0]


def trailing_inverse_diagonal(A: np.ndarray, c: int) -> np.ndarray:
    """diag(A^{-1}) at the last c rows of A (n, n), from its lower triangle."""
    chol, info = lapack.dpotrf(A, lower=True)
    if info != 0:
        return np.diag(np.linalg.inv(_symmetric(A)))[len(A) - c:].copy()
    root, info = lapack.dtrtri(np.ascontiguousarray(chol[len(A) - c:, len(A) - c:]), lower=True,
                               overwrite_c=True)
    return inverse_diagonal(root)


def _symmetric(A: np.ndarray) -> np.ndarray:
    """A's lower triangle mirrored into its upper one."""
    return np.tril(A) + np.tril(A, -1).T

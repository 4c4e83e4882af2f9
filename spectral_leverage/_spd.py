r"""Inverses of symmetric positive definite matrices from their Cholesky factors (LAPACK ``potrf``).

With :math:`A = LL^\top`, :math:`A^{-1} = L^{-\top}L^{-1}`, so :math:`[A^{-1}]_{jj}` is the squared
norm of column j of :math:`L^{-1}`, which is lower triangular: the columns of the last c rows need
only the trailing c×c block of L (:func:`trailing_inverse_diagonals`). A third of the work of LU and
its solve with unit vectors, and half that of a whole inverse (``potri``) where only a diagonal is
wanted. Only lower triangles are read. Where a matrix positive definite in exact arithmetic fails
``potrf`` by rounding, the routines say so, for the caller to take a better route;
:func:`spd_solve` and :func:`inverse_quadratic` solve by the symmetric indefinite factorisation
then (:func:`symmetric_solve`).

The near field works on stacks of blocks (:mod:`spectral_leverage.spectral._conditional`): its
routines work in place on one Fortran-ordered matrix of a stack at a time (:func:`factor_in_place`,
:func:`spd_invert_in_place`, :func:`solve_lower_in_place` (BLAS ``trsm``, in float32 where the
caller allows it), :func:`invert_lower_in_place`).

Every Cholesky factorisation of the package goes through :func:`potrf`, which keeps large ones
on one BLAS thread (:data:`THREADED_CHOLESKY_LIMIT`). LAPACK runs with the GIL released
(:mod:`spectral_leverage._lapack`), so that the near field's worker threads factor their blocks side
by side.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

from ._blocks import blas_at_most
from ._lapack import AVAILABLE as _GIL_FREE
from ._lapack import potrf as _potrf_in_place
from ._lapack import potri as _potri_in_place
from ._lapack import trsm as _trsm_in_place
from ._lapack import trtri as _trtri_in_place

__all__ = ["THREADED_CHOLESKY_LIMIT", "cholesky", "factor_in_place", "inverse_diagonal", "inverse_quadratic",
           "invert_lower_in_place", "lower_factor", "lower_solve", "potrf", "solve_lower_in_place",
           "spd_invert_in_place", "spd_solve", "symmetric_solve", "trailing_inverse_diagonals"]

#: From this order on a Cholesky factorisation runs on one BLAS thread: OpenBLAS's threaded
#: ``potrf`` writes past its buffers there and the process dies (SIGSEGV). Measured with SciPy's
#: OpenBLAS 0.3.30 and NumPy's 0.3.31 (ILP64, ``np.linalg.cholesky``) at 2, 4 and 8 threads:
#: n = 15 500 held, 15 750 and 16 000 crashed, within seconds; one thread held at 16 000 and 32 000,
#: and the threaded ``trtri`` and ``potrs`` at 16 000. Crashes of this kind are reported upstream
#: (OpenMathLib/OpenBLAS#1413, #2821). One thread costs little where it applies: the exact methods'
#: n×n matrices, and Nyström centres past 12 000.
THREADED_CHOLESKY_LIMIT = 12_000


#: Rows of the other triangle zeroed at a time after a factorisation (the temporary's rows).
_ZEROED_ROWS = 256


def potrf(A: np.ndarray, *, lower: bool, overwrite_a: bool = False) -> tuple[np.ndarray, int]:
    """(factor, info) of LAPACK's ``dpotrf`` of A (n, n), its other triangle zeroed; on one BLAS
    thread from order :data:`THREADED_CHOLESKY_LIMIT` (module docstring). ``info`` > 0: A is not
    positive definite (to rounding). With ``overwrite_a``, a Fortran-ordered float64 A is factored
    in place (as by SciPy's wrapper)."""
    factor, info = _factor(A, lower, overwrite_a)
    if _GIL_FREE:  # SciPy's wrapper zeroes it already
        _zero_above_diagonal(factor if lower else factor.T)
    return factor, info


def _factor(A: np.ndarray, lower: bool, overwrite_a: bool = False) -> tuple[np.ndarray, int]:
    """:func:`potrf` without zeroing the other triangle (a copy of A's, or A's own in place)."""
    if not _GIL_FREE:
        return _on_one_thread_if_large(A, lambda: lapack.dpotrf(A, lower=lower, overwrite_a=overwrite_a))
    # in place where SciPy's wrapper works in place, else its copy in Fortran's order: the same
    # arithmetic, to the bit
    in_place = overwrite_a and A.dtype == np.float64 and A.flags.writeable and A.flags.f_contiguous
    factor = A if in_place else np.array(A, dtype=float, order="F")
    return factor, _on_one_thread_if_large(A, lambda: _potrf_in_place(factor, lower))


def _on_one_thread_if_large(A: np.ndarray, factorise):
    """``factorise()``, on one BLAS thread where A's order is :data:`THREADED_CHOLESKY_LIMIT` or more."""
    if A.shape[0] < THREADED_CHOLESKY_LIMIT:
        return factorise()
    with blas_at_most(1):
        return factorise()


def _zero_above_diagonal(A: np.ndarray) -> None:
    """Set the strict upper triangle of A (n, n) to zero, :data:`_ZEROED_ROWS` rows at a time."""
    for start in range(0, A.shape[0], _ZEROED_ROWS):
        rows = A[start:start + _ZEROED_ROWS, start:]
        rows[...] = np.tril(rows)


def cholesky(A: np.ndarray, *, lower: bool, overwrite_a: bool = False) -> np.ndarray:
    """The Cholesky factor of A by :func:`potrf`, raising :class:`numpy.linalg.LinAlgError` where A
    is not positive definite, as :func:`scipy.linalg.cholesky` does."""
    factor, info = potrf(A, lower=lower, overwrite_a=overwrite_a)
    if info != 0:
        raise np.linalg.LinAlgError(f"{info}-th leading minor of the array is not positive definite")
    return factor


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


def spd_invert_in_place(A: np.ndarray) -> bool:
    """Whether A (n, n; Fortran-ordered float64, from its lower triangle) is positive definite to
    rounding (``potrf``); if so, its inverse is now in A's lower triangle (``potri``; the upper one
    not set)."""
    if not factor_in_place(A):
        return False
    if _GIL_FREE:
        _potri_in_place(A, lower=True)
    else:
        A[...] = lapack.dpotri(A, lower=True, overwrite_c=True)[0]
    return True


def lower_factor(A: np.ndarray) -> np.ndarray | None:
    """A's lower Cholesky factor L (A = LL^T) in the lower triangle of a new Fortran-ordered array
    (the upper one is not set), or None where ``potrf`` fails."""
    chol, info = _factor(A, lower=True)
    return chol if info == 0 else None


def trailing_inverse_diagonals(lower: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray]:
    """(diag((LL^T)^{-1}) at the last c rows (B, c), the trailing c×c blocks of L^{-1} (B, c, c),
    their upper triangles zero) of each lower triangular L (u, u) in the lower triangles of a stack
    ``lower`` (B, u, u) of Fortran-ordered float64 matrices (the upper ones are not read): the
    inverses of L's own trailing blocks, as L^{-1} is lower triangular."""
    u = lower.shape[1]
    root = np.ascontiguousarray(lower[:, u - c:, u - c:].swapaxes(1, 2))  # each in Fortran's order
    for block in root:
        invert_lower_in_place(block.T)
    root = np.tril(root.swapaxes(1, 2))
    return np.einsum("bij,bij->bj", root, root), root


def lower_solve(chol: np.ndarray, B: np.ndarray, dtype=np.float64) -> np.ndarray:
    """:math:`L^{-1}B` (new, Fortran-ordered, of ``dtype``: float64, or float32 at twice the speed)
    for L lower triangular (n, n) in the lower triangle of ``chol`` (the upper one is not read) and
    B (n, k)."""
    chol, B = np.asfortranarray(chol, dtype=dtype), np.array(B, dtype=dtype, order="F")
    solve_lower_in_place(chol, B)
    return B


def factor_in_place(A: np.ndarray) -> bool:
    """Whether ``potrf`` factors A (n, n; Fortran-ordered float64, from its lower triangle) in
    place: its lower Cholesky factor L then in A's lower triangle (the upper one not zeroed)."""
    factor, info = _factor(A, lower=True, overwrite_a=True)
    if factor is not A:  # SciPy's wrapper, where it copied
        A[...] = factor
    return info == 0


def solve_lower_in_place(chol: np.ndarray, B: np.ndarray) -> None:
    """B (n, k; Fortran-ordered, of chol's dtype, float64 or float32) overwritten by
    :math:`L^{-1}B`, L lower triangular in the lower triangle of ``chol`` (Fortran-ordered; the
    upper one is not read)."""
    if _GIL_FREE:
        _trsm_in_place(chol, B, lower=True)
        return
    solve = blas.strsm if chol.dtype == np.float32 else blas.dtrsm
    B[...] = solve(1.0, chol, B, lower=True, overwrite_b=True)


def invert_lower_in_place(T: np.ndarray) -> None:
    """T (n, n; Fortran-ordered float64) overwritten in its lower triangle by the inverse of the
    lower triangular matrix there (LAPACK ``trtri``; the upper triangle is not read)."""
    if _GIL_FREE:
        _trtri_in_place(T, lower=True)
        return
    T[...] = lapack.dtrtri(T, lower=True, overwrite_c=True)[0]


def inverse_quadratic(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    r""":math:`\mathrm{diag}(B^\top A^{-1} B)` for A (n, n) symmetric positive definite, from its
    lower triangle, and B (n, k): the squared column norms of :math:`L^{-1}B`, or by
    :func:`spd_solve` where rounding fails A's Cholesky factorisation."""
    chol = lower_factor(A)
    if chol is None:
        return np.einsum("ij,ij->j", B, symmetric_solve(A, B))
    solved = lower_solve(chol, B)
    return np.einsum("ij,ij->j", solved, solved)


def spd_solve(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """:math:`A^{-1}B` for A (n, n) symmetric positive definite, from its lower triangle: by its
    Cholesky factor, or where rounding fails that, by the symmetric indefinite factorisation
    (``scipy.linalg.solve(assume_a="sym")``)."""
    chol, info = potrf(A, lower=True)
    if info != 0:
        return symmetric_solve(A, B)
    return linalg.cho_solve((chol, True), B)


def symmetric_solve(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """:math:`A^{-1}B` for A (n, n) symmetric, from its lower triangle, by the symmetric indefinite
    factorisation (``scipy.linalg.solve(assume_a="sym")``): for a caller whose Cholesky
    factorisation of A has failed already."""
    return linalg.solve(_symmetric(A), B, assume_a="sym")


def _symmetric(A: np.ndarray) -> np.ndarray:
    """A's lower triangle mirrored into its upper one."""
    return np.tril(A) + np.tril(A, -1).T

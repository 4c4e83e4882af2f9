r"""The Nyström normal equations and their two solvers.

With centres :math:`J` (:math:`m` of them), Nyström KRR solves
:math:`(K_{nJ}^\top K_{nJ} + n\lambda K_{JJ})\,\alpha = K_{nJ}^\top y`. Both solvers factor
:math:`K_{JJ} + \epsilon I = T^\top T` (upper Cholesky factor :math:`T`, small jitter
:math:`\epsilon`) and stream :math:`K_{nJ}` in row blocks sized by the memory budget, never holding
it whole: peak memory :math:`O(m^2 + \text{block} \cdot m)`.

* direct: with :math:`\beta = T\alpha` the system is the well-conditioned SPD system
  :math:`(T^{-\top} K_{nJ}^\top K_{nJ} T^{-1} + n\lambda I)\,\beta = T^{-\top} K_{nJ}^\top y`, whose
  matrix is accumulated as :math:`\sum_b B_b^\top B_b` with :math:`B_b = K_{bJ} T^{-1}` (forming
  :math:`K_{nJ}^\top K_{nJ}` first would square its condition number), then solved by Cholesky.
  :math:`O(n m^2)` time. Sums over row sets add up, so blocks held apart (Dask) sum by a reduction.
* conjugate gradient on the same system with the FALKON preconditioner (Rudi, Carratino & Rosasco,
  NeurIPS 2017): :math:`A^\top A = T T^\top / m + \lambda I`, :math:`\alpha = T^{-1}A^{-1}\beta`,
  solving :math:`A^{-\top}(\tfrac1n T^{-\top} K_{nJ}^\top K_{nJ} T^{-1} + \lambda I)A^{-1}\beta
  = \tfrac1n A^{-\top} T^{-\top} K_{nJ}^\top y`; :math:`O(nm)` per iteration (the blocks cached
  when they fit in the budget), for large m.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.linalg import cho_factor, cho_solve, cholesky, solve_triangular
from scipy.linalg.blas import dsyrk
from sklearn.exceptions import ConvergenceWarning
from tqdm.auto import tqdm

from .._blocks import KERNEL_BYTES_PER_ENTRY, kernel_block, kernel_product, row_chunks

__all__ = ["DIRECT_MAX_CENTERS", "normal_equations", "predict_block", "solve_cg",
           "solve_normal_equations", "upper_cholesky"]

DIRECT_MAX_CENTERS = 5000  # solver="auto" uses the direct solver up to this many centres
_JITTER = 1e-10  # relative to the mean diagonal of K_JJ; raised tenfold while Cholesky fails
_CG_TOL = 1e-10  # relative residual of the preconditioned system
_CG_MAX_ITER = 500


def upper_cholesky(K: np.ndarray) -> tuple[np.ndarray, float]:
    """Upper T with TᵀT = K + εI, the jitter ε raised tenfold until the factorisation succeeds."""
    scale = float(np.mean(np.diag(K))) or 1.0
    jitter = _JITTER * scale
    for _ in range(8):
        try:
            A = K.copy()
            A[np.diag_indices_from(A)] += jitter
            return cholesky(A, lower=False, overwrite_a=True, check_finite=False), jitter
        except np.linalg.LinAlgError:
            jitter *= 10.0
    raise np.linalg.LinAlgError(
        "Cholesky factorisation of the centres' kernel matrix failed even with jitter "
        f"{jitter:.1e}: the matrix is not positive semi-definite. scikit-learn's Matern at a nu other "
        "than 0.5, 1.5 or 2.5 is inexact between duplicated rows (below nu = 0.5 by up to 1 %); drop "
        "duplicated rows, standardise X, or use nu = 0.5, 1.5 or 2.5."
    )


def _chunks(X: np.ndarray, Y: np.ndarray, m: int, memory_budget: float) -> list[slice]:
    """Row blocks of X for the kernel block K_bJ and its transforms."""
    extra = 8.0 * (X.shape[1] + Y.shape[1] + m)
    return list(row_chunks(X.shape[0], KERNEL_BYTES_PER_ENTRY * m + extra, memory_budget))


def normal_equations(X: np.ndarray, Y: np.ndarray, shared: tuple, memory_budget: float,
                     verbose: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(H, c) = (Σ_b B_bᵀ B_b, Σ_b B_bᵀ y_b) with B_b = K_bJ T⁻¹ over row blocks of X, for
    ``shared = (kernel, centers, T)``; H holds the upper triangle only."""
    kernel, centers, T = shared
    m = centers.shape[0]
    H = np.zeros((m, m), order="F")
    c = np.zeros((m, Y.shape[1]))
    chunks = _chunks(X, Y, m, memory_budget)
    for rows in tqdm(chunks, disable=not verbose, desc="NystromKRR fit", unit="block"):
        # Bᵀ = T⁻ᵀ K_bJᵀ, shape (m, b): H += Bᵀ B, c += Bᵀ y_b
        Bt = solve_triangular(T, kernel_block(kernel, X[rows], centers).T, trans="T", lower=False,
                              check_finite=False)
        H = dsyrk(1.0, Bt, beta=1.0, c=H, trans=0, lower=0, overwrite_c=1)
        c += Bt @ Y[rows]
    return H, c


def solve_normal_equations(H: np.ndarray, c: np.ndarray, T: np.ndarray, n_reg: float) -> np.ndarray:
    """α = T⁻¹ (H + nλ I)⁻¹ c, from the upper triangle of H (overwritten)."""
    H[np.diag_indices(H.shape[0])] += n_reg  # dsyrk filled the upper triangle, all cho_factor reads
    beta = cho_solve(cho_factor(H, lower=False, overwrite_a=True, check_finite=False), c,
                     check_finite=False)
    return solve_triangular(T, beta, lower=False, check_finite=False)


def solve_cg(X: np.ndarray, Y: np.ndarray, shared: tuple, reg: float, memory_budget: float,
             verbose: bool = False) -> tuple[np.ndarray, int]:
    """α by preconditioned conjugate gradient (module docstring) and the iterations taken."""
    kernel, centers, T = shared
    n, m = X.shape[0], centers.shape[0]
    chunks = _chunks(X, Y, m, memory_budget)
    # FALKON preconditioner: AᵀA = T Tᵀ / m + λ I
    A = cholesky(T @ T.T / m + reg * np.eye(m), lower=False, check_finite=False)
    cache = [] if n * m * 8.0 <= memory_budget else None

    def blocks():
        if cache is not None and len(cache) == len(chunks):
            yield from zip(chunks, cache, strict=True)
            return
        for rows in chunks:
            K = kernel_block(kernel, X[rows], centers)
            if cache is not None:
                cache.append(K)
            yield rows, K

    rhs = np.zeros((m, Y.shape[1]))
    for rows, K in blocks():
        rhs += K.T @ Y[rows]
    rhs = solve_triangular(A, solve_triangular(T, rhs, trans="T", check_finite=False), trans="T",
                           check_finite=False) / n

    def matvec(B):
        V = solve_triangular(A, B, check_finite=False)
        U = solve_triangular(T, V, check_finite=False)
        W = np.zeros_like(U)
        for _rows, K in blocks():
            W += K.T @ (K @ U)
        W = solve_triangular(T, W, trans="T", check_finite=False) / n + reg * V
        return solve_triangular(A, W, trans="T", check_finite=False)

    beta = np.zeros_like(rhs)
    r = rhs.copy()
    p = r.copy()
    rs = np.einsum("ij,ij->j", r, r)
    target = (_CG_TOL**2) * np.maximum(np.einsum("ij,ij->j", rhs, rhs), np.finfo(float).tiny)
    n_iter = 0
    progress = tqdm(total=_CG_MAX_ITER, disable=not verbose, desc="NystromKRR cg", unit="iter")
    while n_iter < _CG_MAX_ITER and np.any(rs > target):
        active = rs > target
        Ap = matvec(p)
        pAp = np.einsum("ij,ij->j", p, Ap)
        step = np.where(active, rs / np.where(pAp > 0, pAp, 1.0), 0.0)
        beta += step * p
        r -= step * Ap
        rs_new = np.einsum("ij,ij->j", r, r)
        p = r + np.where(active, rs_new / np.where(rs > 0, rs, 1.0), 0.0) * p
        rs = rs_new
        n_iter += 1
        progress.update(1)
    progress.close()
    if np.any(rs > target):
        warnings.warn(
            f"NystromKRR: conjugate gradient did not reach relative residual {_CG_TOL:g} in "
            f"{_CG_MAX_ITER} iterations (reached {np.sqrt(np.max(rs / target)) * _CG_TOL:.1e}).",
            ConvergenceWarning,
            stacklevel=3,
        )
    coef = solve_triangular(T, solve_triangular(A, beta, check_finite=False), check_finite=False)
    return coef, n_iter


def predict_block(X: np.ndarray, shared: tuple, memory_budget: float,
                  verbose: bool = False) -> np.ndarray:
    """``kernel(X, centers) @ coef`` in row blocks, for ``shared = (kernel, centers, coef)``."""
    kernel, centers, coef = shared
    return kernel_product(kernel, X, centers, coef, memory_budget=memory_budget, verbose=verbose,
                          desc="NystromKRR predict")

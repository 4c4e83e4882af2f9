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
  :math:`O(n m^2)` time. Sums over row sets add up, so blocks held apart (Dask) sum by a reduction,
  and the package's threads (``n_jobs``) each sum a fixed share of the blocks, BLAS held to one
  thread each, added in a fixed order.
* conjugate gradient on the same system with the FALKON preconditioner (Rudi, Carratino & Rosasco,
  NeurIPS 2017): :math:`A^\top A = T T^\top / m + \lambda I`, :math:`\alpha = T^{-1}A^{-1}\beta`,
  solving :math:`A^{-\top}(\tfrac1n T^{-\top} K_{nJ}^\top K_{nJ} T^{-1} + \lambda I)A^{-1}\beta
  = \tfrac1n A^{-\top} T^{-\top} K_{nJ}^\top y`; :math:`O(nm)` per iteration (the blocks cached
  when they fit in the budget), for large m.

Weights and intercept. With weights :math:`w_i \ge 0` (:math:`W = \sum_i w_i`; all ones without
weights, :math:`W = n`) and an unpenalised intercept :math:`b`, Nyström KRR minimises
:math:`\frac1W\sum_i w_i (y_i - b - K_{iJ}\alpha)^2 + \lambda\,\alpha^\top K_{JJ}\alpha`. Integer
weights are repeated rows: the penalty scales with :math:`W` as it does with :math:`n`. The
intercept is eliminated as in scikit-learn's ``Ridge``: :math:`b = \bar y - \bar k^\top\alpha` with
the weighted means :math:`\bar y`, :math:`\bar k = \sum_i w_i K_{iJ}^\top / W`, and the normal
equations of the centred problem are the raw sums less a rank-one term,
:math:`\sum_i w_i B_i^\top B_i - W\,\bar b\bar b^\top`
(:func:`~spectral_leverage.ridge_gcv.centred_system`), so one pass over the data (or a sum over Dask
blocks) still suffices.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.linalg import cho_solve, solve_triangular
from sklearn.exceptions import ConvergenceWarning

from .._blocks import (
    KERNEL_BYTES_PER_ENTRY,
    kernel_block,
    kernel_product,
    max_threads,
    on_all_cores,
    progress,
    row_chunks,
)
from .._spd import cholesky
from ..kernels import whitened_kernel
from ..ridge_gcv import centred_system

__all__ = ["DIRECT_MAX_CENTERS", "normal_equations", "predict_block", "solve_cg",
           "solve_normal_equations", "whitened_blocks"]

DIRECT_MAX_CENTERS = 5000  # solver="auto" uses the direct solver up to this many centres
_CG_TOL = 1e-10  # relative residual of the preconditioned system
_CG_MAX_ITER = 500


def _chunks(X: np.ndarray, columns: int, m: int, memory_budget: float) -> list[slice]:
    """Row blocks of X for the kernel block K_bJ, its transforms and ``columns`` targets."""
    extra = 8.0 * (X.shape[1] + columns + m)
    return list(row_chunks(X.shape[0], KERNEL_BYTES_PER_ENTRY * m + extra, memory_budget))




def whitened_blocks(X: np.ndarray, shared: tuple, memory_budget: float, columns: int = 1,
                    verbose: bool = False, desc: str = "NystromKRR fit"):
    r"""Yield ``(rows, Bᵀ)`` over row blocks of X with :math:`B^\top = T^{-\top} K_{bJ}^\top`, shape
    (m, b), for ``shared = (kernel, centers, T)``; ``columns`` targets ride along in the budget."""
    kernel, centers, T = shared
    chunks = _chunks(X, columns, centers.shape[0], memory_budget)
    for rows in progress(chunks, verbose=verbose, desc=desc, unit="block"):
        yield rows, whitened_kernel(kernel, X[rows], centers, T)


def normal_equations(X: np.ndarray, Y: np.ndarray, shared: tuple, memory_budget: float,
                     verbose: bool = False, weights: np.ndarray | None = None) -> tuple:
    r"""The weighted sums over the rows of X of one pass, for ``shared = (kernel, centers, T)`` and
    :math:`B = K_{nJ} T^{-1}`: ``(H, c, s, sy, W)`` = (:math:`B^\top \mathrm{diag}(w) B`,
    :math:`B^\top \mathrm{diag}(w) Y`, :math:`B^\top w`, :math:`Y^\top w`, :math:`\sum w`); unit
    weights for None. Sums over row sets add up (the Dask reduction).

    The row blocks are split among :func:`~spectral_leverage._blocks.max_threads` threads, each with
    a fixed share of the blocks and its own sums (added in a fixed order: deterministic for a given
    ``n_jobs``), within ``memory_budget`` together; as many threads as have their two
    :math:`m \times m` arrays (the sum and a block's product) in half of it. The Gram update is
    NumPy's ``Bt @ Bt.T``, which BLAS computes as a symmetric rank-k update and which releases the
    GIL; SciPy's ``dsyrk`` holds it, and the threads' updates then ran one at a time (two threads
    took 0.87x one thread's wall time at n = 2·10⁵, m = 1024, for 1.05x its CPU time)."""
    kernel, centers, T = shared
    m = centers.shape[0]
    n_threads = min(max_threads(), max(1, int(memory_budget / 2 // (16.0 * m * m))))
    chunks = _chunks(X, Y.shape[1], m, memory_budget / n_threads)
    runs = [chunks[i::n_threads] for i in range(min(n_threads, len(chunks)))]
    sums: list = [None] * len(runs)
    bar = progress(total=len(chunks), verbose=verbose, desc="NystromKRR fit", unit="block")

    def fill(run: int) -> None:
        H, c = np.zeros((m, m)), np.zeros((m, Y.shape[1]))
        s, sy, total = np.zeros(m), np.zeros(Y.shape[1]), 0.0
        for rows in runs[run]:
            Bt, Yb = whitened_kernel(kernel, X[rows], centers, T), Y[rows]
            w = np.ones(Yb.shape[0]) if weights is None else weights[rows]
            Bw = Bt if weights is None else Bt * np.sqrt(w)
            H += Bw @ Bw.T
            c += Bt @ (w[:, None] * Yb)
            s += Bt @ w
            sy += w @ Yb
            total += float(w.sum())
            bar.update()
        sums[run] = [H, c, s, sy, total]

    try:
        on_all_cores(fill, range(len(runs)))
    finally:
        bar.close()
    H, c, s, sy, total = sums[0]
    for part in sums[1:]:
        H += part[0]
        c += part[1]
        s += part[2]
        sy += part[3]
        total += part[4]
    return H, c, s, sy, total


def solve_normal_equations(sums: tuple, T: np.ndarray, reg: float,
                           fit_intercept: bool) -> tuple[np.ndarray, np.ndarray]:
    """(α, intercept) from the sums of :func:`normal_equations` (overwritten): α = T⁻¹ β with
    β = (H + Wλ I)⁻¹ c of the (centred) system, intercept = ȳ − b̄ᵀβ."""
    H, c, b_mean, y_mean, total = centred_system(sums, fit_intercept)
    H[np.diag_indices(H.shape[0])] += total * reg  # the upper triangle is all potrf reads
    beta = cho_solve((cholesky(H, lower=False, overwrite_a=True), False), c,
                     check_finite=False)
    return solve_triangular(T, beta, lower=False, check_finite=False), y_mean - b_mean @ beta


def solve_cg(X: np.ndarray, Y: np.ndarray, shared: tuple, reg: float, memory_budget: float,
             verbose: bool = False, weights: np.ndarray | None = None,
             fit_intercept: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
    """(α, intercept, iterations taken) by preconditioned conjugate gradient (module docstring),
    on the weighted, centred problem when asked (the centring applied inside each product)."""
    kernel, centers, T = shared
    n, m = X.shape[0], centers.shape[0]
    w = np.ones(n) if weights is None else weights
    total = float(w.sum())
    chunks = _chunks(X, Y.shape[1], m, memory_budget)
    # FALKON preconditioner: AᵀA = T Tᵀ / m + λ I
    A = cholesky(T @ T.T / m + reg * np.eye(m), lower=False, overwrite_a=True)
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

    rhs, s = np.zeros((m, Y.shape[1])), np.zeros(m)
    for rows, K in blocks():
        rhs += K.T @ (w[rows, None] * Y[rows])
        s += K.T @ w[rows]
    k_mean = s / total if fit_intercept else np.zeros(m)
    y_mean = w @ Y / total if fit_intercept else np.zeros(Y.shape[1])
    rhs -= np.outer(s, y_mean)  # Kᵀ W (Y − ȳ)
    rhs = solve_triangular(A, solve_triangular(T, rhs, trans="T", check_finite=False), trans="T",
                           check_finite=False) / total

    def matvec(B):
        V = solve_triangular(A, B, check_finite=False)
        U = solve_triangular(T, V, check_finite=False)
        W = -np.outer(s, k_mean @ U)  # Kᵀ W K − W k̄ k̄ᵀ: the centred Gram matrix
        for rows, K in blocks():
            W += K.T @ (w[rows, None] * (K @ U))
        W = solve_triangular(T, W, trans="T", check_finite=False) / total + reg * V
        return solve_triangular(A, W, trans="T", check_finite=False)

    # CG on each column of rhs divided by its largest entry, then scaled back: the residual's
    # squares of y × 1e-200 (× 1e155) under- (over-)flowed, and the iteration stopped at zero
    unit = np.max(np.abs(rhs), axis=0)
    unit[unit == 0] = 1.0
    rhs = rhs / unit
    beta = np.zeros_like(rhs)
    r = rhs.copy()
    p = r.copy()
    rs = np.einsum("ij,ij->j", r, r)
    target = (_CG_TOL**2) * np.maximum(np.einsum("ij,ij->j", rhs, rhs), np.finfo(float).tiny)
    n_iter = 0
    bar = progress(total=_CG_MAX_ITER, verbose=verbose, desc="NystromKRR cg", unit="iter")
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
        bar.update(1)
    bar.close()
    if np.any(rs > target):
        warnings.warn(
            f"NystromKRR: conjugate gradient did not reach relative residual {_CG_TOL:g} in "
            f"{_CG_MAX_ITER} iterations (reached {np.sqrt(np.max(rs / target)) * _CG_TOL:.1e}).",
            ConvergenceWarning,
            stacklevel=3,
        )
    coef = solve_triangular(T, solve_triangular(A, beta * unit, check_finite=False), check_finite=False)
    return coef, y_mean - k_mean @ coef, n_iter


def predict_block(X: np.ndarray, shared: tuple, memory_budget: float,
                  verbose: bool = False) -> np.ndarray:
    """``kernel(X, centers) @ coef`` in row blocks, for ``shared = (kernel, centers, coef)``."""
    kernel, centers, coef = shared
    return kernel_product(kernel, X, centers, coef, memory_budget=memory_budget, verbose=verbose,
                          desc="NystromKRR predict")

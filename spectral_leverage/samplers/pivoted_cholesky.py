r"""Randomly pivoted Cholesky: pivots drawn in proportion to the residual diagonal of the kernel.

Block RPCholesky (Chen, Epperly, Tropp & Webber 2023) builds :math:`K \approx F F^\top` from
:math:`m` columns of :math:`K`. With pivots :math:`S` chosen so far, the residual kernel is the
Schur complement :math:`K - K_{:S} K_{SS}^{-1} K_{S:}`, whose diagonal

.. math::

    r_i = k(x_i, x_i) - k_{iS} K_{SS}^{-1} k_{Si}

is the part of :math:`x_i`'s feature that the pivots miss. A block of pivots is drawn with
probabilities :math:`r_i / \sum_j r_j`; the block's residual columns
:math:`G = K_{:B} - K_{:S} W`, :math:`W = K_{SS}^{-1} K_{SB}`, give the update
:math:`r_i \leftarrow r_i - g_{i}^\top G_{BB}^{-1} g_{i}`. The expected trace error
:math:`\operatorname{tr}(K - FF^\top)` is within a factor :math:`(1+\varepsilon)` of the best
rank-:math:`k` trace error once :math:`m \gtrsim k/\varepsilon + k\log(1/(\varepsilon\eta))`, where
:math:`\eta` is the relative trace error of the best rank-:math:`k` approximation: near-optimal for
the trace norm, which is the variance kernel PCA captures.

Within a block, :math:`G_{BB}` is factored by LAPACK's pivoted Cholesky (``dpstrf``); pivots whose
residual falls below :math:`10^{-8}` times the largest :math:`k(x_i, x_i)` (near-duplicates of
pivots already taken; their few remaining digits would be rounding) are rejected, and the factor of
:math:`K_{SS}` is grown block by block, never refactored.

Memory: the residual diagonal (an n-vector) and one row block of :math:`K_{:S}` at a time, sized by
``memory_budget``; :math:`K` and :math:`F` are never formed. Time :math:`O(n m^2 (d + b)/b)` kernel
entries and flops for blocks of :math:`b` pivots (each block is one pass over the rows).

References
----------
Y. Chen, E. N. Epperly, J. A. Tropp and R. J. Webber, "Randomly pivoted Cholesky: practical
approximation of a kernel matrix with few entry evaluations", *Comm. Pure Appl. Math.*, 2024
(arXiv:2207.06503, 2023).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular
from scipy.linalg.lapack import dpstrf

from .._blocks import DEFAULT_MEMORY_BUDGET, KERNEL_BYTES_PER_ENTRY, kernel_block, row_chunks
from .._validation import check_data, check_positive, check_random_state, check_samples
from ..kernels import parse_kernel, resolve_kernel

__all__ = ["rp_cholesky"]

_TOL = 1e-8  # residual, relative to the largest k(x, x), below which a pivot adds nothing


def _add_block(X: np.ndarray, kernel, pivots: np.ndarray, block: np.ndarray, L: np.ndarray,
               floor: float, memory_budget: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Accepted rows of ``block``, the decrease of every residual r_i they bring, the Cholesky
    factor of K_SS grown by them), for the lower factor ``L`` of the pivots' K_SS so far."""
    F_b = solve_triangular(L, kernel(X[pivots], X[block]), lower=True, check_finite=False)
    G_bb = kernel(X[block]) - F_b.T @ F_b
    chol, perm, rank, _ = dpstrf(G_bb, tol=floor, lower=1)
    if G_bb.max() <= floor:
        rank = 0
    keep = perm[:rank] - 1  # dpstrf's pivots are 1-based
    L_bb = np.tril(chol[:rank, :rank])
    accepted, F_a = block[keep], F_b[:, keep]
    W = solve_triangular(L, F_a, lower=True, trans="T", check_finite=False)  # K_SS⁻¹ K_SA
    decrease = np.zeros(X.shape[0])
    bytes_per_row = KERNEL_BYTES_PER_ENTRY * (pivots.size + rank) + 8.0 * X.shape[1]
    for rows in row_chunks(X.shape[0], bytes_per_row, memory_budget) if rank else ():
        G = kernel_block(kernel, X[rows], X[accepted])
        if pivots.size:
            G -= kernel_block(kernel, X[rows], X[pivots]) @ W
        H = solve_triangular(L_bb, G.T, lower=True, check_finite=False)  # L_AA⁻¹ G_rowsᵀ
        decrease[rows] = np.einsum("ij,ij->j", H, H)
    grown = np.zeros((pivots.size + rank,) * 2)
    grown[:pivots.size, :pivots.size] = L
    grown[pivots.size:, :pivots.size] = F_a.T
    grown[pivots.size:, pivots.size:] = L_bb
    return accepted, decrease, grown


def rp_cholesky(X, kernel, n_pivots: int, random_state=None, *, block_size: int | None = None,
                memory_budget: float = DEFAULT_MEMORY_BUDGET) -> np.ndarray:
    r"""Pivots of block randomly pivoted Cholesky: rows of X drawn ∝ the kernel's residual diagonal.

    Draws ``block_size`` rows at a time with probabilities proportional to the residual diagonal
    :math:`r_i` of the kernel matrix given the pivots so far (module docstring), keeps those that
    are not numerically dependent on the others, and updates :math:`r`. The pivots' Nyström
    approximation :math:`K_{:S}K_{SS}^{-1}K_{S:}` is near-optimal in trace norm for its rank:
    good landmarks for kernel PCA and Nyström features.

    Parameters
    ----------
    X : array_like of shape (n, d)
        Finite inputs, n >= 1.
    kernel : sklearn kernel or None
        ``Matern`` or ``RBF``, optionally times ``ConstantKernel``; None is the package default.
    n_pivots : int
        Number m of pivots wanted, >= 1. Fewer come back when the residual vanishes first (the
        kernel matrix has numerical rank below m, e.g. repeated rows).
    random_state : int, numpy Generator or None, default=None
    block_size : int or None, default=None
        Pivots drawn per pass over the data; None is ``ceil(n_pivots / 8)``. 1 is the sequential
        algorithm (exactly as accurate, m passes); larger blocks cost fewer passes.
    memory_budget : float, default=256 MiB
        Bytes for a row block of kernel entries.

    Returns
    -------
    ndarray of int, shape (m',)
        Distinct row indices of X in the order drawn, m' <= ``n_pivots``.

    Raises
    ------
    ValueError, TypeError
        For bad X (naming it), ``n_pivots`` or ``block_size`` < 1, or an unsupported kernel.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> X = np.random.default_rng(0).normal(size=(500, 2))
    >>> idx = rp_cholesky(X, RBF(1.0), 20, random_state=0)
    >>> len(idx), len(set(idx.tolist()))
    (20, 20)
    """
    X = check_data(X, min_samples=1)
    kernel = resolve_kernel(kernel)
    parse_kernel(kernel).check_n_features(X.shape[1])
    m = min(check_samples(n_pivots, "n_pivots"), X.shape[0])
    b = -(-m // 8) if block_size is None else check_samples(block_size, "block_size")
    memory_budget = check_positive(memory_budget, "memory_budget")
    rng = check_random_state(random_state)

    residual = np.asarray(kernel.diag(X), dtype=float)
    floor = _TOL * float(residual.max())
    pivots = np.empty(0, dtype=np.intp)
    L = np.zeros((0, 0))
    while pivots.size < m:
        total = residual.sum()
        if not total > floor:
            break
        draws = np.unique(rng.choice(X.shape[0], size=min(b, m - pivots.size), p=residual / total))
        accepted, decrease, L = _add_block(X, kernel, pivots, draws, L, floor, memory_budget)
        pivots = np.concatenate([pivots, accepted])
        residual = np.maximum(residual - decrease, 0.0)
        residual[draws] = 0.0  # taken, or rejected: their residual is below the floor
    return pivots

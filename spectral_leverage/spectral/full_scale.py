r"""Full-scale ridge leverage: a pivoted low-rank factor for the far field, exact conditioning on the
nearest rows for the near field. Used where the density formula's assumptions fail.

The ridge leverage of row :math:`i` is a Schur complement of :math:`K + \gamma I`
(:math:`\gamma = n\lambda`):

.. math::

    l_i = \frac{\sigma_i^2}{\sigma_i^2 + \gamma}, \qquad
    \sigma_i^2 = k_{ii} - k_{iS}(K_{SS} + \gamma I)^{-1}k_{Si},

the posterior variance at :math:`x_i` of a Gaussian process with covariance :math:`k`, given
observations with noise variance :math:`\gamma` at every other row :math:`S`.

**Why the density formula fails at both ends.** :math:`h(p(x_i))` treats the equivalent kernel
(the weights :math:`k_{iS}(K_{SS} + \gamma I)^{-1}`) as a window over a smooth density. When the
effective dimension is small (smooth kernel, wide :math:`\ell`, large :math:`\lambda`), the window is
as wide as the data and a few global eigenfunctions shape :math:`\sigma_i^2`; when the mean leverage
:math:`d_\mathrm{eff}/n` is large (rough kernel, small :math:`\lambda`), the window holds a handful of
rows and :math:`\sigma_i^2` depends on where exactly they lie. The decomposition below is exact in
both limits.

**The approximation.** Split :math:`K = FF^\top + R` with :math:`F = K_{:P}K_{PP}^{+1/2}` the
Nyström factor at pivots P chosen by randomly pivoted Cholesky
(:mod:`spectral_leverage.pivoted_cholesky`) and :math:`R` the short-ranged residual.

* Far rows enter through the factor's weights :math:`w \sim N(0, I)` only: row :math:`j` observes
  :math:`f_j^\top w` with noise :math:`r_{jj} + \gamma` (its residual's correlation with row
  :math:`i` dropped). Their precision is :math:`A = I + \sum_j f_j f_j^\top / (r_{jj} + \gamma)`.
* The near block :math:`B = \{i\} \cup N_i` (the k nearest rows) enters exactly. With
  :math:`S_B = F_B A^{-1}F_B^\top` and :math:`W_B = \mathrm{diag}(r_{BB} + \gamma)`, removing B's own
  terms from :math:`A` (Woodbury) gives :math:`F_B A_{-B}^{-1}F_B^\top = S_B + S_B(W_B - S_B)^{-1}S_B`;
  the covariance of :math:`f_B` given the far rows is
  :math:`C = R_{BB} + F_B A_{-B}^{-1}F_B^\top`, and
  :math:`\sigma_i^2 \approx C_{ii} - C_{iN}(C_{NN} + \gamma I)^{-1}C_{Ni}`.

With :math:`R = 0` (effective rank below the number of pivots) this is the leave-one-out variance of
the Nyström model, its exact leverage; with :math:`F = 0` it is conditioning on the k nearest rows,
exact when the equivalent kernel's window holds no more than k rows. Between, the two combine as in
the full-scale approximation of spatial statistics (Sang & Huang, 2012). Identical rows are each
other's neighbours and share their leverage as the exact scores do.

Cost: pivots on a subsample (:math:`O(n_s m^2)`); one pass over the rows for :math:`A`
(:math:`O(nm^2)`), one for the near blocks (:math:`O(nm^2 + nk^2m + nk^3)`) and a k-nearest-
neighbour query. Memory: quarters of ``memory_budget`` for the m×m matrices, the pivot
subsample, its kernel blocks and each pass's row blocks (m and k shrink to fit a small budget).

References
----------
H. Sang and J. Z. Huang. A full scale approximation of covariance functions for large spatial data
sets. J. R. Stat. Soc. B 74(1), 2012.

A. V. Vecchia. Estimation and model identification for continuous spatial processes. J. R. Stat.
Soc. B 50(2), 1988.
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.linalg
from pykdtree.kdtree import KDTree
from scipy.spatial import cKDTree

from .._blocks import KERNEL_BYTES_PER_ENTRY, row_chunks
from ..pivoted_cholesky import PIVOT_BLOCK, RESIDUAL_SHARE, inverse_sqrt, rp_cholesky

__all__ = ["full_scale_leverage", "outside_density_regime", "pivots_for"]

logger = logging.getLogger(__name__)

#: Pivots of the far-field factor (at most; fewer once the residual is negligible).
MAX_PIVOTS = 512
#: Far-field work :math:`n m^2` at most: past 65 536 rows the pivots shrink as :math:`1/\sqrt{n}`.
PIVOT_WORK = 2**34
#: Rows conditioned on exactly in each near block.
NEIGHBOURS = 32
#: The density formula needs many rows in the equivalent kernel's window, which holds about
#: 1 / l_i of them: below 50 (a mean leverage over 1/50) the scores depend on the rows' positions.
DISCRETE_LEVERAGE = 1 / 50


def pivots_for(n: int) -> int:
    """Most pivots for n rows: :data:`MAX_PIVOTS`, fewer where :math:`n m^2` would pass
    :data:`PIVOT_WORK` (never under 64).

    Examples
    --------
    >>> pivots_for(4000), pivots_for(10**6)
    (512, 131)
    """
    return int(min(MAX_PIVOTS, max(64, np.sqrt(PIVOT_WORK / n))))


def outside_density_regime(effective_dimension: float, n: int) -> bool:
    r"""Whether the density formula's scores, of sum ``effective_dimension`` over n rows, should be
    replaced by the full-scale ones.

    Two tests, one per end of the spectrum (module docstring): a small effective dimension, which
    :func:`pivots_for` (n) pivots resolve (the Nyström leverage needs about four pivots per degree
    of freedom), and a large mean leverage :math:`d_\mathrm{eff}/n \ge 1/50`.

    Examples
    --------
    >>> outside_density_regime(20.0, 100_000), outside_density_regime(1500.0, 100_000)
    (True, False)
    """
    return 4 * effective_dimension <= pivots_for(n) or effective_dimension >= DISCRETE_LEVERAGE * n


def full_scale_leverage(X: np.ndarray, kernel, spec, reg: float, *, max_pivots: int, n_neighbors: int,
                        max_samples: int | None, memory_budget: float,
                        rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    r"""Leverage :math:`l_i` of every row of X by the full-scale approximation (module docstring).

    Parameters
    ----------
    X : ndarray of shape (n, d), n >= 2
    kernel : scikit-learn kernel (stationary; ``spec`` is its parse)
    spec : :class:`~spectral_leverage.kernels.StationaryKernel`
    reg : float
        :math:`\lambda`.
    max_pivots : int
        Most pivots m (fewer once the residual holds under half a degree of freedom).
    n_neighbors : int
        Rows k conditioned on exactly; 0 is the Nyström model's own leave-one-out leverage, used
        whenever the pivots resolve the kernel (the residual then has nothing to condition on).
    max_samples : int or None
        Rows of the uniform subsample the pivots are drawn from (None: all).
    memory_budget : float
        Bytes of temporaries, split in quarters (module docstring's cost); it also bounds m and k.
    rng : numpy Generator

    Returns
    -------
    leverage : ndarray of shape (n,)
        :math:`l_i \in (0, 1)`.
    pivots : ndarray of int
        The pivot rows.
    """
    n = X.shape[0]
    gamma = n * reg
    # the budget in quarters: the m x m matrices (about eight with temporaries), the pivot
    # subsample's factor and block of columns, their kernel blocks, and each pass's row blocks
    quarter = memory_budget / 4
    max_pivots = max(1, min(max_pivots, int(np.sqrt(quarter / 64.0))))
    n_sub = min(n, max(max_pivots, int(quarter // (8.0 * (max_pivots + PIVOT_BLOCK)))))
    n_sub = n_sub if max_samples is None else min(n_sub, max_samples)
    sub = np.sort(rng.choice(n, size=n_sub, replace=False)) if n_sub < n else np.arange(n)
    pivots = sub[rp_cholesky(X[sub], kernel, max_pivots, rng, gamma=gamma, represents=n,
                             memory_budget=quarter)[0]]
    root = inverse_sqrt(kernel(X[pivots]))
    per_row = KERNEL_BYTES_PER_ENTRY * len(pivots) + 16.0 * root.shape[1]

    # far field: residual diagonal r and precision A = I + sum_j f_j f_j^T / (r_j + gamma); the
    # factor rows F (and later G) of all rows are kept for the near field when they fit a quarter
    diag = np.asarray(kernel.diag(X), dtype=float)
    residual = np.empty(n)
    precision = np.eye(root.shape[1])
    kept = np.empty((2, n, root.shape[1])) if 16.0 * n * root.shape[1] <= quarter else None
    for rows in row_chunks(n, per_row, quarter):
        F = kernel(X[rows], X[pivots]) @ root
        residual[rows] = np.maximum(diag[rows] - np.einsum("ij,ij->i", F, F), 0.0)
        precision += (F / (residual[rows] + gamma)[:, None]).T @ F
        if kept is not None:
            kept[0, rows] = F
    chol = scipy.linalg.cholesky(precision, lower=True)
    # the factor's ridge degrees of freedom, rank - tr(A^-1): when the residual holds a negligible
    # share, it has nothing to condition on and the Nyström model's own leverage is the answer
    captured = root.shape[1] - np.sum(scipy.linalg.solve_triangular(chol, np.eye(len(chol)), lower=True) ** 2)
    resolved = np.sum(residual / (residual + gamma)) <= RESIDUAL_SHARE * max(captured, 1.0)
    # a near block's (k+1)^2 pairwise gaps and matrices fit a quarter of the budget at least once
    k_budget = int(np.sqrt(quarter / (8.0 * (X.shape[1] + 12)))) - 1
    k = 0 if resolved else max(0, min(n_neighbors, n - 1, k_budget))
    logger.info("full-scale leverage: %d pivots (rank %d) from %d rows, %d neighbours", len(pivots),
                root.shape[1], n_sub, k)

    near_field = _NearField(X, spec, kernel, X[pivots], root, chol, residual, gamma, kept)
    Z = spec.rescale(X)
    # blocks of rows that are close in space (a k-d tree's leaf order) share most neighbours
    order = cKDTree(Z, balanced_tree=False, compact_nodes=False).indices if k else np.arange(n)
    tree = KDTree(Z) if k else None
    # per row of a block: its share of the kernel and factor rows of the block's ~3b distinct rows
    # (unless kept), its (k+1) gathered factor rows twice, and (k+1)^2 pairwise gaps (d each) and
    # matrices (~12); the kept rows take another quarter of the budget
    per_block_row = (0.0 if kept is not None else 3 * per_row) + (k + 1) * 16.0 * root.shape[1] \
        + (k + 1) ** 2 * 8.0 * (Z.shape[1] + 12)
    leverage = np.empty(n)
    for chunk in row_chunks(n, per_block_row, quarter):
        rows = order[chunk]
        near = rows[:, None] if tree is None else _neighbour_blocks(tree, Z, rows, k)
        leverage[rows] = near_field(near, Z)
    return leverage, pivots


def _neighbour_blocks(tree: KDTree, Z: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """(b, k+1) indices: each row of ``rows`` first, then its k nearest other rows of Z."""
    _, found = tree.query(Z[rows], k=k + 1)
    found = found.astype(np.intp).reshape(len(rows), k + 1)
    is_self = found == rows[:, None]
    # drop the row itself where the query returned it (not always first among duplicates), else
    # the farthest neighbour; then put the row in front
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), k)
    keep = np.ones_like(found, dtype=bool)
    keep[np.arange(len(rows)), drop] = False
    return np.column_stack([rows, found[keep].reshape(len(rows), k)])


class _NearField:
    """:math:`l_i` of the first row of each near block (module docstring), given the far field.

    ``kept``: None, or the factor rows F of all n rows in ``kept[0]``, whose solves G
    (:math:`GG^\top = FA^{-1}F^\top`) are then made once into ``kept[1]``; without it each block
    recomputes those of its rows."""

    def __init__(self, X, spec, kernel, pivot_rows, root, chol, residual, gamma, kept):
        self.X, self.spec, self.kernel, self.pivot_rows = X, spec, kernel, pivot_rows
        self.root, self.chol, self.residual, self.gamma = root, chol, residual, gamma
        self.kept = kept
        if kept is not None:
            kept[1] = scipy.linalg.solve_triangular(chol, kept[0].T, lower=True).T

    def _factor_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        F = self.kernel(self.X[rows], self.pivot_rows) @ self.root
        return F, scipy.linalg.solve_triangular(self.chol, F.T, lower=True).T

    def __call__(self, near: np.ndarray, Z: np.ndarray) -> np.ndarray:
        if self.kept is None:
            rows, position = np.unique(near, return_inverse=True)
            F_rows, G_rows = self._factor_rows(rows)
            F_B, G_B = F_rows[position.reshape(near.shape)], G_rows[position.reshape(near.shape)]
        else:
            F_B, G_B = self.kept[0][near], self.kept[1][near]  # (b, k+1, rank)
        S = G_B @ G_B.transpose(0, 2, 1)
        if near.shape[1] > 1:
            points = Z[near]
            gaps = points[:, :, None, :] - points[:, None, :, :]
            distance = np.sqrt(np.einsum("bijd,bijd->bij", gaps, gaps))
            local = self.spec.amplitude * self.spec.correlation(distance)
            local -= F_B @ F_B.transpose(0, 2, 1)  # R_BB
        else:
            local = self.residual[near][:, :, None]
        W = -S
        diagonal = np.arange(near.shape[1])
        W[:, diagonal, diagonal] += self.residual[near] + self.gamma
        C = local + S + S @ np.linalg.solve(W, S)
        variance = C[:, 0, 0]
        if near.shape[1] > 1:
            c_in = C[:, 0, 1:]
            C_nn = C[:, 1:, 1:]
            C_nn[:, diagonal[:-1], diagonal[:-1]] += self.gamma
            variance = variance - np.einsum("bi,bi->b", c_in, np.linalg.solve(C_nn, c_in[..., None])[..., 0])
        variance = np.clip(variance, 1e-300, np.maximum(C[:, 0, 0], 1e-300))
        return variance / (variance + self.gamma)

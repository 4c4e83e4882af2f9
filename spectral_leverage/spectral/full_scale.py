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

Only rows whose neighbours' residual variances are large against :math:`\gamma` take the near field
(:data:`NEAR_FIELD_SHARE`): the others keep their far-field variance, which the near field could move
by under 1 % (the bound is in :func:`full_scale_leverage`).

Cost: pivots on a subsample (:math:`O(n_s m^2)`); two passes over the rows for :math:`A` and the
far-field variances (:math:`O(nm^2)`); for the rows that take the near field, a k-nearest-neighbour
query and :math:`O(m^2 + k^2m + k^3)` each. Memory: quarters of ``memory_budget`` for the m×m
matrices, the pivot subsample, its kernel blocks and each pass's row blocks (m and k shrink to fit a
small budget).

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
from ..pivoted_cholesky import PIVOT_BLOCK, inverse_sqrt, rp_cholesky

__all__ = ["full_scale_leverage", "outside_density_regime", "pivots_for"]

logger = logging.getLogger(__name__)

#: Pivots of the far-field factor (at most; fewer once the residual is negligible).
MAX_PIVOTS = 512
#: Far-field work :math:`n m^2` at most: past 65 536 rows the pivots shrink as :math:`1/\sqrt{n}`.
PIVOT_WORK = 2**34
#: Rows conditioned on exactly in each near block.
NEIGHBOURS = 32
#: Largest relative change of :math:`l_i` that the near field may make where it is skipped: a row is
#: conditioned on its k nearest rows where twice their residual variances pass this share of the ridge.
NEAR_FIELD_SHARE = 0.01
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
                        max_samples: int | None, memory_budget: float, rng: np.random.Generator,
                        near_field_share: float = NEAR_FIELD_SHARE) -> tuple[np.ndarray, np.ndarray]:
    r"""Leverage :math:`l_i` of every row of X by the full-scale approximation (module docstring).

    Parameters
    ----------
    X : ndarray of shape (n, d), n >= 2
    kernel : scikit-learn kernel (stationary; ``spec`` is its parse)
    spec : :class:`~spectral_leverage.kernels.StationaryKernel`
    reg : float
        :math:`\lambda`.
    max_pivots : int
        Most pivots m (fewer once the residual's ridge degrees of freedom are 1 % of the factor's,
        :func:`~spectral_leverage.pivoted_cholesky.rp_cholesky`).
    n_neighbors : int
        Most rows k a row is conditioned on exactly; 0 gives every row the Nyström model's own
        leave-one-out leverage (residual diagonal included).
    max_samples : int or None
        Rows of the uniform subsample the pivots are drawn from (None: all).
    memory_budget : float
        Bytes of temporaries, split in quarters (module docstring's cost); it also bounds m and k.
    rng : numpy Generator
    near_field_share : float, default=NEAR_FIELD_SHARE
        A row is conditioned on its neighbours :math:`N_i` only where the near field can move its
        leverage by more than this share (relative): where :math:`2 \sum_{j \in N_i} r_{jj} / \gamma`,
        twice the neighbours' residual variances over the ridge, exceeds it. 0 conditions every row whose
        neighbours have a residual.

    Returns
    -------
    leverage : ndarray of shape (n,)
        :math:`l_i \in (0, 1)`.
    pivots : ndarray of int
        The pivot rows.

    Raises
    ------
    ValueError
        Where X's distances in the kernel's units leave float64 kernel values
        (:func:`~spectral_leverage._validation.check_kernel_range`): scikit-learn's general-ν Matérn
        gives ``inf * 0 = NaN`` there, which no eigensolver survives.
    """
    spec.check_inputs(X)  # kernel values on X must fit float64: a clear refusal, not NaN in eigh
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
    # the factor's ridge degrees of freedom, rank - tr(A^-1), and the residual's (for the log)
    captured = root.shape[1] - np.sum(scipy.linalg.solve_triangular(chol, np.eye(len(chol)), lower=True) ** 2)
    left = np.sum(residual / (residual + gamma))
    # a near block's (k+1)^2 pairwise gaps and matrices fit a quarter of the budget at least once
    k_budget = int(np.sqrt(quarter / (8.0 * (X.shape[1] + 12)))) - 1
    k = max(0, min(n_neighbors, n - 1, k_budget))
    logger.info("full-scale leverage: %d pivots (rank %d) from %d rows, up to %d neighbours; ridge degrees "
                "of freedom %.4g in the factor, %.4g in the residual", len(pivots), root.shape[1], n_sub, k,
                captured, left)

    near_field = _NearField(X, spec, kernel, X[pivots], root, chol, residual, gamma, kept)
    variance = np.empty(n)
    for rows in row_chunks(n, per_row, quarter):
        variance[rows] = near_field.variance_alone(rows)
    # conditioning on the neighbours N_i moves l_i by about 2 sum_{j in N_i} r_jj / gamma at most,
    # relatively: once through R_iN (|R_ij|^2 <= r_ii r_jj, r_ii <= sigma_i^2) and once through the
    # correlation of the neighbours' residuals, which the far field takes as independent noise of
    # variance r_jj + gamma; with a diagonal residual the far-field variance is exact
    threshold = near_field_share * gamma / 2
    if k and k * residual.max(initial=0.0) > threshold:
        Z = spec.rescale(X)
        tree = KDTree(Z)
        candidates = _candidates(tree, Z, residual, k, threshold, sub)
        # blocks of rows close in space (a k-d tree's leaf order) share most neighbours
        order = cKDTree(Z, balanced_tree=False, compact_nodes=False).indices
        candidates = order[candidates[order]]
        # per row of a block: its share of the kernel and factor rows of the block's ~3b distinct
        # rows (unless kept), its (k+1) gathered factor rows twice, and (k+1)^2 pairwise gaps
        # (d each) and matrices (~12); the kept rows take another quarter of the budget
        per_block_row = (0.0 if kept is not None else 3 * per_row) + (k + 1) * 16.0 * root.shape[1] \
            + (k + 1) ** 2 * 8.0 * (Z.shape[1] + 12)
        conditioned = 0
        for chunk in row_chunks(len(candidates), per_block_row, quarter):
            rows = candidates[chunk]
            near = _neighbour_blocks(tree, Z, rows, k)
            needed = residual[near[:, 1:]].sum(axis=1) > threshold
            if needed.any():
                variance[rows[needed]] = near_field.variance(near[needed], Z)
            conditioned += int(needed.sum())
        logger.info("full-scale leverage: %d of %d rows conditioned on their neighbours", conditioned, n)
    return variance / (variance + gamma), pivots


def _candidates(tree: KDTree, Z: np.ndarray, residual: np.ndarray, k: int, threshold: float,
                anchors: np.ndarray) -> np.ndarray:
    """Boolean mask of the rows whose k nearest other rows' residuals can sum past ``threshold``.

    Only rows that can have a *warm* row (residual over ``threshold / k``) among their k nearest
    qualify: row i is left out when its nearest warm row lies beyond :math:`|z_i - z_a| + \rho_k(a)`,
    an upper bound of its own k-NN radius from its nearest anchor row a (triangle inequality)."""
    warm = np.flatnonzero(residual > threshold / k)
    anchors = anchors[:: max(1, len(anchors) // 4096)]
    radius = tree.query(Z[anchors], k=k + 1)[0][:, -1]
    to_anchor, nearest_anchor = KDTree(Z[anchors]).query(Z, k=1)
    to_warm, _ = KDTree(Z[warm]).query(Z, k=1)
    return to_warm <= to_anchor + radius[nearest_anchor.astype(np.intp)]


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
    r""":math:`\sigma_i^2` of the first row of each near block (module docstring), given the far field.

    ``kept``: None, or the factor rows F of all n rows in ``kept[0]``, whose solves G
    (:math:`GG^\top = FA^{-1}F^\top`) are then made once into ``kept[1]``; without it each block
    recomputes those of its rows."""

    def __init__(self, X, spec, kernel, pivot_rows, root, chol, residual, gamma, kept):
        self.X, self.spec, self.kernel, self.pivot_rows = X, spec, kernel, pivot_rows
        self.root, self.chol, self.residual, self.gamma = root, chol, residual, gamma
        self.kept = kept
        if kept is not None:
            kept[1] = scipy.linalg.solve_triangular(chol, kept[0].T, lower=True).T
        # G = K_{:P} root L^{-T} in one product for the rows alone
        self.to_solved = scipy.linalg.solve_triangular(chol, root.T, lower=True).T

    def variance_alone(self, rows) -> np.ndarray:
        r""":math:`\sigma_i^2` of each row given the far field only (no neighbours): with
        :math:`s = g_i^\top g_i`, :math:`C_{ii} = r_{ii} + s + s^2 / (r_{ii} + \gamma - s)`."""
        if self.kept is not None:
            G = self.kept[1][rows]
        else:
            G = self.kernel(self.X[rows], self.pivot_rows) @ self.to_solved
        s = np.einsum("ij,ij->i", G, G)
        r = self.residual[rows]
        return np.maximum(r + s + s * s / (r + self.gamma - s), 1e-300)

    def _factor_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        F = self.kernel(self.X[rows], self.pivot_rows) @ self.root
        return F, scipy.linalg.solve_triangular(self.chol, F.T, lower=True).T

    def variance(self, near: np.ndarray, Z: np.ndarray) -> np.ndarray:
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
        return np.clip(variance, 1e-300, np.maximum(C[:, 0, 0], 1e-300))

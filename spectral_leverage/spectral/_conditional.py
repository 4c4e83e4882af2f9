r"""The full-scale leverage's per-row algebra (:mod:`spectral_leverage.spectral.full_scale`, whose
module docstring states it): the far field's factor rows and residual variances of any rows, the
posterior variance of a row given the far field alone or with its near block, and the functions
mapped over row blocks (the same on every backend).
"""

from __future__ import annotations

import logging

import numpy as np
from pykdtree.kdtree import KDTree
from scipy.spatial import cKDTree

from .._blocks import KERNEL_BYTES_PER_ENTRY, MAX_BLOCK_BYTES, progress, row_chunks
from .._spd import (
    inverse_diagonal,
    inverse_quadratic,
    lower_factor,
    lower_solve,
    spd_inverse_lower,
    symmetric_solve,
    trailing_inverse_diagonal,
    trailing_root,
)

__all__ = [
    "AnchorGroups",
    "Factor",
    "NearField",
    "far_field",
    "near_leverage",
    "sharing_runs",
    "split_group",
    "tail_leverage",
    "unlearned",
]

logger = logging.getLogger(__name__)

#: A near block's leverage is taken given every row (:meth:`NearField._leverage_given_all`) where
#: the pivots are fewer than this many times its rows, by the downdate elsewhere: where the two
#: cost about the same, with the blocks' products in float32 or float64 alike
#: (benchmarks/near_block_routes.py, one BLAS thread, blocks of 33-264 rows against 32-256 pivots:
#: 0.76x / 0.93x (float32 / float64) at m/u = 0.81, 0.92-1.06x / 1.07-1.31x at 0.97, 0.33x / 0.34x
#: at 0.12).
GIVEN_ALL_RATIO = 0.85


class Factor:
    r"""The far field's factor rows :math:`f_j = K_{jP}K_{PP}^{+1/2}` and residual prior variances
    :math:`r_{jj} = k_{jj} - f_j^\top f_j` of any rows, from the pivots' rows and
    :math:`K_{PP}^{+1/2}` (``root``; any orthogonal rotation of it gives the same :math:`FF^\top`
    and r)."""

    def __init__(self, kernel, pivot_rows: np.ndarray, root: np.ndarray):
        self.kernel, self.pivot_rows, self.root = kernel, pivot_rows, root
        self.rank = root.shape[1]

    def rows(self, X: np.ndarray, budget: float = MAX_BLOCK_BYTES) -> tuple[np.ndarray, np.ndarray]:
        """(F, r) of the rows of X, their kernel against the pivots made in row blocks within
        ``budget``."""
        F = np.empty((X.shape[0], self.rank))
        for rows in row_chunks(X.shape[0], KERNEL_BYTES_PER_ENTRY * len(self.pivot_rows), budget):
            F[rows] = self.kernel(X[rows], self.pivot_rows) @ self.root
        return F, self.residual(X, F)

    def residual(self, X: np.ndarray, F: np.ndarray) -> np.ndarray:
        """r of the rows of X (any leading shape) of factor rows F."""
        return np.maximum(np.asarray(self.kernel.diag(X.reshape(-1, X.shape[-1])), dtype=float)
                          .reshape(X.shape[:-1]) - np.einsum("...j,...j->...", F, F, dtype=float), 0.0)

    def rotated(self, V: np.ndarray) -> Factor:
        """The same factor with its rows rotated by the orthogonal V: :math:`f_j^\top V`."""
        return Factor(self.kernel, self.pivot_rows, self.root @ V)


class NearField:
    r""":math:`\sigma_i^2` of the first row of each near block (:mod:`.full_scale`'s docstring), given
    the far field.

    ``factor`` is rotated into the eigenbasis of the far field's precision,
    :math:`A = V \Lambda V^\top`, and ``scale`` is :math:`\Lambda^{-1/2}`: then the rows
    :math:`G = F\Lambda^{-1/2}` with :math:`GG^\top = FA^{-1}F^\top` are a column scaling of F,
    where a triangular solve of every run's rows took about a quarter of the fit (n = 16 000 and
    30 000 standard normal rows in 8-D, Matérn 3/2, ℓ = 1, λ = n^-3/4: 0.76x and 0.77x the CPU
    time without it; one eigendecomposition of A in place of its Cholesky factor, 0.4-1.4 s at
    rank 1334-2048).
    ``kept``: None, or the (rotated) factor rows F of all n rows, else made by each block for its
    rows; kept in float32 (with ``single``), they stay so through the blocks' gathers and products,
    G made in float32 too (n = 10⁵ standard normal rows in 8-D, RBF at ℓ = 1, λ = 1/n: 0.946x the
    fit's CPU time and 0.83x its peak memory against converting every run's rows to float64 and
    back, the scores moved by 2e-7 at most). ``single``: the blocks' products
    :math:`F_UF_U^\top` and :math:`G_UG_U^\top` in float32 (where :math:`\gamma` is large enough
    for their rounding: the caller's choice)."""

    def __init__(self, spec, factor: Factor, scale: np.ndarray, gamma: float, kept: np.ndarray | None,
                 single: bool = False):
        self.spec, self.factor, self.scale, self.gamma, self.kept = spec, factor, scale, gamma, kept
        self.single = single

    def variance_alone(self, X: np.ndarray, tail, density: np.ndarray) -> np.ndarray:
        r""":math:`\sigma_i^2` of each row of X given the far field only (no neighbours), its residual
        learned down to :math:`\tau` = ``tail(density, r)``: with :math:`s = g_i^\top g_i` and
        :math:`e = 1 - s / (r_{ii} + \gamma)`, :math:`\tau_i + s + s^2 / (r_{ii} + \gamma - s) =
        \tau_i + s / e`. e, in (0, 1], is what the row's own weight leaves of its far field's
        precision in its direction; where the row is nearly all of it and :math:`\gamma` is small,
        rounding can take e to zero or below (2000 normal rows in 3-D, λ = 1e-12: 13 rows read
        1e-292 of their exact score), so it is taken at least machine epsilon, below which it is
        rounding: the row's leverage is then 1 to within that."""
        F, r = self.factor.rows(X)
        G = F * self.scale
        s = np.einsum("ij,ij->i", G, G)
        left = np.maximum(1.0 - s / (r + self.gamma), np.finfo(float).eps)
        return np.maximum(tail(density, r) + s / left, 1e-300)

    def factor_rows(self, points: np.ndarray, ids: np.ndarray,
                    budget: float) -> tuple[np.ndarray, np.ndarray]:
        """(F, G) of the distinct rows ``ids`` at ``points``: kept, or made here (their kernel
        against the pivots in row blocks within ``budget``), in float32 where the kept rows are."""
        if self.kept is None:
            F = self.factor.rows(points, budget)[0]
        else:  # in the kept rows' precision: float32 where n lambda allows it, which the products take
            F = self.kept[ids]
        return F, F * self.scale.astype(F.dtype)

    def leverage(self, points: np.ndarray, F_U: np.ndarray, G_U: np.ndarray, c: int) -> np.ndarray:
        r"""Leverage of the last c rows (the members) of a block of distinct rows at ``points``
        (u, d), of factor rows ``F_U`` and ``G_U`` (:meth:`factor_rows`), each given all the other
        rows of the block and the far field: with :math:`C` the block's covariance given the far
        field, :math:`l_i = 1 - \gamma [(C + \gamma I)^{-1}]_{ii}`.

        Two routes give it. Where the pivots are fewer than :data:`GIVEN_ALL_RATIO` times the
        block's rows, :meth:`_leverage_given_all`, which works with the m×m precision of the far
        field's weights given every row: the cheaper of the two there, and the one that keeps its
        digits. Else the downdate (:meth:`_downdate`), with u×u matrices only; where it gives what
        cannot be, :meth:`_leverage_given_all` answers instead."""
        kernel = self.factor.kernel(points)  # K_UU
        noise = self.factor.residual(points, F_U) + self.gamma
        if self.factor.rank < GIVEN_ALL_RATIO * len(points):
            return self._leverage_given_all(kernel, F_U, noise, c)
        leverage = self._downdate(kernel, F_U, G_U, noise, c)
        if leverage is None:
            logger.debug("a near block of %d rows conditioned on all rows: the downdate lost its digits",
                         len(points))
            return self._leverage_given_all(kernel, F_U, noise, c)
        return leverage

    def _downdate(self, kernel: np.ndarray, F_U: np.ndarray, G_U: np.ndarray, noise: np.ndarray,
                  c: int) -> np.ndarray | None:
        r""":meth:`leverage` by the downdate, from the block's kernel matrix ``kernel``, or None where
        it gives what cannot be.

        With :math:`D = \mathrm{diag}(r_{UU} + \gamma)` (``noise``) and :math:`W = D - S_U`,
        :math:`S_U + S_U W^{-1} S_U = D W^{-1} D - D`, so
        :math:`C + \gamma I = R_{UU} - \mathrm{diag}(r_{UU}) + D W^{-1} D`: two Cholesky
        factorisations and the inverse of one (:mod:`spectral_leverage._spd`; with the members last,
        their diagonal needs only its trailing block). This takes the block's rows out of the far
        field, which can lose every digit where they are nearly all the far field holds in some
        direction and :math:`\gamma` is small. None where it gives what cannot be: a prior variance
        given the far field at or below zero in the block, a member's variance given the block at or
        below zero, or a Cholesky factorisation that fails."""
        W = -_gram(G_U, self.single)
        diagonal = np.diag_indices(len(kernel))
        W[diagonal] += noise
        inverse = spd_inverse_lower(W, lu=False)
        if inverse is None:
            return None
        covariance = kernel - _gram(F_U, self.single)  # R_UU, then C + gamma I
        covariance[diagonal] = 0.0
        covariance += inverse * noise[:, None] * noise[None, :]
        prior = covariance[diagonal] - self.gamma
        if not np.all(prior > 0):
            return None
        members = trailing_inverse_diagonal(covariance, c, lu=False)
        if members is None:
            return None
        variance = 1.0 / members - self.gamma
        if not np.all(variance > 0):
            return None
        variance = np.minimum(variance, prior[-c:])
        return variance / (variance + self.gamma)

    def _leverage_given_all(self, kernel: np.ndarray, F_U: np.ndarray, noise: np.ndarray,
                            c: int) -> np.ndarray:
        r""":meth:`leverage` without the downdate, from the block's kernel matrix ``kernel``: with the
        far field's precision :math:`A = \Lambda` (diagonal in the rotated basis, ``scale``
        :math:`= \Lambda^{-1/2}`), the block's residual and noise :math:`N = R_{UU} + \gamma I` and
        :math:`D` = ``noise``, Woodbury's identity gives
        :math:`(C + \gamma I)^{-1} = N^{-1} - N^{-1} F_U P^{-1} F_U^\top N^{-1}` with
        :math:`P = \Lambda - F_U^\top D^{-1} F_U + F_U^\top N^{-1} F_U`, the precision of the
        far field's weights given every row. P's terms are not near cancelling: where the block's rows
        are most of :math:`\Lambda` in a direction, :math:`F_U^\top N^{-1} F_U` puts them back, and
        :math:`P \succeq I`. (Five identical rows on a pivot at :math:`\gamma = n\lambda` = 8e-8, in
        2-D: their prior read -4.7 and their leverage 1e-293 through the downdate, where the exact
        leverage is 0.2; 0.2 here. Where both routes answer they agree to 2e-6: CCPP, CASP and normal
        rows in 8-D, 4000 rows, λ = n^-1 to n^-3, every block.)

        With :math:`N = LL^\top` and :math:`Y = L^{-1}F_U`, :math:`F_U^\top N^{-1}F_U = Y^\top Y`;
        the members being last, their rows of :math:`N^{-1}` and of :math:`N^{-1}F_U` need only the
        trailing block of :math:`L^{-1}`. :math:`O(u^3/3 + u^2 m + u m^2 + m^3/3)`, against the
        downdate's :math:`O(u^2 m + u^3)`, whose inverse (``potri``) runs slowly (its ``trtri``
        takes twice ``potrf``'s time for the same arithmetic at order 190). With ``single``, the solve
        for Y and the m×m products run in float32 (the factorisations stay float64): 0.52x the
        downdate's time on 400 blocks of the fit to 10⁶ standard normal rows in 8-D (RBF, ℓ = 1,
        λ = 1/n; u about 175, m = 131; one thread; 0.70x in float64), the scores moved by 4.7e-7
        at most (40 fits of 20 000 rows in 8-D, standard normal and CASP, 64 and 128 pivots, γ = 1
        and n^0.25). Where rounding takes N's Cholesky factorisation, the symmetric indefinite one
        solves instead, in float64."""
        F_U = np.asarray(F_U, dtype=float)
        residual = kernel - _gram(F_U, self.single)
        residual[np.diag_indices(len(kernel))] = noise  # R_UU + gamma I, its diagonal as in D
        chol = lower_factor(residual)
        products = np.float32 if self.single else np.float64
        if chol is not None:
            solved = lower_solve(chol, F_U, products)  # Y
            root = trailing_root(chol, c)  # L^{-1} at the members
            inverse, members = inverse_diagonal(root), root.T @ solved[-c:]
            gram = (solved.T @ solved).astype(float)
        else:
            solved = symmetric_solve(residual, np.hstack([F_U, np.eye(len(kernel))[:, -c:]]))
            inverse, members = np.diagonal(solved[-c:, -c:]), solved[-c:, :-c]  # N^{-1}, N^{-1} F_U there
            gram = F_U.T @ solved[:, :-c]
        weighted = (F_U / np.sqrt(noise)[:, None]).astype(products, copy=False)
        precision = gram - (weighted.T @ weighted).astype(float)
        precision[np.diag_indices_from(precision)] += 1.0 / self.scale**2
        through = inverse_quadratic(precision, members.T)
        return np.clip(1.0 - self.gamma * (inverse - through), 0.0, 1.0)


def _gram(A: np.ndarray, single: bool) -> np.ndarray:
    """:math:`AA^\top` in float64, its product in float32 if ``single`` (twice as fast)."""
    if not single:
        return A @ A.T
    A = A.astype(np.float32, copy=False)
    return (A @ A.T).astype(float)


class AnchorGroups:
    """Labels of rows: the nearest of the ``anchors`` (the pivots' rows, or evenly spaced rows of their
    subsample where the pivots are sparse; in the kernel's unit-length coordinates ``rescale``), the
    groups of rows whose near blocks share one factorisation (:func:`near_leverage`); the anchors
    place each group (on Dask, in the cell of its anchor)."""

    def __init__(self, anchors: np.ndarray, rescale):
        # labelled in a k-d tree's leaf order, so that groups of consecutive labels lie together and
        # the rows handed over at once share most of their near blocks' rows (their factor rows made
        # once)
        self.anchors = anchors[cKDTree(rescale(anchors)).indices]
        self.rescale = rescale

    def __call__(self, X: np.ndarray) -> np.ndarray:
        _, nearest = KDTree(self.rescale(self.anchors)).query(self.rescale(X), k=1)
        return nearest.astype(np.intp).ravel()


def unlearned(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    """The tail's posterior variance where there is no tail: its prior r (zero)."""
    return r


def far_field(X: np.ndarray, factor: Factor, gamma: float, per_row: float, budget: float, verbose: bool,
              kept: np.ndarray | None, start: tuple) -> tuple[np.ndarray, float]:
    r"""``start`` plus (:math:`\sum_j f_j f_j^\top / (r_j + \gamma)`, :math:`\sum_j r_j / (r_j + \gamma)`)
    over the rows of X, in row blocks of ``per_row`` bytes within ``budget``; F into ``kept`` if
    given."""
    weighted, left = start[0].copy(), start[1]
    for rows in progress(list(row_chunks(X.shape[0], per_row, budget)), verbose=verbose,
                         desc="full-scale far field", unit="block"):
        F, residual = factor.rows(X[rows])
        scaled = F / np.sqrt(residual + gamma)[:, None]
        weighted += scaled.T @ scaled  # a symmetric product (BLAS syrk): half a general one's work
        left += float(np.sum(residual / (residual + gamma)))
        if kept is not None:
            kept[rows] = F
    return weighted, left


def tail_leverage(X: np.ndarray, density: np.ndarray, shared: tuple, per_row: float, budget: float,
                  verbose: bool) -> np.ndarray:
    """Leverage of the rows of X given the far field, the residual learned by the tail integral."""
    near_field, tail = shared
    variance = np.empty(X.shape[0])
    for rows in progress(list(row_chunks(X.shape[0], per_row, budget)), verbose=verbose,
                         desc="full-scale tail", unit="block"):
        variance[rows] = near_field.variance_alone(X[rows], tail, density[rows, 0])
    return variance / (variance + near_field.gamma)


def near_leverage(points: np.ndarray, near: np.ndarray, labels: np.ndarray, near_field: NearField,
                  group_rows: int, block_rows: int, factor_bytes: float) -> np.ndarray:
    """Leverage of the first row of each near block (``points`` (b, k+1, d), row ids ``near``, the
    rows sorted by their group ``labels``): the rows of a group share one block, their own rows
    and their k nearest (:class:`AnchorGroups`, at most ``group_rows`` rows a group and
    ``block_rows`` in its block). The factor rows F and G of the blocks' distinct rows are made
    once for runs of consecutive parts (:func:`sharing_runs`) within ``factor_bytes``: all of it
    for F and G where F is kept, else three quarters, a quarter for the kernel rows they are made
    from."""
    starts = np.unique(labels, return_index=True)[1]  # labels sorted: where each group starts
    parts = [part for group in np.split(np.arange(len(near)), starts[1:])
             for part in split_group(group, near_field.spec.rescale(points[group, 0]), near[group],
                                     group_rows, block_rows)]
    made = near_field.kept is None  # then a quarter of factor_bytes for the kernel rows
    most = max(1, int((0.75 if made else 1.0) * factor_bytes // (16.0 * near_field.factor.rank)))
    out = np.empty(len(near))
    for run in sharing_runs(parts, near, most):
        held = np.concatenate(run)
        every, first, local = np.unique(near[held], return_index=True, return_inverse=True)
        local = local.reshape(len(held), -1)  # where each near block's rows are among the run's
        rows = points[held].reshape(-1, points.shape[-1])[first]
        F, G = near_field.factor_rows(rows, every, factor_bytes / 4)  # once for the rows of the run
        start = 0
        for part in run:
            # the block's distinct rows in ascending order, its members (the part's own rows, in
            # order) taken out and put last
            reach, start = local[start:start + len(part)], start + len(part)
            distinct = np.unique(reach)
            block = np.concatenate([np.delete(distinct, np.searchsorted(distinct, reach[:, 0])), reach[:, 0]])
            out[part] = near_field.leverage(rows[block], F[block], G[block], len(part))
    return out


def sharing_runs(parts: list, near: np.ndarray, most: int):
    """Yield runs of consecutive ``parts`` (positions into the near blocks' row ids ``near``) whose
    blocks reach at most ``most`` distinct rows together, a part reaching more alone: the rows a
    run's factor rows are made for. Counted, not estimated: how many a run reaches depends on the
    dimension (n = 8000 standard normal rows, λ = 1/n, Matérn 3/2 at ℓ = 0.3 and 1: 1.9 distinct
    rows a row in runs of 2000 rows in 3-D, 9.7 in runs of 220 rows in 8-D)."""
    local = np.unique(near, return_inverse=True)[1].reshape(near.shape)
    seen = np.zeros(local.size and int(local.max()) + 1, dtype=bool)
    run, reached = [], 0
    for part in parts:
        ids = np.unique(local[part])
        new = ids[~seen[ids]]
        if run and reached + len(new) > most:
            yield run
            seen[:] = False
            run, reached, new = [], 0, ids
        seen[new] = True
        run.append(part)
        reached += len(new)
    if run:
        yield run


def split_group(group: np.ndarray, points: np.ndarray, near: np.ndarray, group_rows: int,
                block_rows: int) -> list:
    """``group`` (positions of rows at ``points`` with near blocks ``near``) in parts of at most
    ``group_rows`` rows whose near blocks hold at most ``block_rows`` distinct rows (a part of one
    row excepted): halves split at the median of the widest coordinate (stable, so the same parts
    for the same rows in the same order on every backend)."""
    if len(group) == 1 or (len(group) <= group_rows and (near.size <= block_rows  # so at most that many
                                                         or len(np.unique(near)) <= block_rows)):
        return [group]
    j = np.argmax(np.ptp(points, axis=0))
    order = np.argsort(points[:, j], kind="stable")
    half = len(group) // 2
    return [part for side in (order[:half], order[half:])
            for part in split_group(group[side], points[side], near[side], group_rows, block_rows)]

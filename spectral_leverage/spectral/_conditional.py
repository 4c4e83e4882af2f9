r"""The full-scale leverage's per-row algebra (:mod:`spectral_leverage.spectral.full_scale`, whose
module docstring states it): the far field's factor rows and residual variances of any rows, the
posterior variance of a row given the far field alone or with its near block (its blocks in
batches), and the far field's and the tail's functions mapped over row blocks (the same on every
backend; the near blocks' are in :mod:`._near_groups`).
"""

from __future__ import annotations

import logging

import numpy as np

from .._blocks import KERNEL_BYTES_PER_ENTRY, MAX_BLOCK_BYTES, progress, row_chunks
from .._spd import (
    factor_in_place,
    inverse_quadratic,
    solve_lower_in_place,
    spd_invert_in_place,
    symmetric_solve,
    trailing_inverse_diagonals,
)

__all__ = ["BATCH_BYTES", "GIVEN_ALL_RATIO", "Factor", "NearField", "far_field", "tail_leverage", "unlearned"]

logger = logging.getLogger(__name__)

#: A near block's leverage is taken given every row (:meth:`NearField._leverage_given_all`) where
#: the pivots are fewer than this many times its rows, by the downdate elsewhere: about where the
#: two cost the same, with the blocks' products in float32 or float64 (benchmarks/near_block_routes.py,
#: one BLAS thread, 40 blocks of 33-264 rows against 32-512 pivots, both routes in batches; time
#: given every row against the downdate's: 0.72-0.76x (float32) and 0.86-0.91x (float64) at
#: m/u = 0.73, 0.89-1.00x and 1.04-1.25x at 0.97, 0.36x and 0.41x at 0.12).
GIVEN_ALL_RATIO = 0.85
#: The blocks given every row are scored in batches of at most this many bytes (or the caller's
#: budget): where they stay in the cores' caches. Larger batches run slower for it (13 near-field
#: calls of the fit to 10⁶ standard normal rows in 8-D, about 3 / 7 / 28 blocks a batch at 8 / 16 /
#: 64 MB: 13.9 / 15.0 / 21.7 s on one thread, 9.9 / 10.5 / 12.9 s on two).
BATCH_BYTES = 8_000_000


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
    ``kept``: None, or the (rotated) factor rows F of all n rows, else made by each run of blocks
    for its rows; kept in float32 (with ``single``), they stay so through the blocks' gathers and
    products, a downdate's G made in float32 too (n = 10⁵ standard normal rows in 8-D, RBF at
    ℓ = 1, λ = 1/n: 0.946x the fit's CPU time and 0.83x its peak memory against converting every
    run's rows to float64 and back, the scores moved by 2e-7 at most). ``single``: the blocks' products
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

    def factor_rows(self, points: np.ndarray, ids: np.ndarray, budget: float) -> np.ndarray:
        """F of the distinct rows ``ids`` at ``points``: kept, or made here (their kernel against the
        pivots in row blocks within ``budget``), in float32 where the kept rows are."""
        if self.kept is None:
            return self.factor.rows(points, budget)[0]
        return self.kept[ids]  # in the kept rows' precision: float32 where n lambda allows it

    def leverage(self, points: np.ndarray, F: np.ndarray, blocks: list, counts: list,
                 budget: float) -> list:
        r"""Leverage of the last ``counts[j]`` rows (the members) of each block ``blocks[j]`` (ids
        into the distinct rows at ``points`` (r, d), of factor rows ``F`` (:meth:`factor_rows`)),
        each given all the other rows of its block and the far field: with :math:`C` the block's
        covariance given the far field, :math:`l_i = 1 - \gamma [(C + \gamma I)^{-1}]_{ii}`.

        Two routes give it, each over batches of blocks of similar sizes within ``budget`` bytes
        (and :data:`BATCH_BYTES`; :meth:`_stacked`). Where the pivots are fewer than
        :data:`GIVEN_ALL_RATIO` times the block's rows, :meth:`_leverage_given_all`, which works
        with the m×m precision of the far field's weights given every row: the cheaper of the two
        there, and the one that keeps its digits. Else the downdate (:meth:`_downdate`), with u×u
        matrices only; where it gives what cannot be, :meth:`_leverage_given_all` answers
        instead."""
        budget = min(budget, BATCH_BYTES)
        out, lost = [None] * len(blocks), []
        given_all, downdate = [], []
        for j, block in enumerate(blocks):
            (given_all if self.factor.rank < GIVEN_ALL_RATIO * len(block) else downdate).append(j)
        for j, leverage in self._in_batches(self._downdate, points, F, blocks, counts, downdate, budget):
            if leverage is None:
                lost.append(j)
            out[j] = leverage
        if lost:
            logger.debug("%d near blocks conditioned on all rows: the downdate lost their digits", len(lost))
        for j, leverage in self._in_batches(self._leverage_given_all, points, F, blocks, counts,
                                            given_all + lost, budget):
            out[j] = leverage
        return out

    def _in_batches(self, route, points: np.ndarray, F: np.ndarray, blocks: list, counts: list,
                    chosen: list, budget: float):
        """Yield (j, ``route``'s answer for block j) for the blocks ``chosen``, taken by ``route`` in
        batches of similar sizes (:func:`_batches`)."""
        chosen = sorted(chosen, key=lambda j: len(blocks[j]))
        for batch in _batches([len(blocks[j]) for j in chosen], self.factor.rank, budget):
            picked = [chosen[i] for i in batch]
            yield from zip(picked, route(points, F, [blocks[j] for j in picked], [counts[j] for j in picked]),
                           strict=True)

    def _stacked(self, points: np.ndarray, F: np.ndarray, blocks: list) -> tuple:
        r"""A batch of blocks (ids into the distinct rows at ``points``, of factor rows ``F``)
        stacked for :meth:`_downdate` and :meth:`_leverage_given_all`: (:math:`F_U` (B, U, m),
        :math:`D` = ``noise`` (B, U), :math:`K_{UU} - F_UF_U^\top` (B, U, U), which rows are the
        blocks' own (B, U)), U the largest block's rows.

        Each block's rows come last, after rows of padding that are their own: no factor rows, no
        kernel with any other row, unit noise, so that they change no other row's answer (each
        route's answers for them are dropped). The products and sums then run once over the batch,
        and only the kernel matrices, factorisations, solves and triangular inverses block by block
        (:mod:`spectral_leverage._spd`: LAPACK and BLAS without the GIL). Block by block, each of the
        near field's worker threads held the GIL for dozens of small NumPy calls a block, and after
        each LAPACK call waited for the GIL while the other thread held it, so that two threads ran
        hardly faster than one (:data:`BATCH_BYTES` has the figures). Each block's matrices are
        symmetric, so that its C-ordered (U, U) slice, transposed, is the same matrix in Fortran's
        order, which LAPACK works on in place."""
        B, U = len(blocks), max(len(block) for block in blocks)
        source = np.zeros((B, U), dtype=np.intp)
        valid = np.zeros((B, U), dtype=bool)
        for b, block in enumerate(blocks):
            source[b, U - len(block):] = block
            valid[b, U - len(block):] = True
        F_U = F[source]
        F_U[~valid] = 0
        noise = self.factor.residual(points[source], F_U) + self.gamma
        noise[~valid] = 1.0
        residual = -_gram(F_U, self.single)
        for b, block in enumerate(blocks):
            residual[b, U - len(block):, U - len(block):] += self.factor.kernel(points[block])
        return F_U, noise, residual, valid

    def _downdate(self, points: np.ndarray, F: np.ndarray, blocks: list, counts: list) -> list:
        r""":meth:`leverage` of a batch of blocks by the downdate, None for a block where it gives
        what cannot be.

        With :math:`G_U = F_U\Lambda^{-1/2}` (so :math:`S_U = G_UG_U^\top`), :math:`D =
        \mathrm{diag}(r_{UU} + \gamma)` (``noise``) and :math:`W = D - S_U`,
        :math:`S_U + S_U W^{-1} S_U = D W^{-1} D - D`, so
        :math:`C + \gamma I = R_{UU} - \mathrm{diag}(r_{UU}) + D W^{-1} D`: two Cholesky
        factorisations and the inverse of one (:mod:`spectral_leverage._spd`; with the members last,
        their diagonal needs only its trailing block). In batches (:meth:`_stacked`). This takes the
        block's rows out of the far field, which can lose every digit where they are nearly all the
        far field holds in some direction and :math:`\gamma` is small. None where it gives what
        cannot be: a prior variance given the far field at or below zero in the block, a member's
        variance given the block at or below zero, or a Cholesky factorisation that fails."""
        F_U, noise, covariance, valid = self._stacked(points, F, blocks)
        B, U, C = len(blocks), covariance.shape[1], max(counts)
        W = -_gram(F_U * self.scale.astype(F_U.dtype), self.single)
        W.reshape(B, -1)[:, ::U + 1] += noise
        inverse = W.swapaxes(1, 2)  # W^{-1} in each lower triangle
        lost = {b for b in range(B) if not spd_invert_in_place(inverse[b])}
        for b in lost:
            inverse[b] = np.eye(U)  # answered by the other route: a harmless stand-in
        covariance.reshape(B, -1)[:, ::U + 1] = 0.0  # R_UU - diag(r_UU), then C + gamma I
        covariance = covariance.swapaxes(1, 2)  # the same matrices, read in their lower triangles
        covariance += inverse * noise[:, :, None] * noise[:, None, :]
        prior = np.diagonal(covariance, axis1=1, axis2=2) - self.gamma
        lost |= set(np.flatnonzero(np.any(valid & ~(prior > 0), axis=1)))  # NaN too
        for b in range(B):
            if b in lost or not factor_in_place(covariance[b]):
                lost.add(b)
                covariance[b] = np.eye(U)  # answered by the other route: a harmless stand-in
        members = trailing_inverse_diagonals(covariance, C)[0]
        out = []
        for b, c in enumerate(counts):
            variance = 1.0 / members[b, C - c:] - self.gamma
            if b in lost or not np.all(variance > 0):
                out.append(None)
                continue
            variance = np.minimum(variance, prior[b, U - c:])
            out.append(variance / (variance + self.gamma))
        return out

    def _leverage_given_all(self, points: np.ndarray, F: np.ndarray, blocks: list, counts: list) -> list:
        r""":meth:`leverage` of a batch of blocks without the downdate: with the far field's precision
        :math:`A = \Lambda` (diagonal in the rotated basis, ``scale`` :math:`= \Lambda^{-1/2}`), a
        block's residual and noise :math:`N = R_{UU} + \gamma I` and :math:`D` = ``noise``,
        Woodbury's identity gives
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
        and n^0.25).

        In batches (:meth:`_stacked`). Where rounding fails a block's Cholesky factorisation,
        :meth:`_leverage_given_all_indefinite` answers for it."""
        F_U, noise, residual, _ = self._stacked(points, F, blocks)
        B, U, C = len(blocks), residual.shape[1], max(counts)
        residual.reshape(B, -1)[:, ::U + 1] = noise  # R_UU + gamma I, its diagonal as in D
        lower = residual.swapaxes(1, 2)  # each block's (symmetric) matrix in Fortran's order
        failed = [b for b in range(B) if not factor_in_place(lower[b])]
        for b in failed:  # answered below, not here: no factor rows, no factor
            lower[b] = np.eye(U)
            F_U[b] = 0
        products = np.float32 if self.single else np.float64
        solved = np.ascontiguousarray(F_U.swapaxes(1, 2), dtype=products)  # Y^T, each Y in Fortran's order
        chol = lower if products == np.float64 else residual.astype(products).swapaxes(1, 2)
        for b in range(B):
            solve_lower_in_place(chol[b], solved[b].T)
        inverse, root = trailing_inverse_diagonals(lower, C)  # N^{-1}'s diagonal at the trailing C rows
        members = root.swapaxes(1, 2) @ solved[:, :, U - C:].swapaxes(1, 2)  # (B, C, m): Y's rows there
        precision = self._weights_precision((solved @ solved.swapaxes(1, 2)).astype(float), F_U, noise)
        for b in range(B):
            if b not in failed and factor_in_place(precision[b].T):
                solve_lower_in_place(precision[b].T, members[b].T)
            elif b not in failed:
                failed.append(b)
        through = np.einsum("bij,bij->bi", members, members)
        leverage = np.clip(1.0 - self.gamma * (inverse - through), 0.0, 1.0)
        out = [leverage[b, C - c:] for b, c in enumerate(counts)]
        for b in failed:
            out[b] = self._leverage_given_all_indefinite(points[blocks[b]], F[blocks[b]], counts[b])
        return out

    def _leverage_given_all_indefinite(self, points: np.ndarray, F_U: np.ndarray, c: int) -> np.ndarray:
        """:meth:`_leverage_given_all` of one block whose N fails its Cholesky factorisation by
        rounding: in float64, by the symmetric indefinite factorisation."""
        F_U = np.asarray(F_U, dtype=float)
        noise = self.factor.residual(points, F_U) + self.gamma
        residual = self.factor.kernel(points) - F_U @ F_U.T
        residual[np.diag_indices(len(points))] = noise
        solved = symmetric_solve(residual, np.hstack([F_U, np.eye(len(points))[:, -c:]]))
        inverse, members = np.diagonal(solved[-c:, -c:]), solved[-c:, :-c]  # N^{-1}, N^{-1} F_U there
        precision = self._weights_precision(F_U.T @ solved[:, :-c], F_U, noise)
        through = inverse_quadratic(precision, members.T)
        return np.clip(1.0 - self.gamma * (inverse - through), 0.0, 1.0)

    def _weights_precision(self, gram: np.ndarray, F_U: np.ndarray, noise: np.ndarray) -> np.ndarray:
        r""":math:`P = \Lambda - F_U^\top D^{-1} F_U + F_U^\top N^{-1} F_U` from the last term
        (``gram``, float64; any leading batch axes), its middle one's product in float32 with
        ``single``."""
        weighted = (F_U / np.sqrt(noise)[..., None]).astype(np.float32 if self.single else float, copy=False)
        precision = gram - (weighted.swapaxes(-1, -2) @ weighted).astype(float)
        diagonal = np.einsum("...ii->...i", precision)  # a view
        diagonal += 1.0 / self.scale**2
        return precision


def _gram(A: np.ndarray, single: bool) -> np.ndarray:
    """:math:`AA^\top` (any leading batch axes) in float64, its product in float32 if ``single``
    (twice as fast)."""
    if single:
        A = A.astype(np.float32, copy=False)
    return (A @ A.swapaxes(-1, -2)).astype(float, copy=False)


def _batches(sizes: list, rank: int, budget: float):
    """Consecutive runs of positions into ``sizes`` (blocks' rows, ascending) whose arrays in
    either route of :meth:`NearField.leverage` fit ``budget`` bytes at the run's largest u
    (:func:`_batch_bytes`; a block alone where one does not)."""
    start = 0
    while start < len(sizes):
        stop = start + 1
        while stop < len(sizes) and (stop + 1 - start) * _batch_bytes(sizes[stop], rank) <= budget:
            stop += 1
        yield range(start, stop)
        start = stop


def _batch_bytes(u: int, rank: int) -> float:
    """Bytes a block of u rows takes in a batch of either route of :meth:`NearField.leverage`: about
    four u×u matrices, three of its factor rows and four m×m ones."""
    return 8.0 * (4 * u * u + 3 * u * rank + 4 * rank * rank)


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

r"""The regime rule of ``algorithm="auto"``: where the density formula's scores hold, and where the
full-scale leverage (:mod:`~spectral_leverage.spectral.full_scale`) replaces them, with how many
pivots and neighbours (:func:`full_scale_plan`). The rule reads the density formula's effective
dimension and n only; the estimator makes the plan once and passes it down. Where it plans the tail
integral, the pivots' own counts then settle the neighbours (:func:`neighbours_given_pivots`).

The evidence behind each threshold is beside it, and in docs/validation.md ("Which estimate where").
"""

from __future__ import annotations

import logging

import numpy as np

__all__ = ["BOUNDS_SLACK", "HIGH_DIM_PIVOTS", "HIGH_DIM_TAIL_SHARE", "NEIGHBOURS_DIM", "PIVOTS_PER_WINDOW",
           "TAIL_TRUSTED_DIM", "full_scale_plan", "near_neighbours", "neighbours_given_pivots", "pivots_for",
           "tail_share", "tail_too_large", "tail_trusted", "within_bounds"]

logger = logging.getLogger(__name__)

#: Pivots of the far-field factor (at most; fewer once the residual is negligible; at most a
#: quarter of the rows) ...
MAX_PIVOTS = 2048
#: ... and far-field work :math:`n m^2` at most: the pivots shrink as :math:`1/\sqrt{n}` past about
#: 5800 rows (1465 at 8000, 926 at 20 000, 512 at 65 536, 131 at 10⁶). At n = 8000 on CASP, λ = 1/n,
#: with 32 neighbours, 512 pivots left the rows of dense regions scored up to 1.35x exact (95th
#: percentile; 1.14-1.35 at five of nine settings), 1024 pivots 1.11-1.19x, 2048 pivots
#: 1.02-1.05x, twice the neighbours with 512 pivots 1.15-1.20x; 1465 pivots 1.02-1.10x.
PIVOT_WORK = 2**34
#: The low-rank end: pivots and the tail integral where the density formula's effective dimension
#: is at most this (:func:`full_scale_plan`).
LOW_RANK = 512
#: Rows conditioned on exactly in each near block (where the windows hold few rows) ...
NEIGHBOURS = 32
#: The density formula needs many rows in the equivalent kernel's window, which holds about
#: 1 / l_i of them: below 50 (a mean leverage over 1/50) the scores depend on the rows' positions.
DISCRETE_LEVERAGE = 1 / 50
#: ... and where the window holds half the neighbours or fewer (a mean leverage of 2/k), they see
#: most of it however far apart the pivots are.
NEIGHBOURS_LEVERAGE = 2 / NEIGHBOURS
#: The residual of m pivots spread over n rows reaches about n/m rows: the neighbours cover it
#: where that is at most half of them ...
ROWS_PER_PIVOT = NEIGHBOURS // 2
#: ... and the near blocks of the rows nearest each pivot resolve it where it is at most this many
#: (CASP, n = 20 000, RBF at ℓ = 0.5, λ = 1/n, mean leverage 0.08: 16 rows a pivot read 0.94/1.21
#: against exact scores, 0.96/1.13 with 64 neighbours, 12 rows a pivot 0.95/1.15) ...
DENSE_ROWS_PER_PIVOT = 12
#: ... with :data:`NEIGHBOURS` for every this many rows of that reach (:func:`near_neighbours`): as n
#: grows at λ = 1/n the windows hold more rows, and a fixed 32 left the rows of dense regions scored
#: too high (95th percentiles against exact scores, 32 / 64 neighbours: CASP, RBF at ℓ = 0.5, 1.14 /
#: 1.08 at n = 8000, 1.17 / 1.10 at 16 000; 8-D standard normal, RBF at ℓ = 1, n = 16 000, 1.15 /
#: 1.09; at 32 000, 2048 pivots, 64 / 96 neighbours: 1.13 / 1.10).
REACH_ROWS = 6
#: Dimension from which the rows' near blocks see too little of the dense pivots' residual, so the
#: dense regime takes the cost-bounded pivots where they are more (:func:`full_scale_plan`): in d
#: dimensions a row's neighbours cover fewer of the directions it reaches (standard normal rows,
#: n = 4000, λ = 1/n, RBF at ℓ = 2, 5th/95th percentiles against exact scores, n/12 = 334
#: pivots with 64 neighbours against 1000 with 32: d = 6, 0.98/1.04 and 1.00/1.00; d = 8, 0.93/1.11
#: and 0.98/1.04; d = 12, 0.91/1.11 and 0.94/1.10, at about the same cost from d = 8 on, where the
#: near field dominates it); and the tail integral's kernel density estimate learns too much of
#: the residual (:data:`HIGH_DIM_TAIL_SHARE`).
HIGH_DIM = 8
#: In :data:`HIGH_DIM` or more dimensions the tail integral's kernel density estimate learns
#: too much of the residual (standard normal rows, n = 4000, RBF at ℓ = √d, λ = 1e-3 and 1/n; share
#: of the ridge degrees of freedom the pivots leave, exact effective dimension's ratio: d' = 8: 9.5 %,
#: 0.945; 18 %, 0.898; d' = 12: 25 %, 0.797; 41 %, 0.714; d' = 16: 36 %, 0.705; d' = 20: 42 %,
#: 0.655): a warning there where the pivots leave it more than this share.
HIGH_DIM_TAIL_SHARE = 0.1
#: Pivots per equivalent-kernel window from which sparse pivots (more than :data:`ROWS_PER_PIVOT`
#: rows each) take the tail integral in place of the density scores they would keep, however much
#: of the ridge degrees of freedom their residual holds (:func:`tail_trusted`): the windows then
#: hold more than 2 :data:`ROWS_PER_PIVOT` rows each, enough for the tail integral's density
#: formula, and the factor resolves what the density misses between them (a tight mode, say).
#: 20 000 rows, 926 pivots, against exact scores, the density scores kept by the rule before / the
#: tail integral: the bimodal design in 8-D (0.9 U[0,1]^8 + 0.1 N(1.5, 0.05²)), Matérn ½ at ℓ = 0.5
#: and 1, λ = n^-1/2 (9 and 14 pivots a window), 0.94/1.35 and 0.92/1.29 / 0.98/1.02 and 0.98/1.01,
#: at ℓ = 2, λ = n^-3/4 (2.9 a window), 0.88/1.52 / 0.94/1.06; CASP (d' = 4), the same two λ =
#: n^-1/2 settings, 0.91/1.05 and 0.84/1.09 / 0.98/1.03 and 0.98/1.02, and ℓ = 2, λ = n^-3/4 (2.3 a
#: window), 0.90/1.09 / 0.93/1.07; standard normal rows in 8-D, λ = n^-1/2, nine settings, each as
#: close or closer (Matérn ½ at ℓ = 2: 0.92/1.10 / 0.98/1.01). Ten of these with 256 pivots all read
#: within [0.90, 1.10]. Not at 0.7 a window (the rule's count): 20 000 standard normal rows in 3-D,
#: Matérn 5/2 at ℓ = 1, λ = 1/n, 512 pivots for a count of 725, the tail integral 0.86/1.16, the
#: density scores 0.97/1.08 (with 1200 pivots, 2.2 a window, 0.94/1.11).
PIVOTS_PER_WINDOW = 2
#: ... in more than this many (intrinsic) dimensions, where the density is estimated with more
#: variance and the density scores carry its error in full. In at most three, where the density is
#: accurate (the binned KDE's in the ambient case), the one setting of 20 000 rows the rule changed
#: read the same either way (standard normal rows, Matérn ½ at ℓ = 0.5, λ = n^-1/2: 0.98/1.02), and
#: at 10⁵ rows, where it changed four (standard normal and bimodal rows, λ = n^-1/2), the tail
#: integral took 3.4-5.8x the density scores' time (3.2-4.1 CPU s against 0.54-1.16 s, one thread).
TAIL_TRUSTED_DIM = 3
#: The pivots' bounds on the exact effective dimension are counted on their subsample (16 384 rows
#: by default) and scaled to n: an estimate within this factor is taken as inside them
#: (:func:`within_bounds`).
BOUNDS_SLACK = 0.9
#: From this many (intrinsic) dimensions, sparse pivots that leave the tail integral most of the
#: answer, or more than :data:`HIGH_DIM_TAIL_SHARE` of it, take the neighbours instead of the
#: tail integral or the density scores: 20 000 standard normal rows against exact scores, λ = n^-3/4,
#: 32 neighbours against the estimate kept before: d = 12, RBF at ℓ = 3, 0.96/1.04 (1.04x the
#: effective dimension) against the tail integral's 0.89/1.11 (0.88x); d = 16, RBF at ℓ = 4,
#: 0.97/1.04 (1.04x) against 0.88/1.23 (0.76x), Matérn 3/2 at ℓ = 4, 0.96/1.05 (1.08x) against the
#: density scores' 0.77/1.23 (0.58x). Not in 8: there the density scores held at λ = n^-1/2
#: (Matérn ½ and 3/2 at ℓ = 1: 0.97/1.03 (0.99x), 0.95/1.03 (1.00x)), and the tail integral now
#: taken in their place (:data:`PIVOTS_PER_WINDOW`) reads 0.99/1.01 and 0.98/1.02, at a third of
#: the neighbours' cost.
NEIGHBOURS_DIM = 12
#: ... and there the sparse pivots (the tail integral's plan) are this many times
#: :func:`pivots_for` (n), within :data:`MAX_PIVOTS`: the near field of sparse pivots in 16-D
#: scored the rows too high, and more pivots bought more accuracy a second than more neighbours
#: (standard normal rows, against exact scores: 20 000 rows, 926 → 1852 pivots, RBF at ℓ = 4,
#: λ = 1/n, 0.88/1.20 (1.26x the effective dimension) → 0.90/1.08 (1.08x); λ = n^-3/4, 0.97/1.04
#: (1.04x) → 0.99/1.01 (1.01x); Matérn 3/2 at ℓ = 4, 0.96/1.05 (1.08x) → 0.95/1.02 (1.03x), at
#: 2.6x the cost; 32 000 rows, RBF at ℓ = 2.5, λ = n^-3/4, 724 → 1448 pivots, 0.90/1.20 (1.19x) →
#: 0.92/1.11 (1.11x) at 1.5x the cost, where 64 and 96 neighbours read 1.15x and 1.13x at 1.9x and
#: 3.5x).
HIGH_DIM_PIVOTS = 2


def pivots_for(n: int) -> int:
    """Most pivots for n rows: :data:`MAX_PIVOTS`, fewer where :math:`n m^2` would pass
    :data:`PIVOT_WORK` or m would pass n/4 (never under 64).

    Examples
    --------
    >>> pivots_for(4000), pivots_for(8000), pivots_for(20_000), pivots_for(10**6)
    (1000, 1465, 926, 131)
    """
    return int(min(MAX_PIVOTS, max(64, min(n // 4, np.sqrt(PIVOT_WORK / n)))))


def near_neighbours(n: int, m: int) -> int:
    """Neighbours of each row where m pivots over n rows leave a residual reaching n/m rows:
    :data:`NEIGHBOURS` for every :data:`REACH_ROWS` of them.

    Examples
    --------
    >>> near_neighbours(4000, 334), near_neighbours(32_000, 2048), near_neighbours(16_000, 1036)
    (64, 96, 96)
    """
    return NEIGHBOURS * int(np.ceil(n / (REACH_ROWS * m)))


def full_scale_plan(effective_dimension: float, n: int, dim: float) -> tuple[int, int] | None:
    r"""(pivots, neighbours) of the full-scale leverage where the density formula's scores, of sum
    ``effective_dimension`` over n rows in ``dim`` (intrinsic) dimensions, are out of their regime;
    None where they are kept.

    With :math:`k` = :data:`NEIGHBOURS` and the mean leverage :math:`\bar l = d_\mathrm{eff}/n`:

    * (m, :func:`near_neighbours` (n, m)), dense pivots and neighbours, where the windows hold few
      rows, :math:`\bar l \ge 1/50`, and n is at most :data:`ROWS_PER_PIVOT` × :data:`MAX_PIVOTS`
      (32 768): m = n / :data:`DENSE_ROWS_PER_PIVOT` pivots (at most :data:`MAX_PIVOTS`), so that
      the near blocks of the rows nearest each pivot span its residual's reach (module docstring);
      in :data:`HIGH_DIM` or more dimensions :func:`pivots_for` (n) where that is more (up to
      about 13 500 rows);
    * (:func:`pivots_for` (n), k) past that where each window lies within half the neighbours,
      :math:`\bar l \ge 2/k`: the cost-bounded pivots, the neighbours seeing the windows however
      far apart the pivots are;
    * (:func:`pivots_for` (n), 0), pivots and the tail integral, where :math:`d_\mathrm{eff} \le`
      :data:`LOW_RANK`: :func:`neighbours_given_pivots` then keeps the factor only where it
      holds most of the ridge degrees of freedom (the low-rank end). The test is on the kernel and
      the data, not on m, which only bounds the cost: where m is below :math:`4\,d_\mathrm{eff}`
      (n past 65 536) the tail integral takes more of the residual (n = 10⁶, d = 3, Matérn 5/2, ℓ = 2,
      λ = n^-1/2, d_eff 47: 131 pivots read 0.94/1.08 against 512 pivots' scores, the density
      formula 0.85/1.05); and so wherever the density scores would be kept in
      :data:`NEIGHBOURS_DIM` or more (intrinsic) dimensions, with :data:`HIGH_DIM_PIVOTS` times the
      pivots, where their counts then take the neighbours (32 000 standard normal rows in 16-D,
      Matérn 3/2 at ℓ = 3.3, λ = n^-3/4, before the pivots doubled: the density scores 0.78/1.23
      against exact scores, 0.66x the effective dimension, unwarned; the neighbours 0.95/1.07,
      1.13x; 33 000 rows, Matérn ½ at ℓ = 4: 0.91/1.08, 0.84x, against 0.98/1.03, 1.09x).

    Elsewhere, many rows per window and more degrees of freedom than the pivots resolve, in fewer
    than :data:`NEIGHBOURS_DIM` dimensions, the density scores are kept; past 32 768 rows that
    includes the middle regime (:math:`1/50 \le \bar l < 2/k`), where they read up to 1.3–1.5
    against exact scores on real data (docs/validation.md, "Which estimate where").

    Examples
    --------
    >>> full_scale_plan(100.0, 4000, 3), full_scale_plan(100.0, 4000, 8), full_scale_plan(2000.0, 20_000, 8)
    ((334, 64), (1000, 32), (1667, 64))
    >>> [full_scale_plan(d_eff, 100_000, 3) for d_eff in (200.0, 1500.0, 8000.0)]
    [(414, 0), None, (414, 32)]
    >>> full_scale_plan(1500.0, 100_000, 16)
    (828, 0)
    """
    mean, pivots = effective_dimension / n, pivots_for(n)
    if mean >= DISCRETE_LEVERAGE and n <= ROWS_PER_PIVOT * MAX_PIVOTS:
        m = min(MAX_PIVOTS, max(64, -(-n // DENSE_ROWS_PER_PIVOT), pivots if dim >= HIGH_DIM else 0))
        return m, near_neighbours(n, m)
    if mean >= NEIGHBOURS_LEVERAGE:
        return pivots, NEIGHBOURS
    if dim >= NEIGHBOURS_DIM:
        return min(MAX_PIVOTS, max(pivots, min(n // 4, HIGH_DIM_PIVOTS * pivots))), 0
    if effective_dimension <= LOW_RANK:
        return pivots, 0
    return None


def neighbours_given_pivots(n: int, pivots: int, captured: float, left: float, dim: float,
                            effective_dimension: float, forced: bool) -> int | None:
    r"""Neighbours of a full-scale leverage planned with the tail integral (:func:`full_scale_plan`:
    none), once its m = ``pivots`` have counted the ridge degrees of freedom their factor holds,
    ``captured``, and those their residual holds taken as unlearned, ``left`` (an upper bound;
    :func:`~spectral_leverage.pivoted_cholesky.subsample_pivots`); 0 keeps the tail integral, None
    the density scores (of ``effective_dimension``).

    Where the residual holds more of them than the factor, the tail integral would be most of the
    answer, not a correction. There the rows are conditioned on their neighbours
    (:func:`near_neighbours`) if the pivots are dense (:math:`n/m \le k/2`, k = :data:`NEIGHBOURS`;
    the density the tail integral leans on may be wrong where the neighbours need none: d = 20,
    standard normal, n = 4000, Matérn 3/2, ℓ = 3, the density formula's d_eff 64 for an exact 303).
    Sparse pivots keep the tail integral where they are at least :data:`PIVOTS_PER_WINDOW` a window
    in more than three dimensions (:func:`tail_trusted`), and the density scores are kept if not
    (unless ``forced``: the user asked for the full-scale leverage): at n = 20 000, λ = 1/n, the
    rule picks the closer of the two at every setting measured (docs/validation.md, "Which
    estimate where"). They are kept only where their effective dimension lies within the bounds
    the pivots set on the exact one (:func:`within_bounds`); outside them they are wrong however
    the residual is learned, and the rows are conditioned on their :data:`NEIGHBOURS` nearest
    instead: a residual the pivots cannot hold at all is
    short-ranged (noise off a low-dimensional manifold, say), which the tail integral's density
    would take as learned (2000 rows of a 4-D cube in 32-D with noise 0.02, standardised, RBF at
    ℓ = 6, λ = 1/n, 100 pivots, against exact scores: the density scores 0.72/1.31 (0.08x the
    effective dimension), the tail integral 0.84/1.27 (0.62x), the neighbours 0.91/1.10 (1.09x)).
    From :data:`NEIGHBOURS_DIM` (intrinsic) dimensions sparse pivots take them too, in place of the
    tail integral and the density scores alike. Dense pivots take the neighbours too where the tail
    integral would learn too much (:func:`tail_too_large`: standard normal rows, RBF at ℓ = √d,
    λ = 1e-3, d = 20: n = 2000, 0.72x the exact d_eff with the tail, 1.03x with the neighbours;
    n = 8000 in 8-D, RBF at ℓ = 2, λ = 1/n: 0.85/1.13 (0.89x) with the tail, 0.98/1.04 (1.01x)
    with the neighbours).

    Examples
    --------
    >>> neighbours_given_pivots(20_000, 926, 300.0, 100.0, 3, 350.0, False)  # the factor holds most
    0
    >>> neighbours_given_pivots(20_000, 926, 30.0, 70.0, 8, 90.0, False)  # 9 pivots a window
    0
    >>> neighbours_given_pivots(20_000, 926, 200.0, 300.0, 3, 350.0, False)  # inside [200, 500]
    >>> neighbours_given_pivots(20_000, 926, 200.0, 300.0, 3, 10.0, False)  # outside
    32
    """
    if not (left > captured or tail_too_large(captured, left, dim)):
        return 0
    if n <= ROWS_PER_PIVOT * pivots:
        return near_neighbours(n, pivots)
    if dim >= NEIGHBOURS_DIM:
        return NEIGHBOURS
    if left <= captured or forced:
        return 0
    if within_bounds(effective_dimension, captured, left):
        return 0 if tail_trusted(n, pivots, captured, left, dim) else None
    logger.info("full-scale leverage: the density formula's effective dimension %.4g lies outside the "
                "pivots' bounds [%.4g, %.4g]: the rows are conditioned on their neighbours",
                effective_dimension, captured, captured + left)
    return NEIGHBOURS


def within_bounds(effective_dimension: float, captured: float, left: float) -> bool:
    r"""Whether an effective dimension lies within the bounds the pivots set on the exact one, with
    :data:`BOUNDS_SLACK` for their subsample: :math:`K = FF^\top + R` with both terms positive
    semi-definite, and :math:`t \mapsto t/(t + \gamma)` operator concave, so the exact effective
    dimension is at least the factor's, ``captured``, and at most that plus the residual's,
    which is at most ``left``, its diagonal's :math:`\sum_j r_{jj}/(r_{jj} + \gamma)` (the
    eigenvalues majorise the diagonal; Rotfel'd's trace inequality for the sum). Measured outside
    them: 10⁵ rows of a 4-D cube in 32-D with noise 0.01 (standardised), RBF at ℓ = 6, λ = 1/n,
    the density formula's 9.6 against bounds [235, 478] (414 pivots)."""
    return BOUNDS_SLACK * captured <= effective_dimension <= (captured + left) / BOUNDS_SLACK


def tail_trusted(n: int, pivots: int, captured: float, left: float, dim: float) -> bool:
    r"""Whether the tail integral is taken over the density scores however much the residual of
    m = ``pivots`` sparse pivots holds: at least :data:`PIVOTS_PER_WINDOW` of them a window, counted
    against the pivots' upper bound on the exact effective dimension (``captured + left``,
    :func:`within_bounds`), with more than :data:`ROWS_PER_PIVOT` rows a pivot, in more than
    :data:`TAIL_TRUSTED_DIM` (intrinsic) dimensions: ``dim`` is the intrinsic dimension the fit
    read, a float (a 3-D cube in 8 features reads 3.13, and takes the rule).

    Examples
    --------
    >>> tail_trusted(20_000, 926, 30.0, 70.0, 8), tail_trusted(20_000, 926, 200.0, 300.0, 8)
    (True, False)
    >>> tail_trusted(20_000, 926, 30.0, 70.0, 3)
    False
    """
    return (dim > TAIL_TRUSTED_DIM and n > ROWS_PER_PIVOT * pivots
            and pivots >= PIVOTS_PER_WINDOW * (captured + left))


def tail_share(captured: float, left: float) -> float:
    """The share of the ridge degrees of freedom the pivots leave to the tail integral (the
    factor's ``captured``, the residual's ``left``; 0 where nothing is left)."""
    return left / (captured + left) if left > 0 else 0.0


def tail_too_large(captured: float, left: float, dim: float) -> bool:
    """Whether the tail integral would learn too much: more than :data:`HIGH_DIM_TAIL_SHARE` of
    the ridge degrees of freedom left to it in :data:`HIGH_DIM` or more dimensions."""
    return dim >= HIGH_DIM and tail_share(captured, left) > HIGH_DIM_TAIL_SHARE

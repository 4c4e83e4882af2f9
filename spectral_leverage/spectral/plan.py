r"""The regime rule of ``algorithm="auto"``: where the density formula's scores hold, and where the
full-scale leverage (:mod:`~spectral_leverage.spectral.full_scale`) replaces them, with how many
pivots and neighbours (:func:`full_scale_plan`). The rule reads the density formula's effective
dimension and n only; the estimator makes the plan once and passes it down.

The evidence behind each threshold is beside it, and in docs/validation.md ("Which estimate where").
"""

from __future__ import annotations

import numpy as np

__all__ = ["full_scale_plan", "near_neighbours", "pivots_for"]

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
#: the residual (:data:`~.full_scale.HIGH_DIM_TAIL_SHARE`).
HIGH_DIM = 8


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
      :data:`LOW_RANK`: :func:`~.full_scale.full_scale_scores` then keeps the factor only where it
      holds most of the ridge degrees of freedom (the low-rank end). The test is on the kernel and
      the data, not on m, which only bounds the cost: where m is below :math:`4\,d_\mathrm{eff}`
      (n past 65 536) the tail integral takes more of the residual (n = 10⁶, d = 3, Matérn 5/2, ℓ = 2,
      λ = n^-1/2, d_eff 47: 131 pivots read 0.94/1.08 against 512 pivots' scores, the density
      formula 0.85/1.05).

    Elsewhere, many rows per window and more degrees of freedom than the pivots resolve, the
    density scores are kept; past 32 768 rows that includes the middle regime
    (:math:`1/50 \le \bar l < 2/k`), where they read up to 1.3–1.5 against exact scores on real
    data (docs/validation.md, "Which estimate where").

    Examples
    --------
    >>> full_scale_plan(100.0, 4000, 3), full_scale_plan(100.0, 4000, 8), full_scale_plan(2000.0, 20_000, 8)
    ((334, 64), (1000, 32), (1667, 64))
    >>> [full_scale_plan(d_eff, 100_000, 3) for d_eff in (200.0, 1500.0, 8000.0)]
    [(414, 0), None, (414, 32)]
    """
    mean = effective_dimension / n
    if mean >= DISCRETE_LEVERAGE and n <= ROWS_PER_PIVOT * MAX_PIVOTS:
        m = min(MAX_PIVOTS, max(64, -(-n // DENSE_ROWS_PER_PIVOT), pivots_for(n) if dim >= HIGH_DIM else 0))
        return m, near_neighbours(n, m)
    if mean >= NEIGHBOURS_LEVERAGE:
        return pivots_for(n), NEIGHBOURS
    if effective_dimension <= LOW_RANK:
        return pivots_for(n), 0
    return None

"""The regime rule of algorithm="auto" (where the full-scale leverage replaces the density scores,
with how many pivots and neighbours); the accuracy behind each threshold is tested where the scores
are made (tests/spectral/test_full_scale.py, tests/spectral/test_extremes.py)."""

from __future__ import annotations

from spectral_leverage.spectral.plan import (
    NEIGHBOURS,
    full_scale_plan,
    near_neighbours,
    neighbours_given_pivots,
    pivots_for,
    tail_trusted,
)


def test_the_regime_rule():
    # few rows per window up to 32 768 rows: dense pivots (12 rows each, at most 2048; then up to 16
    # rows each), 32 neighbours for every 6 rows a pivot's residual reaches, and the near blocks of
    # the rows nearest each pivot
    assert full_scale_plan(100.0, 4000, 3) == (334, 64) and full_scale_plan(3000.0, 4000, 3) == (334, 64)
    assert full_scale_plan(600.0, 16_384, 3) == (1366, 64)
    assert full_scale_plan(2000.0, 20_000, 3) == (1667, 64)
    assert full_scale_plan(700.0, 32_768, 3) == (2048, 96) and full_scale_plan(700.0, 32_769, 3) is None
    # in 8 or more dimensions the cost-bounded pivots where they are more (up to about 13 500 rows)
    assert full_scale_plan(100.0, 4000, 8) == (1000, 32) and full_scale_plan(400.0, 8000, 8) == (1465, 32)
    assert full_scale_plan(100.0, 4000, 7.9) == (334, 64) and full_scale_plan(2000.0, 20_000, 8) == (1667, 64)
    # past that, where each window lies within half the neighbours, the cost-bounded pivots
    assert full_scale_plan(6250.0, 10**5, 3) == (414, 32) and full_scale_plan(3000.0, 32_769, 3) == (724, 32)
    # the low-rank end: pivots and the tail integral
    assert full_scale_plan(100.0, 10**5, 3) == (414, 0) and full_scale_plan(30.0, 10**6, 3) == (131, 0)
    # ... up to d_eff 512 (the factor's own count then decides), whatever pivots the cost bound allows
    assert full_scale_plan(500.0, 10**6, 3) == (131, 0) and full_scale_plan(600.0, 10**6, 3) is None
    # between: the density formula (many rows per window, more degrees of freedom than pivots)
    assert full_scale_plan(800.0, 40_000, 3) is None and full_scale_plan(5000.0, 10**6, 3) is None
    assert full_scale_plan(800.0, 10**5, 11.9) is None
    # ... but not in 12 or more (intrinsic) dimensions: the pivots count, and settle the neighbours;
    # there twice the cost-bounded pivots (at most 2048, a quarter of the rows), whatever d_eff
    assert full_scale_plan(800.0, 10**5, 12) == (828, 0) and full_scale_plan(5000.0, 10**6, 16) == (262, 0)
    assert full_scale_plan(300.0, 10**5, 16) == (828, 0) and full_scale_plan(300.0, 40_000, 16) == (1310, 0)
    assert full_scale_plan(100.0, 20_000, 16) == (1852, 0) and full_scale_plan(10.0, 6000, 16) == (1500, 0)
    # the pivots' far-field work n m^2 stays bounded, m never under 64 nor (past 256 rows) over n/4
    for n in (10**3, 4000, 8000, 10**5, 10**6, 10**8):
        assert n * pivots_for(n) ** 2 <= max(2**34, n * 64**2) and 64 <= pivots_for(n) <= min(2048, n // 4)


def test_the_neighbours_grow_with_the_residuals_reach():
    # 32 for every 6 rows a pivot's residual reaches, rounded up
    assert [near_neighbours(n, 100) for n in (600, 601, 1200, 1201)] == [32, 64, 64, 96]
    for n, m in ((4000, 334), (20_000, 1667), (32_768, 2048), (10**5, 414)):
        assert near_neighbours(n, m) >= 32 * n / (6 * m)


def test_sparse_pivots_two_a_window_take_the_tail_integral_inside_the_bounds_only():
    # 20 000 rows, 926 sparse pivots (21.6 rows each), the residual holding more than the factor
    factor, residual = 30.0, 70.0  # 926 pivots: 9.3 a window against the upper bound 100
    # in more than three dimensions, inside the bounds [30, 100]: the tail integral, not the density
    assert neighbours_given_pivots(20_000, 926, factor, residual, 8, 90.0, False) == 0
    assert neighbours_given_pivots(20_000, 926, factor, residual, 3.13, 90.0, False) == 0
    # in at most three the density scores, as where the pivots are fewer than two a window
    assert neighbours_given_pivots(20_000, 926, factor, residual, 3, 90.0, False) is None
    assert neighbours_given_pivots(20_000, 926, 200.0, 300.0, 8, 350.0, False) is None
    # outside the bounds the density scores are wrong, and so is the density the tail integral reads:
    # the neighbours, however many pivots a window
    assert neighbours_given_pivots(20_000, 926, factor, residual, 8, 10.0, False) == NEIGHBOURS
    assert neighbours_given_pivots(20_000, 926, factor, residual, 8, 400.0, False) == NEIGHBOURS
    # dense pivots are the neighbours' whatever the count
    assert tail_trusted(20_000, 926, factor, residual, 8)
    assert not tail_trusted(10_000, 926, factor, residual, 8)
    dense = neighbours_given_pivots(10_000, 926, factor, residual, 8, 90.0, False)
    assert dense == near_neighbours(10_000, 926)

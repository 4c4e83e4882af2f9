"""Every sampler keeps its temporaries within ``memory_budget`` or says the budget is too small."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from sampler_problems import KERNEL
from sklearn.gaussian_process.kernels import Matern
from threadpoolctl import threadpool_limits

from spectral_leverage.samplers import SAMPLERS, make_sampler

BUDGET = 24 * 2**20
#: the O(n·d) part beside the budget: the validated copy of X, the scores and the other per-row
#: vectors of a fit (the spectral path keeps about 57 float64 per row); 64 float64 per row.
ROW_BYTES = 8 * 64


def _peak_bytes(run) -> int:
    """Peak bytes traced (NumPy's buffers included) while ``run()`` executes, over what was live."""
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        run()
        return tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_peak_memory_is_within_the_budget_plus_rows(name):
    # n = 2000 makes the budget bind: the dictionary samplers' row blocks fill it (RRLS: ~1 300 rows
    # per block); the exact method's n×n matrix and column blocks fit at n = 1200 (24 of 25 MiB).
    n = 1200 if name == "exact" else 2000
    X = np.random.default_rng(0).uniform(size=(n, 3))
    sampler = make_sampler(name, kernel=KERNEL, reg=1e-3, random_state=0, memory_budget=BUDGET)
    with threadpool_limits(1):
        peak = _peak_bytes(lambda: sampler.fit(X))
    assert np.all(np.isfinite(sampler.scores_))
    assert peak <= BUDGET + ROW_BYTES * n, f"{name}: peak {peak / 2**20:.1f} MiB"


@pytest.mark.parametrize("name", ["recursive-rls", "bless", "squeak", "alaoui-mahoney", "exact"])
def test_a_budget_too_small_is_a_clear_error_within_the_budget(name):
    # λ = 1e-6 with ℓ = 1 in six dimensions: every leverage is near 1, so an adaptive dictionary
    # grows to every point (the case that exhausted memory at n = 20 000). The adaptive samplers
    # refuse it upfront from the density formula's d_eff, a fit on 3000 rows whose neighbour
    # tables (the intrinsic dimension's 2048 neighbourhoods) take about 11 MiB whatever the
    # budget: 16 MiB for them (the dictionary would need 140), 4 MiB for the others.
    n, budget = 3000, (4 if name in ("alaoui-mahoney", "exact") else 16) * 2**20
    X = np.random.default_rng(1).normal(size=(n, 6))
    sampler = make_sampler(name, kernel=Matern(1.0, nu=1.5), reg=1e-6, random_state=0,
                           memory_budget=budget)

    def refused():
        with pytest.raises(ValueError, match="memory_budget"):
            sampler.fit(X)

    with threadpool_limits(1):
        peak = _peak_bytes(refused)
    assert peak <= budget + ROW_BYTES * n

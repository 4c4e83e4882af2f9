"""Randomly pivoted Cholesky against the dense algorithm of Chen, Epperly, Tropp & Webber."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.gaussian_process.kernels import RBF, Matern

from spectral_leverage.samplers.pivoted_cholesky import rp_cholesky


def dense_rp_cholesky(K: np.ndarray, m: int, seed: int) -> list[int]:
    """The sequential algorithm on the whole matrix, as in the paper's Algorithm 1."""
    rng = np.random.default_rng(seed)
    n = K.shape[0]
    F, residual, pivots = np.zeros((n, m)), np.diag(K).copy(), []
    for i in range(m):
        s = rng.choice(n, p=residual / residual.sum())
        pivots.append(int(s))
        g = K[:, s] - F[:, :i] @ F[s, :i]
        F[:, i] = g / np.sqrt(g[s])
        residual = np.maximum(residual - F[:, i] ** 2, 0.0)
    return pivots


def trace_error(K: np.ndarray, pivots) -> float:
    """tr(K − K_{:S} K_SS⁻¹ K_{S:}): the variance the pivots' Nyström approximation misses."""
    KS = K[:, pivots]
    return float(np.trace(K) - np.trace(KS @ np.linalg.solve(K[np.ix_(pivots, pivots)], KS.T)))


@pytest.mark.parametrize("kernel", [RBF(0.5), Matern(0.5, nu=1.5)], ids=repr)
def test_one_pivot_per_block_is_the_dense_algorithm(kernel):
    X = np.random.default_rng(0).uniform(size=(300, 2))
    for seed in range(3):
        pivots = rp_cholesky(X, kernel, 25, random_state=seed, block_size=1)
        assert pivots.tolist() == dense_rp_cholesky(kernel(X), 25, seed)


def test_pivots_find_a_small_far_cluster_that_uniform_rows_miss():
    """3 % of the rows far away: their residual stays whole until a pivot lands there."""
    rng = np.random.default_rng(1)
    far = rng.uniform(size=2000) < 0.03
    X = np.where(far[:, None], rng.uniform(4.0, 5.0, (2000, 2)), rng.uniform(size=(2000, 2)))
    kernel = RBF(0.3)
    K = kernel(X)
    rpc = [trace_error(K, rp_cholesky(X, kernel, 30, random_state=seed)) for seed in range(5)]
    uniform = [trace_error(K, np.random.default_rng(seed).choice(2000, 30, replace=False))
               for seed in range(5)]
    assert np.mean(rpc) < 0.5 * np.mean(uniform)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 60), d=st.integers(1, 3), m=st.integers(1, 20), block=st.integers(1, 8),
       seed=st.integers(0, 2**16))
def test_pivots_are_distinct_and_independent_of_the_memory_budget(n, d, m, block, seed):
    X = np.random.default_rng(seed).normal(size=(n, d))
    pivots = rp_cholesky(X, RBF(1.0), m, random_state=seed, block_size=block)
    assert len(set(pivots.tolist())) == pivots.size <= min(m, n)
    # every pivot adds a residual of at least 1e-8·k(0): dependent ones are rejected
    L = np.linalg.cholesky(RBF(1.0)(X[pivots]))
    assert np.diag(L).min() ** 2 > 0.5e-8
    small = rp_cholesky(X, RBF(1.0), m, random_state=seed, block_size=block, memory_budget=200)
    np.testing.assert_array_equal(small, pivots)


def test_stops_at_the_numerical_rank():
    """Five distinct rows repeated: at most five pivots, all distinct points."""
    X = np.repeat(np.random.default_rng(0).normal(size=(5, 2)), 40, axis=0)
    pivots = rp_cholesky(X, RBF(1.0), 20, random_state=0)
    assert pivots.size == 5
    assert len({tuple(row) for row in X[pivots]}) == 5


@pytest.mark.parametrize(("kwargs", "name"), [({"n_pivots": 0}, "n_pivots"),
                                              ({"block_size": 0}, "block_size"),
                                              ({"memory_budget": -1.0}, "memory_budget")])
def test_bad_arguments_are_refused_by_name(kwargs, name):
    X = np.zeros((10, 2))
    arguments = {"n_pivots": 3, **kwargs}
    with pytest.raises(ValueError, match=name):
        rp_cholesky(X, RBF(1.0), arguments.pop("n_pivots"), **arguments)

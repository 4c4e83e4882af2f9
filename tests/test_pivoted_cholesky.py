"""Randomly pivoted Cholesky: the factor is the Nyström approximation at the pivots, the pivots are
distinct, the stopping rule, the trace error against the best rank-m error."""

import numpy as np
from sklearn.gaussian_process.kernels import RBF, Matern

from spectral_leverage.pivoted_cholesky import inverse_sqrt, rp_cholesky


def test_factor_is_the_nystrom_approximation_at_the_pivots():
    X = np.random.default_rng(0).normal(size=(400, 3))
    kernel = Matern(1.0, nu=1.5)
    pivots, F = rp_cholesky(X, kernel, 60, np.random.default_rng(0))
    K_nP = kernel(X, X[pivots])
    nystrom = K_nP @ np.linalg.pinv(kernel(X[pivots]), hermitian=True) @ K_nP.T
    np.testing.assert_allclose(F @ F.T, nystrom, atol=1e-8)
    assert len(np.unique(pivots)) == len(pivots) == 60


def test_trace_error_beats_uniform_columns_and_the_best_half_rank():
    """Chen et al.'s guarantee, in the form it takes here: m pivots reach the best rank-m/2 trace
    error, and beat m columns drawn uniformly."""
    X = np.random.default_rng(1).normal(size=(500, 2))
    kernel, m = RBF(1.0), 40
    K = kernel(X)
    s = np.linalg.eigvalsh(K)[::-1]
    _, F = rp_cholesky(X, kernel, m, np.random.default_rng(0))
    error = np.trace(K) - np.sum(F**2)
    uniform = np.random.default_rng(0).choice(500, m, replace=False)
    nystrom = K[:, uniform] @ np.linalg.pinv(K[np.ix_(uniform, uniform)], hermitian=True) @ K[uniform]
    assert error <= s[m // 2:].sum()
    assert error <= 0.75 * np.trace(K - nystrom)


def test_stops_when_the_residual_has_no_leverage_left():
    X = np.random.default_rng(0).uniform(size=(2000, 1))
    few, _ = rp_cholesky(X, RBF(0.5), 500, np.random.default_rng(0), gamma=2000 * 1e-3)
    many, _ = rp_cholesky(X, Matern(0.05, nu=0.5), 500, np.random.default_rng(0), gamma=2000 * 1e-6)
    assert len(few) < 60 and len(many) == 500


def test_inverse_sqrt_drops_null_directions():
    A = np.random.default_rng(0).normal(size=(5, 2))
    W = inverse_sqrt(A @ A.T)
    assert W.shape == (5, 2)
    np.testing.assert_allclose(W.T @ (A @ A.T) @ W, np.eye(2), atol=1e-10)

"""The Nyström normal equations and their solvers against a dense solve written out in full."""

import numpy as np
import pytest
from sklearn.gaussian_process.kernels import Matern

from spectral_leverage.kernels import upper_cholesky
from spectral_leverage.krr import NystromKRR


@pytest.mark.parametrize("solver", ["direct", "cg"])
def test_coefficients_solve_the_normal_equations(solver):
    # (K_nJᵀ K_nJ + nλ K_JJ) α = K_nJᵀ y, solved densely; the solvers' jitter (1e-10 of K_JJ's
    # diagonal) moves α by far less than the tolerance at this conditioning
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(600, 2))
    y = np.sin(5 * X[:, 0]) * X[:, 1] + 0.05 * rng.normal(size=600)
    kernel, reg = Matern(0.4, nu=1.5), 1e-3
    model = NystromKRR(kernel, reg, n_centers=60, solver=solver, fit_intercept=False,
                       random_state=0).fit(X, y)
    K_nJ, K_JJ = kernel(X, model.centers_), kernel(model.centers_)
    alpha = np.linalg.solve(K_nJ.T @ K_nJ + 600 * reg * K_JJ, K_nJ.T @ y)
    fitted = K_nJ @ alpha
    np.testing.assert_allclose(model.predict(X), fitted, rtol=0, atol=1e-6 * np.abs(fitted).max())


@pytest.mark.parametrize("solver", ["direct", "cg"])
def test_weighted_intercept_solves_the_augmented_normal_equations(solver):
    # min Σ w_i (y_i − b − K_iJ α)² + W λ αᵀ K_JJ α, W = Σ w_i: the stationarity conditions in
    # (b, α) written out as one dense (1 + m) system
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(500, 2))
    y = 30.0 + np.cos(4 * X[:, 0]) + X[:, 1] + 0.05 * rng.normal(size=500)
    w = rng.uniform(0.2, 3.0, size=500)
    kernel, reg = Matern(0.4, nu=1.5), 1e-3
    model = NystromKRR(kernel, reg, n_centers=50, solver=solver, random_state=1).fit(
        X, y, sample_weight=w)
    K_nJ, K_JJ = kernel(X, model.centers_), kernel(model.centers_)
    F = np.column_stack([np.ones(500), K_nJ])
    P = np.zeros((F.shape[1], F.shape[1]))
    P[1:, 1:] = w.sum() * reg * K_JJ
    solution = np.linalg.solve(F.T @ (w[:, None] * F) + P, F.T @ (w * y))
    fitted = F @ solution
    np.testing.assert_allclose(model.predict(X), fitted, rtol=0, atol=1e-6 * np.abs(fitted).max())
    assert model.intercept_ == pytest.approx(solution[0], abs=1e-6 * np.abs(fitted).max())


def test_an_indefinite_centre_matrix_is_refused_naming_the_cause_and_fix():
    # fuzz finding (issue 24): scikit-learn's Matern at small nu gives duplicated rows k = 0.990, not
    # 1, so on data at 1e-28 the kernel matrix has an eigenvalue of -0.12
    X = np.random.default_rng(0).uniform(size=(60, 1)) * 3e-28
    X[:20] = X[0]
    with pytest.raises(np.linalg.LinAlgError, match=r"not positive semi-definite.*drop duplicated rows"):
        upper_cholesky(Matern(1.0, nu=0.0625)(X))

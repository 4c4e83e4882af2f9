"""The λ path: against an explicit hat matrix, brute-force refits and fresh fits at each λ."""

import numpy as np
import pytest
from krr_problems import FixedScores, path_problem
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern

from spectral_leverage.kernels import upper_cholesky
from spectral_leverage.krr import NystromKRR
from spectral_leverage.krr.reg_path import held_out_error, nystrom_path

KERNEL = Matern(0.3, nu=1.5)
REGS = np.array([1e-2, 1e-3, 1e-4])


def _dense(X, Y, w, centers, reg, fit_intercept):
    """(hat matrix S with ŷ = S y, penalty matrix, F = [1, K_nJ]): min Σ w (y − b − K α)² + Wλ αᵀ(K_JJ + εI)α
    written out densely, ε the solvers' jitter."""
    n, m = X.shape[0], centers.shape[0]
    w = np.ones(n) if w is None else w
    K_JJ = KERNEL(centers)
    F = np.column_stack([np.ones(n), KERNEL(X, centers)])[:, 0 if fit_intercept else 1:]
    P = np.zeros((F.shape[1], F.shape[1]))
    P[-m:, -m:] = w.sum() * reg * (K_JJ + upper_cholesky(K_JJ)[1] * np.eye(m))
    return F, P, w


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_gcv_equals_the_explicit_hat_matrix(weighted, fit_intercept):
    X, Y, w, centers = path_problem(weighted=weighted)
    path = nystrom_path(X, Y, KERNEL, centers, REGS, weights=w, fit_intercept=fit_intercept)
    for j, reg in enumerate(REGS):
        F, P, ww = _dense(X, Y, w, centers, reg, fit_intercept)
        S = F @ np.linalg.solve(F.T @ (ww[:, None] * F) + P, F.T * ww)
        residual = Y[:, 0] - S @ Y[:, 0]
        gcv = (ww @ residual**2 / ww.sum()) / (1 - np.trace(S) / X.shape[0]) ** 2
        assert path["df"][j] == pytest.approx(np.trace(S), rel=1e-8)
        assert path["error"][j] == pytest.approx(gcv, rel=1e-8)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_loo_equals_refitting_without_each_point(weighted, fit_intercept):
    """Brute force: n refits, row i's weight set to 0, the penalty Wλ held fixed (module docstring);
    with ``loo_rows`` the weighted mean over those rows of the same errors."""
    X, Y, w, centers = path_problem(n=200, seed=1, weighted=weighted)
    path = nystrom_path(X, Y, KERNEL, centers, REGS, weights=w, fit_intercept=fit_intercept,
                        criterion="loo")
    rows = np.array([0, 3, 4, 77, 150, 199])
    some = nystrom_path(X, Y, KERNEL, centers, REGS, weights=w, fit_intercept=fit_intercept,
                        criterion="loo", loo_rows=rows)
    np.testing.assert_array_equal(some["coef"], path["coef"])  # fitted on every row
    for j, reg in enumerate(REGS):
        F, P, ww = _dense(X, Y, w, centers, reg, fit_intercept)
        errors = np.empty(X.shape[0])
        for i in range(X.shape[0]):
            wi = ww.copy()
            wi[i] = 0.0
            solution = np.linalg.solve(F.T @ (wi[:, None] * F) + P, F.T @ (wi * Y[:, 0]))
            errors[i] = Y[i, 0] - F[i] @ solution
        assert path["error"][j] == pytest.approx(ww @ errors**2 / ww.sum(), rel=1e-8)
        assert some["error"][j] == pytest.approx(ww[rows] @ errors[rows] ** 2 / ww[rows].sum(), rel=1e-8)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("kernel", [KERNEL, ConstantKernel(2.0) * RBF(0.4)], ids=repr)
def test_path_equals_a_fresh_fit_at_each_reg(fit_intercept, kernel):
    X, Y, w, _ = path_problem(n=400, seed=2, t=2, weighted=True)
    sampler = FixedScores(np.random.default_rng(2).uniform(0.5, 1.5, size=400)).fit(X)
    fresh = [NystromKRR(kernel, reg, 60, sampler=sampler, fit_intercept=fit_intercept,
                        random_state=3).fit(X, Y, sample_weight=w) for reg in REGS]
    path = nystrom_path(X, Y, kernel, fresh[0].centers_, REGS, weights=w,
                        fit_intercept=fit_intercept, criterion=None)
    for j, model in enumerate(fresh):
        np.testing.assert_array_equal(model.centers_, fresh[0].centers_)
        np.testing.assert_allclose(path["coef"][j], model.coef_, rtol=1e-8,
                                   atol=1e-8 * np.abs(model.coef_).max())
        np.testing.assert_allclose(path["intercept"][j], model.intercept_, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_held_out_error_scores_the_training_folds_path_on_the_held_out_rows(fit_intercept):
    X, Y, w, centers = path_problem(n=300, seed=5, t=2, weighted=True)
    rng = np.random.default_rng(5)
    order = rng.permutation(300)
    splits = [(np.sort(order[100:]), np.sort(order[:100])), (np.sort(order[:200]), np.sort(order[200:]))]
    errors = held_out_error(X, Y, KERNEL, centers, REGS, splits, weights=w, fit_intercept=fit_intercept)
    assert errors.shape == (2, REGS.size)
    for k, (train, test) in enumerate(splits):
        path = nystrom_path(X[train], Y[train], KERNEL, centers, REGS, weights=w[train],
                            fit_intercept=fit_intercept, criterion=None)
        for j in range(REGS.size):
            residual = Y[test] - KERNEL(X[test], centers) @ path["coef"][j] - path["intercept"][j]
            expected = w[test] @ np.mean(residual**2, axis=1) / w[test].sum()
            assert errors[k, j] == pytest.approx(expected, rel=1e-8)


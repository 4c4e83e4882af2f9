"""GCV of Nyström KRR from a pivoted Cholesky factor: the same number as the λ path's on its pivots."""

import numpy as np
import pytest
from sklearn.gaussian_process.kernels import Matern

from spectral_leverage.krr.reg_path import nystrom_path
from spectral_leverage.pivoted_cholesky import rp_cholesky
from spectral_leverage.ridge_gcv import factor_gcv

KERNEL = Matern(0.4, nu=1.5)


def _problem(t: int, weighted: bool):
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(300, 2))
    Y = np.column_stack([np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + k for k in range(t)]) + 20.0
    Y += 0.1 * rng.normal(size=Y.shape)
    w = rng.uniform(0.3, 3.0, size=300) if weighted else None
    return X, Y, w


@pytest.mark.parametrize("greedy", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("t", [1, 2])
def test_factor_gcv_is_the_gcv_of_nystrom_krr_on_the_pivots(greedy, weighted, fit_intercept, t):
    X, Y, w = _problem(t, weighted)
    pivots, F = rp_cholesky(X, KERNEL, 40, np.random.default_rng(0), greedy=greedy)
    for reg in (1e-2, 1e-5):
        path = nystrom_path(X, Y, KERNEL, X[np.sort(pivots)], np.array([reg]), weights=w,
                            fit_intercept=fit_intercept)
        ours = factor_gcv(F.T, Y if t > 1 else Y[:, 0], reg, w, fit_intercept)
        assert ours == pytest.approx(path["error"][0], rel=1e-8)


def test_factor_gcv_prefers_the_factor_that_holds_the_signal():
    """A factor spanning the target's function has the lower error than one that does not."""
    X, Y, _ = _problem(1, False)
    _, good = rp_cholesky(X, KERNEL, 40, np.random.default_rng(0))
    _, poor = rp_cholesky(X[:, ::-1] * [1.0, 0.0], KERNEL, 40, np.random.default_rng(0))  # x2 only
    assert factor_gcv(good.T, Y[:, 0], 1e-4) < 0.5 * factor_gcv(poor.T, Y[:, 0], 1e-4)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_zero_weights_are_dropped_rows(fit_intercept):
    X, Y, w = _problem(1, True)
    w[::3] = 0.0
    keep = w > 0
    pivots, F = rp_cholesky(X, KERNEL, 30, np.random.default_rng(0))
    centres = X[np.sort(pivots)]
    dropped = nystrom_path(X[keep], Y[keep], KERNEL, centres, np.array([1e-4]), weights=w[keep],
                           fit_intercept=fit_intercept)["error"][0]
    zero = nystrom_path(X, Y, KERNEL, centres, np.array([1e-4]), weights=w,
                        fit_intercept=fit_intercept)["error"][0]
    assert zero == pytest.approx(dropped, rel=1e-8)
    ours = factor_gcv(F.T, Y[:, 0], 1e-4, w, fit_intercept, memory_budget=8 * 30 * 50)  # 50-row blocks
    assert ours == pytest.approx(dropped, rel=1e-8)


def test_factor_gcv_at_a_vanishing_reg_is_the_projection():
    """On a rank-deficient factor (repeated columns): at λ far below rounding the eigenvalues above
    rounding answer (the GCV of the projection onto F's columns); above it, Cholesky (the explicit
    ridge hat matrix)."""
    rng = np.random.default_rng(0)
    F = rng.normal(size=(200, 6))
    F = np.hstack([F, F[:, :2]])
    y = F[:, 0] + 0.1 * rng.normal(size=200)
    Fc, yc = F - F.mean(axis=0), y - y.mean()

    def gcv(hat):
        return np.sum((yc - hat @ yc) ** 2) / 200 / (1 - (np.trace(hat) + 1) / 200) ** 2

    assert factor_gcv(F.T, y, 1e-300) == pytest.approx(gcv(Fc @ np.linalg.pinv(Fc)), rel=1e-8)
    ridge = Fc @ np.linalg.solve(Fc.T @ Fc + 200 * 1e-3 * np.eye(8), Fc.T)
    assert factor_gcv(F.T, y, 1e-3) == pytest.approx(gcv(ridge), rel=1e-8)

import numpy as np
import pytest
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern

import spectral_leverage.samplers.exact as exact_module
from spectral_leverage import ExactLeverage, exact_leverage


@pytest.mark.parametrize("kernel", [Matern(0.5, nu=1.5), ConstantKernel(2.0) * RBF([0.3, 1.0])], ids=repr)
def test_matches_dense_formula(kernel):
    X = np.random.default_rng(0).uniform(size=(300, 2))
    n, reg = 300, 1e-3
    K = kernel(X)
    expected = np.diag(K @ np.linalg.inv(K + n * reg * np.eye(n)))
    lev = exact_leverage(X, kernel, reg)
    np.testing.assert_allclose(lev, expected, rtol=1e-9)
    assert np.all((lev > 0) & (lev < 1))


def test_isolated_point_bound():
    # an isolated point reaches k(0)/(k(0) + nλ); no leverage exceeds it
    X = np.vstack([np.random.default_rng(1).uniform(size=(99, 1)), [[1e6]]])
    lev = exact_leverage(X, Matern(0.1, nu=1.5), 0.01)
    assert lev[-1] == pytest.approx(1 / (1 + 100 * 0.01), rel=1e-10)
    assert np.all(lev <= lev[-1] * (1 + 1e-12))


def test_refuses_large_n_unless_forced(monkeypatch):
    monkeypatch.setattr(exact_module, "MAX_EXACT_SAMPLES", 50)
    X = np.random.default_rng(0).normal(size=(60, 1))
    with pytest.raises(ValueError, match="force=True"):
        exact_leverage(X, RBF(), 1e-3)
    assert exact_leverage(X, RBF(), 1e-3, force=True).shape == (60,)


def test_sampler_protocol():
    X = np.random.default_rng(0).normal(size=(200, 2))
    s = ExactLeverage(RBF(), 1e-2, random_state=0).fit(X)
    np.testing.assert_allclose(s.scores_, 200 * exact_leverage(X, RBF(), 1e-2))
    assert s.probabilities_.sum() == pytest.approx(1.0)
    assert s.effective_dimension_ == pytest.approx(s.leverage_.sum())
    # independently: d_eff = tr K(K + nλI)^{-1} = Σ μ_j / (μ_j + nλ) over K's eigenvalues
    eigenvalues = np.linalg.eigvalsh(RBF()(X))
    assert s.effective_dimension_ == pytest.approx(np.sum(eigenvalues / (eigenvalues + 200 * 1e-2)),
                                                   rel=1e-10)
    # and l_i = [(K + nλI)^{-1} K]_ii by a linear solve (no Cholesky inverse)
    K = RBF()(X)
    np.testing.assert_allclose(s.leverage_, np.diag(np.linalg.solve(K + 200 * 1e-2 * np.eye(200), K)),
                               rtol=1e-9)
    np.testing.assert_array_equal(s.sample(20), s.sample(20))


def test_bad_input():
    with pytest.raises(ValueError, match="reg"):
        exact_leverage(np.zeros((5, 1)), RBF(), 0.0)
    with pytest.raises(TypeError, match="Matern"):
        exact_leverage(np.zeros((5, 1)), "rbf", 1e-3)


def test_defaults_and_positional_parameters():
    X = np.random.default_rng(0).uniform(size=(100, 2))
    default = ExactLeverage().fit(X)
    assert default.kernel is None and default.reg == 1e-3  # the parameter is left as given
    np.testing.assert_allclose(default.leverage_, exact_leverage(X, Matern(length_scale=1.0, nu=1.5), 1e-3))
    np.testing.assert_array_equal(ExactLeverage(RBF(0.5), 1e-2).fit(X).scores_,
                                  ExactLeverage(kernel=RBF(0.5), reg=1e-2).fit(X).scores_)


def test_tiny_leverage_under_a_huge_reg_is_positive_and_accurate():
    # nightly fuzz finding (issue 24): with nλ = 1e13 and k(0) = 1e-3, 1 - nλ[(K + nλI)^{-1}]_ii
    # cancelled to -3.9e-14 and ExactLeverage raised "invalid scores"
    X = np.random.default_rng(0).uniform(size=(100, 1))
    kernel, reg = ConstantKernel(0.0316**2) * Matern(1.0, nu=0.5), 1e11
    K = kernel(X)
    expected = np.diag(np.linalg.solve(K + 100 * reg * np.eye(100), K))
    lev = exact_leverage(X, kernel, reg)
    assert np.all(lev > 0)
    np.testing.assert_allclose(lev, expected, rtol=1e-6)
    assert np.all(ExactLeverage(kernel, reg).fit(X).scores_ > 0)


@pytest.mark.parametrize("magnitude", [1e-42, 1e-40])
def test_nightly_finding_an_indefinite_kernel_matrix_is_refused_not_negative(magnitude):
    """Nightly property run (issue 38, Matérn ν down to 0.001): scikit-learn's Matern(nu=0.01)
    between duplicated or nearly coincident rows is far from exact (its zero distances are moved
    to machine epsilon, where this kernel has already fallen to about 0.5), the kernel matrix is
    indefinite, and exact_leverage returned l = -0.88 or a bare LAPACK error. Both are now the
    message that names the cause and the fix."""
    X = np.array([[2.69786714], [2.69786714], [0.409735239], [0.165276355], [8.13270239]]) * magnitude
    with pytest.raises(np.linalg.LinAlgError, match=r"not positive semi-definite.*drop duplicated rows"):
        exact_leverage(X, Matern(1.0, nu=0.01), 0.01)

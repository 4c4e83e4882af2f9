"""Random Fourier features and KRR on them (Rahimi & Recht 2008)."""

import numpy as np
import pytest
from krr_problems import mixture_problem, single_threaded_blas, small_problem  # noqa: F401 (fixtures are used by name)
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern
from sklearn.utils.estimator_checks import parametrize_with_checks

import spectral_leverage.krr.random_features as rff_module
from spectral_leverage._validation import expected_failed_checks
from spectral_leverage.krr import RandomFourierKRR
from spectral_leverage.krr.random_features import random_fourier_features, sample_fourier_frequencies

pytestmark = pytest.mark.usefixtures("single_threaded_blas")


def test_rff_chunked_accumulation_matches_one_block(monkeypatch):
    X, y = small_problem(n=500)
    one = RandomFourierKRR(Matern(0.3, nu=0.5), 1e-3, 64, random_state=0).fit(X, y)
    monkeypatch.setattr(rff_module, "DEFAULT_MEMORY_BUDGET", 16 * 64 * 37)  # 37-row blocks
    many = RandomFourierKRR(Matern(0.3, nu=0.5), 1e-3, 64, random_state=0).fit(X, y)
    np.testing.assert_allclose(many.coef_, one.coef_, rtol=1e-9)
    np.testing.assert_allclose(many.predict(X), one.predict(X), rtol=1e-9)
    Phi = one.feature_map(X)
    expected = np.linalg.solve(Phi.T @ Phi + 500 * 1e-3 * np.eye(64), Phi.T @ y)
    np.testing.assert_allclose(one.coef_, expected, rtol=1e-8)


# -------------------------------------------------------------- feature inner products ≈ the kernel
@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("kernel", [
    Matern(0.7, nu=0.5), Matern(0.7, nu=1.5), Matern(0.7, nu=2.5), RBF(0.7),
], ids=repr)
def test_fourier_features_approximate_kernel(kernel, d):
    X = np.random.default_rng(0).uniform(size=(200, d))
    K = kernel(X)
    errors = []
    for D in (100, 1000, 10000):
        Phi = random_fourier_features(X, kernel, D, random_state=1)
        errors.append(np.sqrt(np.mean((Phi @ Phi.T - K) ** 2)))
    # Monte Carlo error ~ D^{-1/2}: about 10× smaller from D = 100 to 10 000
    assert errors[0] > errors[1] > errors[2], errors
    assert errors[2] < errors[0] / 4, errors
    assert errors[2] < 0.03, errors


def test_fourier_features_amplitude_and_anisotropy():
    kernel = ConstantKernel(2.0) * Matern([0.3, 2.0], nu=1.5)
    X = np.random.default_rng(0).uniform(size=(200, 2))
    Phi = random_fourier_features(X, kernel, 20000, random_state=0)
    assert np.sqrt(np.mean((Phi @ Phi.T - kernel(X)) ** 2)) < 0.03 * 2.0


def test_estimator_uses_the_same_features():
    kernel = ConstantKernel(0.5) * Matern([0.3, 2.0], nu=2.5)
    X, y = small_problem()
    model = RandomFourierKRR(kernel, 1e-3, 64, random_state=5).fit(X, y)
    expected = random_fourier_features(X, kernel, 64, random_state=5)
    np.testing.assert_array_equal(model.feature_map(X), expected)


def test_sample_fourier_frequencies_distribution():
    # Matérn ν = 1/2, ℓ: each coordinate of ω in d = 1 is Cauchy with scale 1/ℓ (median |ω| = 1/ℓ)
    W = sample_fourier_frequencies(Matern(0.5, nu=0.5), 1, 200_000, random_state=0)
    assert np.median(np.abs(W)) == pytest.approx(2.0, rel=0.02)
    W = sample_fourier_frequencies(RBF([0.5, 4.0]), 2, 200_000, random_state=0)
    np.testing.assert_allclose(W.std(axis=1), [2.0, 0.25], rtol=0.02)


@pytest.mark.slow
def test_rff_risk_gap_shrinks_with_features(mixture_problem):
    P = mixture_problem
    gaps = []
    for D in (50, 200, 800):
        risks = [
            np.mean((RandomFourierKRR(P["kernel"], P["reg"], D, random_state=seed).fit(P["X"], P["y"])
                     .predict(P["X"]) - P["f_star"]) ** 2)
            for seed in range(5)
        ]
        gaps.append(np.median(risks) - P["risk_exact"])
    print(f"exact risk {P['risk_exact']:.4f}; median RFF risk gaps (D = 50, 200, 800): {np.round(gaps, 4)}")
    assert gaps[0] > gaps[1] > gaps[2], gaps
    assert gaps[2] < gaps[0] / 3, gaps


# scikit-learn's own API checks; check_regressors_train needs R² > 0.5 on 10-d data, hence the long
# length scale and D = 300.
@parametrize_with_checks([RandomFourierKRR(), RandomFourierKRR(RBF(5.0), 1e-5, 300, random_state=0)],
                         expected_failed_checks=expected_failed_checks)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("nu", [0.001, 0.01])
def test_matern_nu_below_minimum_is_refused_not_nan(nu):
    """Nightly finding (issue 38's property suite with ν down to 0.001): RandomFourierKRR with
    Matern(1, nu=0.001) predicted NaN (its χ² draws with 2ν degrees of freedom underflow to 0 and
    the frequencies to inf); a ν below MIN_NU is now refused, naming nu and the fix."""
    X = np.array([[0.63696169], [0.26978671]])
    with pytest.raises(ValueError, match=r"nu must be at least 0\.05 for random Fourier features"):
        RandomFourierKRR(Matern(1.0, nu=nu), 1.0, random_state=0).fit(X, np.ones(2))
    assert np.isfinite(RandomFourierKRR(Matern(1.0, nu=0.05), 1.0, random_state=0).fit(X, np.ones(2))
                       .predict(X)).all()

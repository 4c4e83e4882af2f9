"""Sketched KRR (Yang, Pilanci & Wainwright 2017) and random Fourier features KRR (Rahimi & Recht 2008)."""

import numpy as np
import pytest
import scipy.linalg
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, Matern
from sklearn.utils.estimator_checks import check_estimator
from threadpoolctl import threadpool_limits

import spectral_leverage.krr.sketch as sketch_module
from spectral_leverage import exact_leverage
from spectral_leverage.krr.sketch import (
    RandomFourierKRR,
    SketchedKRR,
    random_fourier_features,
    sample_fourier_frequencies,
)


@pytest.fixture(autouse=True, scope="module")
def single_threaded_blas():
    """Small dense problems: multi-threaded OpenBLAS only adds spin-wait overhead (2-3x on a busy box)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def exact_krr(K, y, reg):
    n = K.shape[0]
    return scipy.linalg.cho_solve(scipy.linalg.cho_factor(K + n * reg * np.eye(n)), y)


def small_problem(n=300, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.sin(5 * X[:, 0]) + X[:, -1] + 0.2 * rng.normal(size=n)
    return X, y


# ---------------------------------------------------------------- S invertible: exact KRR recovered
@pytest.mark.parametrize("sketch", ["gaussian", "ros"])
@pytest.mark.parametrize("kernel", [Matern(0.5, nu=1.5), ConstantKernel(2.0) * RBF([0.3, 1.0])], ids=repr)
def test_full_size_sketch_is_exact_krr(sketch, kernel):
    X, y = small_problem()
    n, reg = X.shape[0], 1e-3
    Xq = np.random.default_rng(1).uniform(size=(50, 2))
    coef = exact_krr(kernel(X), y, reg)
    model = SketchedKRR(kernel, reg, sketch_size=n, sketch=sketch, random_state=0).fit(X, y)
    for Z in (X, Xq):
        expected = kernel(Z, X) @ coef
        err = np.linalg.norm(model.predict(Z) - expected) / np.linalg.norm(expected)
        assert err < 1e-6, err


def test_predict_is_kernel_times_dual_coef_and_multi_output():
    X, y = small_problem()
    Y = np.column_stack([y, -2 * y + 1])
    kernel = Matern(0.4, nu=2.5)
    model = SketchedKRR(kernel, 1e-3, 40, sketch="ros", random_state=3).fit(X, Y)
    assert model.predict(X).shape == (300, 2)
    np.testing.assert_allclose(model.predict(X), kernel(X) @ model.dual_coef_, rtol=1e-10, atol=1e-12)
    single = SketchedKRR(kernel, 1e-3, 40, sketch="ros", random_state=3).fit(X, Y[:, 1])
    np.testing.assert_allclose(single.predict(X), model.predict(X)[:, 1], rtol=1e-8, atol=1e-10)
    assert single.dual_coef_.shape == (300,) and single.sketch_coef_.shape == (40,)

    rff = RandomFourierKRR(kernel, 1e-3, 100, random_state=0).fit(X, Y)
    assert rff.predict(X).shape == (300, 2)
    rff1 = RandomFourierKRR(kernel, 1e-3, 100, random_state=0).fit(X, Y[:, 0])
    np.testing.assert_allclose(rff1.predict(X), rff.predict(X)[:, 0], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("make", [
    lambda s: SketchedKRR(RBF(0.3), 1e-3, 30, sketch="gaussian", random_state=s),
    lambda s: SketchedKRR(RBF(0.3), 1e-3, 30, sketch="ros", random_state=s),
    lambda s: RandomFourierKRR(RBF(0.3), 1e-3, 50, random_state=s),
], ids=["gaussian", "ros", "rff"])
def test_random_state_reproducible(make):
    X, y = small_problem()
    a = make(7).fit(X, y).predict(X)
    np.testing.assert_array_equal(a, clone(make(7)).fit(X, y).predict(X))
    np.testing.assert_array_equal(a, make(np.random.default_rng(7)).fit(X, y).predict(X))
    assert not np.allclose(a, make(8).fit(X, y).predict(X))


def test_rff_chunked_accumulation_matches_one_block(monkeypatch):
    X, y = small_problem(n=500)
    one = RandomFourierKRR(Matern(0.3, nu=0.5), 1e-3, 64, random_state=0).fit(X, y)
    monkeypatch.setattr(sketch_module, "DEFAULT_MEMORY_BUDGET", 16 * 64 * 37)  # 37-row blocks
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


# ------------------------------------------------------------- statistical accuracy at n = 4000, d = 3
@pytest.fixture(scope="module")
def mixture_problem():
    """X ~ 0.97·U[0,1]³ + 0.03·U[2,3]³, f* = sin(4x₁) + x₂² − x₃, σ = 0.5, n = 4000, λ = n^{-3/4}."""
    n = 4000
    rng = np.random.default_rng(2017)
    far = rng.uniform(size=n) < 0.03
    X = np.where(far[:, None], rng.uniform(2.0, 3.0, (n, 3)), rng.uniform(size=(n, 3)))
    f_star = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 - X[:, 2]
    y = f_star + 0.5 * rng.normal(size=n)
    kernel, reg = Matern(length_scale=0.5, nu=1.5), n ** -0.75
    K = kernel(X)
    risk_exact = np.mean((K @ exact_krr(K, y, reg) - f_star) ** 2)
    d_eff = exact_leverage(X, kernel, reg).sum()
    return dict(X=X, y=y, f_star=f_star, kernel=kernel, reg=reg, K=K, risk_exact=risk_exact, d_eff=d_eff)


@pytest.mark.slow
@pytest.mark.parametrize("sketch", ["gaussian", "ros"])
def test_sketch_of_four_deff_matches_exact_risk(mixture_problem, sketch):
    P = mixture_problem
    m = int(np.ceil(4 * P["d_eff"]))
    ratios = []
    for seed in range(5):
        model = SketchedKRR(P["kernel"], P["reg"], m, sketch=sketch, random_state=seed).fit(P["X"], P["y"])
        fitted = P["K"] @ model.dual_coef_  # = model.predict(X), without recomputing K
        ratios.append(np.mean((fitted - P["f_star"]) ** 2) / P["risk_exact"])
    print(f"{sketch}: d_eff={P['d_eff']:.1f}, m={m}, risk ratios {np.round(ratios, 3)}")
    assert np.median(ratios) <= 1.3, ratios


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


# ---------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("params, match", [
    (dict(reg=0.0), "reg"),
    (dict(reg=-1.0), "reg"),
    (dict(reg=np.inf), "reg"),
    (dict(sketch_size=0), "sketch_size"),
    (dict(sketch_size=301), "sketch_size"),
    (dict(sketch="srht"), "sketch"),
    (dict(force="yes"), "force"),
])
def test_sketched_bad_parameters(params, match):
    X, y = small_problem()
    args = dict(kernel=RBF(), reg=1e-3, sketch_size=20) | params
    kernel, reg, m = args.pop("kernel"), args.pop("reg"), args.pop("sketch_size")
    with pytest.raises(ValueError, match=match):
        SketchedKRR(kernel, reg, m, **args).fit(X, y)


def test_bad_types_and_kernels():
    X, y = small_problem()
    with pytest.raises(TypeError, match="sketch_size"):
        SketchedKRR(RBF(), 1e-3, 2.5).fit(X, y)
    with pytest.raises(TypeError, match="n_features"):
        RandomFourierKRR(RBF(), 1e-3, "many").fit(X, y)
    with pytest.raises(TypeError, match="kernel must be"):
        SketchedKRR(DotProduct(), 1e-3, 20).fit(X, y)
    with pytest.raises(TypeError, match="kernel must be"):
        RandomFourierKRR(RBF() + RBF(), 1e-3, 20).fit(X, y)
    with pytest.raises(TypeError, match="random_state"):
        RandomFourierKRR(RBF(), 1e-3, 20, random_state="seed").fit(X, y)


@pytest.mark.parametrize("make", [
    lambda: SketchedKRR(RBF(), 1e-3, 20, random_state=0),
    lambda: RandomFourierKRR(RBF(), 1e-3, 20, random_state=0),
], ids=["sketched", "rff"])
def test_bad_data(make):
    X, y = small_problem()
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="X"):
        make().fit(bad, y)
    with pytest.raises(ValueError, match="y"):
        make().fit(X, np.where(np.arange(300) == 5, np.inf, y))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        make().fit(X, y[:-1])
    with pytest.raises(ValueError, match="y must be"):
        make().fit(X, y.reshape(300, 1, 1))
    with pytest.raises(ValueError, match="length scales"):
        type(make())(RBF([1.0, 2.0, 3.0]), 1e-3, 20).fit(X, y)
    with pytest.raises(NotFittedError):
        make().predict(X)
    model = make().fit(X, y)
    with pytest.raises(ValueError, match="3 features"):
        model.predict(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="reg"):
        type(make())(RBF(), 0.0, 20).fit(X, y)
    with pytest.raises(ValueError, match=r"n_features|sketch_size"):
        type(make())(RBF(), 1e-3, 0).fit(X, y)


def test_sketched_refuses_large_n_unless_forced(monkeypatch):
    monkeypatch.setattr(sketch_module, "MAX_EXACT_SAMPLES", 50)
    X, y = small_problem(n=60)
    with pytest.raises(ValueError, match="force=True"):
        SketchedKRR(RBF(), 1e-3, 10).fit(X, y)
    assert SketchedKRR(RBF(), 1e-3, 10, force=True, random_state=0).fit(X, y).predict(X).shape == (60,)


@pytest.mark.parametrize("estimator", [
    SketchedKRR(RBF(5.0), 1e-5, 10, random_state=0),
    SketchedKRR(RBF(5.0), 1e-5, 10, sketch="ros", random_state=0),
    RandomFourierKRR(RBF(5.0), 1e-5, 300, random_state=0),
], ids=["gaussian", "ros", "rff"])
def test_scikit_learn_estimator_checks(estimator):
    # scikit-learn's own API checks (clone, params, n_features_in_, multi-output, y=None, ...);
    # check_regressors_train needs R² > 0.5 on 10-d data, hence the long length scale and D = 300.
    check_estimator(estimator)

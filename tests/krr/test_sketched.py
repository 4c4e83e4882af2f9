"""Sketched KRR (Yang, Pilanci & Wainwright 2017), and what it shares with the random-feature KRR."""

import warnings

import numpy as np
import pytest
from krr_problems import exact_krr, mixture_problem, single_threaded_blas, small_problem  # noqa: F401 (fixtures are used by name)
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, Matern
from sklearn.utils.estimator_checks import parametrize_with_checks

import spectral_leverage.krr.sketched as sketched_module
from spectral_leverage._validation import expected_failed_checks
from spectral_leverage.krr import RandomFourierKRR, SketchedKRR

pytestmark = pytest.mark.usefixtures("single_threaded_blas")


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


# ---------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("params, match", [
    (dict(reg=0.0), "reg"),
    (dict(reg=-1.0), "reg"),
    (dict(reg=np.inf), "reg"),
    (dict(sketch_size=0), "sketch_size"),
    (dict(sketch="srht"), "sketch"),
    (dict(force="yes"), "force"),
])
def test_sketched_bad_parameters(params, match):
    X, y = small_problem()
    args = dict(kernel=RBF(), reg=1e-3, sketch_size=20) | params
    kernel, reg, m = args.pop("kernel"), args.pop("reg"), args.pop("sketch_size")
    with pytest.raises(ValueError, match=match):
        SketchedKRR(kernel, reg, m, **args).fit(X, y)


@pytest.mark.parametrize("sketch", ["gaussian", "ros"])
def test_sketched_clamps_a_sketch_larger_than_n(sketch):
    # finding 10: the default sketch_size=100 refused fewer than 100 rows; scikit-learn's Nystroem
    # clamps n_components to n with a warning, and so does SketchedKRR now
    X, y = small_problem()
    X, y = X[:50], y[:50]
    with pytest.warns(UserWarning, match="sketch_size=100 is larger than the number of samples n=50"):
        model = SketchedKRR(RBF(), sketch=sketch, random_state=0).fit(X, y)
    full = SketchedKRR(RBF(), sketch_size=50, sketch=sketch, random_state=0).fit(X, y)
    assert model.sketch_coef_.shape == (50,)
    np.testing.assert_array_equal(model.predict(X), full.predict(X))


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
    monkeypatch.setattr(sketched_module, "MAX_EXACT_SAMPLES", 50)
    X, y = small_problem(n=60)
    with pytest.raises(ValueError, match="force=True"):
        SketchedKRR(RBF(), 1e-3, 10).fit(X, y)
    assert SketchedKRR(RBF(), 1e-3, 10, force=True, random_state=0).fit(X, y).predict(X).shape == (60,)


@pytest.mark.parametrize("cls, size", [(SketchedKRR, "sketch_size"), (RandomFourierKRR, "n_features")])
def test_defaults_and_positional_arguments(cls, size):
    X, y = small_problem()
    default = cls()
    assert default.kernel is None and default.reg == 1e-3 and getattr(default, size) == 100
    fitted = cls(random_state=0).fit(X, y)
    assert fitted.kernel is None  # the default Matern(1.0, nu=1.5) is resolved in fit, not stored
    explicit = cls(Matern(length_scale=1.0, nu=1.5), 1e-3, 100, random_state=0).fit(X, y)
    np.testing.assert_array_equal(fitted.predict(X), explicit.predict(X))


@pytest.mark.parametrize("make", [
    lambda: SketchedKRR(RBF(0.3), 1e-3, 20, random_state=0),
    lambda: RandomFourierKRR(RBF(0.3), 1e-3, 20, random_state=0),
], ids=["sketched", "rff"])
def test_feature_names_recorded_in_fit(make):
    pd = pytest.importorskip("pandas")
    X, y = small_problem()
    frame = pd.DataFrame(X, columns=["a", "b"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = make().fit(frame, y)
        np.testing.assert_array_equal(model.predict(frame), make().fit(X, y).predict(X))
    assert list(model.feature_names_in_) == ["a", "b"]
    with pytest.warns(UserWarning, match="feature names"):
        model.predict(X)


# scikit-learn's own API checks (clone, params, n_features_in_, multi-output, y=None, ...);
# check_regressors_train needs R² > 0.5 on 10-d data, hence the long length scale.
# RandomFourierKRR's are in test_random_features.py.
@parametrize_with_checks([
    SketchedKRR(),
    SketchedKRR(RBF(5.0), 1e-5, 10, random_state=0),
    SketchedKRR(RBF(5.0), 1e-5, 10, sketch="ros", random_state=0),
], expected_failed_checks=expected_failed_checks)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)

"""Input checks shared by the estimators: extreme magnitudes refused in one line by every estimator
that evaluates the kernel or a density (fuzz findings of issue 24, each once a NaN, an infinite
density or a LAPACK error)."""

import numpy as np
import pytest
from sklearn.gaussian_process.kernels import Matern

import spectral_leverage as sl
from spectral_leverage._validation import check_bandwidth_range, check_density_range, check_kernel_range
from spectral_leverage.density import BinnedDensity, KNNDensity, TreeDensity

REFUSAL = "too extreme for float64 kernel values: standardise X"


@pytest.mark.parametrize("scale, length, nu", [
    (1e160, 1.0, 1.5),     # r² overflows
    (1.0, 1e-160, 0.5),    # the same, by a tiny length scale
    (1e139, 389.0, 7.56),  # general ν: r^ν overflows, kernel values inf * 0 = NaN
    (1e-110, 39.7, 5.22),  # general ν: r^ν underflows, 0 * inf = NaN
])
def test_distances_beyond_float64_kernel_values_are_refused(scale, length, nu):
    X = np.random.default_rng(0).normal(size=(30, 3)) * scale
    with pytest.raises(ValueError, match=REFUSAL):
        check_kernel_range(X, length, nu)


@pytest.mark.parametrize("scale, length, nu", [
    (1e100, 1.0, 1.5), (1e-300, 1.0, 2.5), (1.0, 1.0, 0.05), (1.0, 1e-12, 7.5), (5.0, 1.0, 30.0),
])
def test_representable_kernel_values_pass(scale, length, nu):
    X = np.random.default_rng(0).normal(size=(30, 3)) * scale
    check_kernel_range(X, length, nu)
    lev = sl.exact_leverage(X, Matern(length, nu=nu), 1e-3)
    assert np.all(np.isfinite(lev)) and np.all((lev > 0) & (lev <= 1))


def test_identical_rows_pass():
    check_kernel_range(np.ones((5, 2)), 1.0, 3.3)


@pytest.mark.parametrize("fit", [
    lambda X, k: sl.exact_leverage(X, k, 1.0),
    *(lambda X, k, name=name: sl.make_sampler(name, kernel=k, reg=1.0, random_state=0).fit(X)
      for name in ("exact", "alaoui-mahoney", "recursive-rls", "squeak", "bless")),
    lambda X, k: sl.NystromKRR(k, 1.0, n_centers=10, sampler="uniform").fit(X, X[:, 0]),
    lambda X, k: sl.LeverageNystroem(k, reg=1.0, n_components=10, sampler="uniform").fit(X),
    lambda X, k: sl.SketchedKRR(k, 1.0, sketch_size=10).fit(X, X[:, 0]),
    lambda X, k: sl.sample_centers(X, 10, kernel=k, reg=1.0, method="uniform"),
], ids=["exact_leverage", "exact", "alaoui-mahoney", "recursive-rls", "squeak", "bless", "NystromKRR",
        "LeverageNystroem", "SketchedKRR", "sample_centers"])
def test_every_kernel_estimator_refuses_extreme_magnitudes_in_one_line(fit):
    X = np.random.default_rng(1).normal(size=(60, 2)) * 1e140
    with pytest.raises(ValueError, match=REFUSAL):
        fit(X, Matern(389.0, nu=7.5))


@pytest.mark.parametrize("estimator", [BinnedDensity(), TreeDensity(random_state=0), KNNDensity()],
                         ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("scale, d", [(1e-102, 6), (1e-75, 11), (1e-160, 1)])
def test_density_estimators_refuse_densities_beyond_float64(estimator, scale, d):
    # fuzz findings: infinite densities at these magnitudes
    X = np.random.default_rng(2).normal(size=(200, d)) * scale
    with pytest.raises(ValueError, match="too extreme for float64 densities: standardise X"):
        estimator.fit(X)


def test_density_range_passes_ordinary_and_constant_data():
    X = np.random.default_rng(3).normal(size=(100, 3)) * 1e-30
    X[:, 1] = 0.0
    check_density_range(X)
    assert np.all(np.isfinite(TreeDensity(random_state=0).fit(X[:, [0, 2]]).density(X[:, [0, 2]])))


REGRESSORS = [sl.NystromKRR(n_centers=10, random_state=0),
              sl.NystromKRRCV(regs=[1e-2], length_scales=[1.0], n_centers=10, random_state=0),
              sl.SketchedKRR(sketch_size=10, random_state=0),
              sl.RandomFourierKRR(n_features=10, random_state=0)]


@pytest.mark.parametrize("estimator", REGRESSORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("labels", [np.array(list("ab" * 20)), list("ab" * 20),
                                    np.array(list("ab" * 20), dtype=object)], ids=["str", "list", "object"])
def test_string_y_is_refused_by_every_regressor(estimator, labels):
    # finding 3: a UFuncTypeError once the centres were drawn
    X = np.random.default_rng(4).normal(size=(40, 2))
    with pytest.raises(ValueError, match=r"^y must hold numbers .* convert it to floats"):
        estimator.fit(X, labels)


@pytest.mark.parametrize("estimator", REGRESSORS, ids=lambda e: type(e).__name__)
def test_numbers_in_an_object_y_are_a_target(estimator):
    """An object y of numbers fits as its floats do: the same predictions to rounding, not bitwise,
    since y here is a strided column of X and its float copy is contiguous, and BLAS's rounding
    depends on the layout (on an AVX-512 machine NystromKRR's differed by 4e-14)."""
    X = np.random.default_rng(4).normal(size=(40, 2))
    y = X[:, 0]
    expected = estimator.fit(X, y).predict(X)
    np.testing.assert_allclose(estimator.fit(X, y.astype(object)).predict(X), expected, rtol=1e-12,
                               atol=1e-12)


def test_string_y_on_dask_is_refused_by_its_dtype():
    da = pytest.importorskip("dask.array")
    X = da.from_array(np.random.default_rng(4).normal(size=(40, 2)), chunks=20)
    with pytest.raises(ValueError, match=r"^y must hold numbers"):
        sl.NystromKRR(n_centers=10).fit(X, da.from_array(np.array(list("ab" * 20)), chunks=20))


@pytest.mark.parametrize("estimator", [BinnedDensity, TreeDensity], ids=lambda e: e.__name__)
@pytest.mark.parametrize("bandwidth", [1e-300, 1e-10, 1e150, 1e300])
def test_density_estimators_refuse_a_bandwidth_beyond_float64(estimator, bandwidth):
    # finding 5's density estimators: an OverflowError (binned grid) or NaN/inf densities (tree)
    X = np.random.default_rng(2).normal(size=(200, 2))
    with pytest.raises(ValueError, match=r"^bandwidth=.* too extreme for float64 densities of X"):
        estimator(bandwidth).fit(X)


def test_bandwidth_range_passes_bandwidths_float64_can_carry():
    for bandwidth in (1e-5, 1.0, 1e40):
        check_bandwidth_range(bandwidth, [-3.0, -3.0], [3.0, 3.0])
    with pytest.raises(ValueError, match="bandwidth=1e-09"):
        check_bandwidth_range(1e-9, [0.0], [10.0])

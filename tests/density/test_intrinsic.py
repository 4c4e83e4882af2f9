import warnings

import numpy as np
import pytest
import skdim
from conftest import load_csv

from spectral_leverage.density.intrinsic import intrinsic_dimension


def embed(Y: np.ndarray, seed: int, ambient: int = 8) -> np.ndarray:
    Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(ambient, Y.shape[1])))
    return Y @ Q.T


def cube_in_r8(n=6000, seed=0):
    return embed(np.random.default_rng(seed).uniform(size=(n, 3)), seed + 1)


def swiss_roll_in_r8(n=6000, seed=0):
    rng = np.random.default_rng(seed)
    t = 1.5 * np.pi * (1 + 2 * rng.uniform(size=n))
    return embed(np.column_stack([t * np.cos(t), 21 * rng.uniform(size=n), t * np.sin(t)]), seed + 2)


@pytest.mark.parametrize("make", [cube_in_r8, swiss_roll_in_r8], ids=["cube-3d", "swiss-roll-2d"])
def test_agrees_with_scikit_dimension_on_manifolds(make):
    X = make()
    ours = intrinsic_dimension(X)
    for reference in (skdim.id.MLE(), skdim.id.TwoNN()):
        assert ours == pytest.approx(reference.fit(X).dimension_, rel=0.10)


@pytest.mark.slow
def test_agrees_with_scikit_dimension_mle_on_casp():
    X = load_csv("casp.csv")
    X = X[np.random.default_rng(0).choice(X.shape[0], 6000, replace=False)]
    assert intrinsic_dimension(X) == pytest.approx(skdim.id.MLE().fit(np.unique(X, axis=0)).dimension_,
                                                   rel=0.10)


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_full_dimensional_uniform(d):
    # the MLE reads low near a boundary; within 10 % up to d = 4 at n = 4000
    X = np.random.default_rng(d).uniform(size=(4000, d))
    assert intrinsic_dimension(X) == pytest.approx(d, rel=0.10)


@pytest.mark.parametrize("n", [500, 1000, 2000])
def test_small_full_dimensional_samples_read_full(n):
    # neighbourhoods of at most n/40 points keep small samples' estimates at the level of large
    # ones (with 50-100 neighbours a uniform 3-D cube of 1000 points read 2.69, the bimodal 2.44);
    # SpectralLeverage calls data full-dimensional from 90 % of d
    from spectral_leverage.datasets import make_bimodal

    for seed in range(3):
        for X in (np.random.default_rng(seed).uniform(size=(n, 3)), make_bimodal(n, 3, random_state=seed)):
            assert intrinsic_dimension(X) >= 0.9 * 3


@pytest.mark.parametrize("d", [2, 5, 8])
def test_full_dimensional_gaussian(d):
    X = np.random.default_rng(d).normal(size=(16000, d))
    assert intrinsic_dimension(X) == pytest.approx(d, rel=0.05)


@pytest.mark.parametrize("d", [3, 5, 8])
def test_full_dimensional_neighbourhoods_are_not_flat(d):
    # the estimate reads low on full-dimensional data near faces (4.4 of 5 for the bimodal design,
    # 6.6 of 8 for a uniform cube), but the neighbourhoods keep a spread in every direction;
    # measured 0.96-1.37 at 500-16 000 points
    from spectral_leverage.datasets import make_bimodal

    for X in (make_bimodal(2000, d, random_state=d), np.random.default_rng(d).uniform(size=(2000, d)),
              np.random.default_rng(d).normal(size=(2000, d))):
        _, flatness = intrinsic_dimension(X, return_flatness=True)
        assert flatness > 0.8


def test_neighbourhoods_near_a_lower_dimensional_set_are_flat():
    noisy_cube = cube_in_r8(n=4000) + 0.01 * np.random.default_rng(7).normal(size=(4000, 8))
    for X, most in ((cube_in_r8(n=4000), 1e-6), (swiss_roll_in_r8(n=4000), 1e-6), (noisy_cube, 0.15)):
        estimate, flatness = intrinsic_dimension(X, return_flatness=True)
        assert flatness < most
        assert estimate == intrinsic_dimension(X)  # the estimate is the same with or without it


def test_flatness_needs_two_neighbours_per_feature():
    # 400 points have neighbourhoods of 10 (a 40th, at least 10): too few to see 8 directions
    X = np.random.default_rng(0).uniform(size=(400, 8))
    estimate, flatness = intrinsic_dimension(X, return_flatness=True)
    assert np.isnan(flatness) and estimate == intrinsic_dimension(X)
    assert np.isnan(intrinsic_dimension(np.ones((50, 4)), return_flatness=True)[1])
    _, small = intrinsic_dimension(X[:, :5], return_flatness=True)  # 10 neighbours see 5 directions
    assert small == intrinsic_dimension(X[:, :5], return_flatness=True)[1] > 0.8  # fixed reference


def test_duplicates_and_tiny_inputs():
    rng = np.random.default_rng(0)
    plane = embed(rng.uniform(size=(2000, 2)), 3)
    duplicated = np.repeat(plane, 5, axis=0)
    assert intrinsic_dimension(duplicated) == pytest.approx(intrinsic_dimension(plane), rel=1e-12)
    assert np.isfinite(intrinsic_dimension(rng.normal(size=(10, 3))))
    assert intrinsic_dimension(np.ones((50, 4))) == 4.0  # one distinct point: nothing to estimate
    assert 1.0 <= intrinsic_dimension(np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]])) <= 2.0


def test_clipped_to_ambient_dimension_and_seeded_subsample():
    X = np.random.default_rng(1).normal(size=(5000, 3))
    assert 1.0 <= intrinsic_dimension(X) <= 3.0
    a = intrinsic_dimension(X, max_samples=1000, random_state=4)
    assert a == intrinsic_dimension(X, max_samples=1000, random_state=4)


def test_query_subset_matches_every_point():
    # the average over 2048 evenly spread points equals the average over all 16384 to 1 %
    X = cube_in_r8(n=16384, seed=3)
    assert intrinsic_dimension(X) == pytest.approx(intrinsic_dimension(X, max_queries=None), rel=0.01)


def test_queries_spread_over_ordered_rows():
    # rows ordered by structure (a segment, then a cube): queries from the first rows alone would
    # read about 1; evenly spread ones match the average over every point
    rng = np.random.default_rng(4)
    segment = np.outer(rng.uniform(size=3000), np.ones(3)) + 5.0
    X = np.vstack([segment, rng.uniform(size=(3000, 3))])
    every = intrinsic_dimension(X, max_queries=None)
    assert 1.2 < every < 2.5  # a mixture of dimensions 1 and 3 (1.47 here)
    assert intrinsic_dimension(X, max_queries=300) == pytest.approx(every, rel=0.03)


def test_duplicates_removed_wherever_they_are():
    # a duplicate at a row no query lands on still goes before the estimate
    distinct = np.unique(cube_in_r8(n=3000, seed=5), axis=0)
    with_duplicate = np.vstack([distinct[:1], distinct[7:8], distinct[1:]])  # rows 1 and 8 alike
    assert intrinsic_dimension(with_duplicate, max_queries=50) == intrinsic_dimension(distinct,
                                                                                       max_queries=50)


@pytest.mark.parametrize("kwargs,match", [({"k_min": 1}, "k_min"), ({"k_min": 30, "k_max": 20}, "k_max"),
                                          ({"max_samples": 0}, "max_samples"),
                                          ({"max_queries": 0}, "max_queries")])
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        intrinsic_dimension(np.random.default_rng(0).normal(size=(100, 2)), **kwargs)


def test_bad_data():
    with pytest.raises(ValueError, match="NaN"):
        intrinsic_dimension(np.array([[np.nan, 1.0], [0.0, 1.0]]))


@pytest.mark.parametrize("scale", [1e-160, 1e-150, 1e150])
def test_nightly_finding_the_estimate_is_scale_free_at_extreme_magnitudes(scale):
    """Nightly property run (issue 38): 15 rows of magnitude 1e-150 in the kernel's units
    (length scale 1e9) had zero distances between distinct rows, and log(0) warned inside the
    estimate. It is now taken on the unit scale: the same at any magnitude, with no warning."""
    X = np.random.default_rng(0).uniform(size=(400, 3))
    expected = intrinsic_dimension(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert intrinsic_dimension(X * scale) == pytest.approx(expected, rel=1e-9)

"""SpectralLeverage on extreme input: right answers or one clear refusal, never an error from deep
inside (fuzz findings of issue 24)."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.gaussian_process.kernels import RBF, Matern

from spectral_leverage import SpectralLeverage


@pytest.mark.parametrize("scale, length", [(1e-140, 1.0), (1e140, 1.0), (1e140, 1e140), (1e-60, 1e60)])
def test_extreme_magnitudes_are_refused_in_one_clear_message(scale, length):
    X = np.random.default_rng(0).normal(size=(200, 3)) * scale
    with pytest.raises(ValueError, match="too extreme for float64 densities: standardise X"):
        SpectralLeverage(Matern(length, nu=1.5), 1e-3, algorithm="density").fit(X)


def test_a_spread_whose_squares_underflow_is_refused():
    # 1-D, spread 4e-154: within the volume bounds, but squared distances (the KD-tree, the intrinsic
    # dimension) underflow: a divide-by-zero in log before the refusal
    X = np.random.default_rng(0).normal(size=(62, 1)) * 4e-154
    with pytest.raises(ValueError, match="too extreme for float64 densities: standardise X"):
        SpectralLeverage(Matern(1.14e10, nu=2.5), 31.6).fit(X)


def test_a_length_scale_far_wider_than_the_data_warns():
    X = np.random.default_rng(1).uniform(size=(500, 2)) * 0.01
    with pytest.warns(UserWarning, match="length scale is .*x the data's standard deviation"):
        SpectralLeverage(Matern(1.0, nu=1.5), 1e-3, algorithm="density").fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SpectralLeverage(Matern(0.01, nu=1.5), 1e-3, algorithm="density").fit(X)


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 300), d=st.integers(1, 7), seed=st.integers(0, 2**31),
       log_scale=st.floats(-40, 40), log_length=st.floats(-12, 12), log_reg=st.floats(-12, 12),
       nu=st.sampled_from([0.5, 1.5, 2.5, np.inf]), duplicates=st.booleans(), constant=st.booleans())
def test_scores_are_finite_and_bounded_or_clearly_refused(n, d, seed, log_scale, log_length, log_reg,
                                                           nu, duplicates, constant):
    X = np.random.default_rng(seed).normal(size=(n, d)) * 10.0**log_scale
    if duplicates:
        X[: n // 2] = X[0]
    if constant:
        X[:, 0] = 1.0
    kernel = RBF(10.0**log_length) if nu == np.inf else Matern(10.0**log_length, nu=nu)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores = SpectralLeverage(kernel, 10.0**log_reg, random_state=0,
                                      algorithm="density").fit(X).scores_
    except ValueError as err:
        assert "too extreme for float64 densities" in str(err)
        return
    assert np.all(np.isfinite(scores)) and np.all(scores > 0) and np.all(scores <= n * (1 + 1e-9))


def test_features_on_very_different_scales_warn():
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.normal(size=1000), 1000 * rng.normal(size=1000)])
    with pytest.warns(UserWarning, match="differ by .*x, so the kernel sees mostly the widest"):
        SpectralLeverage(Matern(1.0, nu=1.5), 1e-3, algorithm="density").fit(X)


def test_most_points_isolated_warns_and_names_the_fix():
    # raw, unstandardised columns with a target: every point is alone at unit length scale
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(20, 7, 2000), rng.normal(50, 12, 2000), rng.normal(450, 17, 2000)])
    with pytest.warns(UserWarning, match="most points are isolated .* standardise X"):
        sl = SpectralLeverage(Matern(1.0, nu=1.5), 1e-3, algorithm="density").fit(X)
    assert np.allclose(sl.scores_, sl.scores_.max())  # the constant that said nothing, now flagged
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SpectralLeverage(Matern(1.0, nu=1.5), 1e-3, algorithm="density").fit(Z[:, :2])


@pytest.mark.parametrize("scale", [1e155, 1e160, 1e200, 1e300, np.finfo(float).max / 10, 1e-300])
def test_spectral_leverage_refuses_magnitudes_up_to_float_max(scale):
    # finding 4: beyond about 1e154 the features' standard deviations were NaN (their squares
    # overflowed), every range check let NaN through, and an IndexError came out of the draws
    X = np.random.default_rng(0).normal(size=(300, 2)) * scale
    with pytest.raises(ValueError, match="too extreme for float64 densities: standardise X"):
        SpectralLeverage().fit(X)


@pytest.mark.parametrize("bandwidth", [1e-300, 1e-40, 1e-10, 1e150, 1e300])
@pytest.mark.parametrize("kde", ["auto", "tree"])
def test_spectral_leverage_bandwidth_beyond_float64_is_refused(bandwidth, kde):
    # finding 5: 1e-300 raised an OverflowError laying out the grid, 1e300 "p must be ... > 0"
    X = np.random.default_rng(0).normal(size=(300, 2))
    with pytest.raises(ValueError, match=r"^bandwidth=.* is too extreme for float64 densities of X .*"
                                         r"pass a bandwidth near X's spread, or bandwidth='scott'\.$"):
        SpectralLeverage(bandwidth=bandwidth, kde=kde, intrinsic_dim=None).fit(X)


@pytest.mark.parametrize("bandwidth", [1e-5, 1e3, 1e40])
def test_spectral_leverage_bandwidth_far_from_the_spread_still_answers(bandwidth):
    X = np.random.default_rng(0).normal(size=(300, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = SpectralLeverage(bandwidth=bandwidth, random_state=0).fit(X).scores_
    assert np.all(np.isfinite(scores)) and np.all(scores > 0)

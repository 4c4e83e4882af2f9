"""The inputs of NystromKRRCV's search: its default grids and the standardised target."""

import numpy as np
import pytest
from krr_problems import smooth_data

from spectral_leverage.krr.cv_inputs import default_length_scales, default_regs, standardised_target


def test_default_grids():
    X, _ = smooth_data(3000, seed=6)
    regs = default_regs(3000)
    assert regs.size == 20 and regs[0] == 0.1 and regs[-1] == pytest.approx(1e-3 / 3000)
    scales = default_length_scales(X, np.random.default_rng(0))
    assert scales.size == 4 and 0.1 < scales[-1] < 1.0  # median distance in the unit square ≈ 0.5
    np.testing.assert_allclose(scales / scales[-1], [0.125, 0.25, 0.5, 1.0])


@pytest.mark.parametrize("unit", [1e-250, 1.0, 1e250])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_standardised_target_maps_back(unit, fit_intercept):
    """Y = s Z + c to rounding at any units; Z has weighted mean 0 (with an intercept) and weighted
    mean square 1, with s and c finite where y's own squares would under- or overflow."""
    rng = np.random.default_rng(1)
    Y = (3.0 + rng.normal(size=(50, 2))) * unit
    weights = rng.uniform(0.5, 2.0, size=50)
    Z, scale, offset = standardised_target(Y, weights, fit_intercept)
    assert np.isfinite(scale) and np.all(np.isfinite(offset))
    np.testing.assert_allclose(scale * Z + offset, Y, rtol=1e-12)
    assert np.average(np.mean(Z**2, axis=1), weights=weights) == pytest.approx(1.0)
    means = np.average(Z, axis=0, weights=weights)
    if fit_intercept:
        np.testing.assert_allclose(means, 0.0, atol=1e-12)
    else:
        assert np.all(np.asarray(offset) == 0) and np.all(means > 0.5)  # 3 / sqrt(10): not centred


def test_standardised_target_constant_and_zero():
    Z, scale, offset = standardised_target(np.full((4, 1), 7.0), None, True)
    np.testing.assert_array_equal(Z, 0.0)
    np.testing.assert_allclose(scale * Z + offset, 7.0)
    Z, scale, offset = standardised_target(np.zeros((4, 1)), None, True)
    assert scale == 1.0 and np.all(Z == 0) and np.all(np.asarray(offset) == 0)

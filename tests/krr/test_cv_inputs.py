"""The inputs of NystromKRRCV's search: its default grids."""

import numpy as np
import pytest
from krr_problems import smooth_data

from spectral_leverage.krr.cv_inputs import default_length_scales, default_regs


def test_default_grids():
    X, _ = smooth_data(3000, seed=6)
    regs = default_regs(3000)
    assert regs.size == 20 and regs[0] == 0.1 and regs[-1] == pytest.approx(1e-3 / 3000)
    scales = default_length_scales(X, np.random.default_rng(0))
    assert scales.size == 4 and 0.1 < scales[-1] < 1.0  # median distance in the unit square ≈ 0.5
    np.testing.assert_allclose(scales / scales[-1], [0.125, 0.25, 0.5, 1.0])

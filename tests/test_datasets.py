"""The built-in designs: what each promises about its rows, and the refusals of bad arguments."""

import numpy as np
import pytest

from spectral_leverage.datasets import make_embedded


def test_embedded_rows_lie_near_a_k_dimensional_cube():
    X = make_embedded(2000, 12, n_latent=4, noise=1e-3, random_state=1)
    centred = X - X.mean(axis=0)
    singular = np.linalg.svd(centred, compute_uv=False)
    # four directions of the unit cube (standard deviation 1/sqrt(12) each), the rest noise
    assert np.all(singular[:4] / np.sqrt(len(X)) > 0.25)
    assert np.all(singular[4:] / np.sqrt(len(X)) < 2e-3)
    # the basis is orthonormal: the total variance is the cube's, 4/12, plus the noise's 12e-6
    assert np.sum(X.var(axis=0)) == pytest.approx(4 / 12 + 12e-6, rel=0.05)


def test_embedded_is_deterministic():
    np.testing.assert_array_equal(make_embedded(50, 5, random_state=3), make_embedded(50, 5, random_state=3))
    assert not np.array_equal(make_embedded(50, 5, random_state=3), make_embedded(50, 5, random_state=4))


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"n_latent": 6}, "n_latent=6 exceeds n_features=5"),
    ({"n_latent": 0}, "n_latent"),
    ({"noise": 0.0}, "noise"),
    ({"noise": np.nan}, "noise"),
])
def test_embedded_refuses_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_embedded(10, 5, **kwargs)


def test_embedded_refuses_a_float_row_count():
    with pytest.raises(TypeError, match="n_samples"):
        make_embedded(10.5, 5)

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from spectral_leverage.density._row_keys import row_keys


@settings(max_examples=50, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 30), st.integers(1, 6)),
              elements=st.sampled_from([-1.5, -0.0, 0.0, 2.0, 1e-300])))
def test_equal_keys_are_exactly_the_equal_rows(W):
    """Two rows have the same key if and only if they are equal as numbers (-0.0 == 0.0): the
    duplicate check of the intrinsic dimension and the tree KDE's anchor matching rest on it."""
    keys = row_keys(W)
    same = keys[:, None] == keys[None, :]
    equal = np.all(W[:, None, :] == W[None, :, :], axis=2)
    np.testing.assert_array_equal(same, equal)

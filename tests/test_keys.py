"""Subsamples by one key a row: the keys drawn in chunks are the keys drawn at once."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from spectral_leverage import _keys
from spectral_leverage._keys import smallest_drawn, smallest_keys


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 400), st.integers(1, 400), st.integers(1, 64), st.integers(0, 2**32 - 1))
def test_keys_drawn_in_chunks_are_the_keys_drawn_at_once(n, size, chunk, seed):
    """Keys drawn ``KEY_CHUNK`` at a time, the smallest kept between chunks (memory bounded at 10^8
    rows), give the rows and keys of one draw of n keys, and leave the stream where it would be."""
    keys = np.random.default_rng(seed).random(n)
    stream = np.random.default_rng(seed)
    original = _keys.KEY_CHUNK
    _keys.KEY_CHUNK = chunk
    try:
        rows, kept = smallest_drawn(stream, n, size)
    finally:
        _keys.KEY_CHUNK = original
    expected = smallest_keys(keys, size)
    np.testing.assert_array_equal(rows, expected)
    np.testing.assert_array_equal(kept, keys[expected])
    after = np.random.default_rng(seed)
    after.random(n)
    assert stream.random() == after.random()


def test_smallest_keys_are_sorted_positions():
    keys = np.array([0.5, 0.1, 0.9, 0.3])
    np.testing.assert_array_equal(smallest_keys(keys, 2), [1, 3])
    np.testing.assert_array_equal(smallest_keys(keys, 9), [0, 1, 2, 3])

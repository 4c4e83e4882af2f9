"""The neighbour search's helpers: candidate lists merged across chunks, blocks of whole groups."""

import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from spectral_leverage._blocks import row_chunks
from spectral_leverage.backends._neighbours import whole_groups


@given(st.lists(st.integers(1, 6), min_size=1, max_size=30), st.integers(1, 12))
def test_whole_groups_cover_the_rows_once_and_never_split_a_label(sizes, step):
    labels = np.repeat(np.arange(len(sizes)), sizes)
    slices = list(whole_groups(labels, row_chunks(len(labels), 1.0, float(step))))
    assert slices[0].start == 0 and slices[-1].stop == len(labels)
    for before, after in itertools.pairwise(slices):
        assert before.stop == after.start and labels[before.stop - 1] != labels[after.start]
    # none longer than a step and the rest of the label it ends in
    assert all(part.stop - part.start <= step + max(sizes) - 1 for part in slices)

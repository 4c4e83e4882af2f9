"""The neighbour search: the exact and approximate indexes and the choice between them, blocks of
whole groups."""

import itertools
import logging

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spectral_leverage._blocks import limit_threads, on_all_cores, row_chunks
from spectral_leverage.backends import _neighbours
from spectral_leverage.backends._neighbours import NeighbourIndex, resolve_search, whole_groups
from spectral_leverage.metrics import neighbour_recall


@given(st.lists(st.integers(1, 6), min_size=1, max_size=30), st.integers(1, 12))
def test_whole_groups_cover_the_rows_once_and_never_split_a_label(sizes, step):
    labels = np.repeat(np.arange(len(sizes)), sizes)
    slices = list(whole_groups(labels, row_chunks(len(labels), 1.0, float(step))))
    assert slices[0].start == 0 and slices[-1].stop == len(labels)
    for before, after in itertools.pairwise(slices):
        assert before.stop == after.start and labels[before.stop - 1] != labels[after.start]
    # none longer than a step and the rest of the label it ends in
    assert all(part.stop - part.start <= step + max(sizes) - 1 for part in slices)


def _exact(Z, Q, k):
    return NeighbourIndex(Z, approximate=False).query(Q, k)


def test_exact_index_is_the_k_d_tree():
    Z = np.random.default_rng(0).standard_normal((500, 3))
    found = _exact(Z, Z[:50], 7)
    distances = np.linalg.norm(Z[:50, None] - Z[None], axis=2)
    assert found.dtype == np.intp and found.shape == (50, 7)
    np.testing.assert_array_equal(found, np.argsort(distances, axis=1, kind="stable")[:, :7])


@pytest.mark.parametrize(("probes", "low", "high"), [(48, 0.999, 1.0), (8, 0.8, 0.95)])
def test_approximate_neighbours_recall_most_of_the_exact_ones(monkeypatch, probes, low, high):
    # 8-D standard normal rows, 33 neighbours, as in the near field past approximate_from(8). With
    # the default 48 of 156 lists a query the search is nearly exhaustive at this n; with 8 it is
    # truly approximate (at 10^6 rows the default's recall is 0.988: docs/performance.md)
    pytest.importorskip("faiss")
    monkeypatch.setattr(_neighbours, "PROBES", probes)
    Z = np.random.default_rng(0).standard_normal((20_000, 8))
    index = NeighbourIndex(Z, approximate=True, rng=np.random.default_rng(1))
    found, exact = index.query(Z[:2000], 33), _exact(Z, Z[:2000], 33)
    assert low <= neighbour_recall(found, exact) <= high
    distance = np.linalg.norm(Z[found] - Z[:2000, None], axis=2)
    assert np.all(np.diff(distance, axis=1) >= -1e-6)  # nearest first (float32 distances)
    # each row finds itself first, unless the graph over the centres missed the row's own list
    # among the few it probes (then the near field puts it first itself: self_first)
    assert np.mean(distance[:, 0] == 0) >= (1.0 if probes == 48 else 0.98)


def test_an_offset_common_to_all_rows_costs_no_recall_and_a_spread_past_float32_takes_the_tree():
    pytest.importorskip("faiss")
    Z = np.random.default_rng(0).standard_normal((20_000, 8))
    exact = _exact(Z, Z[:2000], 33)
    shifted = NeighbourIndex(Z + 1e6, approximate=True, rng=np.random.default_rng(1))
    assert neighbour_recall(shifted.query(Z[:2000] + 1e6, 33), exact) > 0.999  # 0.95 without centring
    wide = Z * 1e40
    with pytest.warns(RuntimeWarning, match="exact neighbours instead"):
        index = NeighbourIndex(wide, approximate=True, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(index.query(wide[:50], 7), _exact(wide, wide[:50], 7))


def test_approximate_neighbours_depend_on_the_random_state_only(monkeypatch):
    # built and queried in the package's worker threads, on one and on two of them
    pytest.importorskip("faiss")
    monkeypatch.setattr(_neighbours, "PROBES", 2)  # 2 lists of about 46 rows a query: many misses
    Z = np.random.default_rng(0).standard_normal((6000, 8))

    def found(seed, threads):
        out = np.empty((len(Z), 17), dtype=np.intp)
        with limit_threads(threads):
            index = NeighbourIndex(Z, approximate=True, rng=np.random.default_rng(seed))

            def fill(rows):
                out[rows] = index.query(Z[rows], 17)

            on_all_cores(fill, [slice(start, start + 500) for start in range(0, len(Z), 500)])
        return out

    np.testing.assert_array_equal(found(1, 1), found(1, 2))
    assert not np.array_equal(found(1, 1), found(2, 1))  # other centres, other misses


def test_rows_whose_lists_hold_too_few_take_the_exact_tree(monkeypatch):
    # one list a query, of about 16 rows, for 40 neighbours: every query comes up short
    pytest.importorskip("faiss")
    monkeypatch.setattr(_neighbours, "LIST_ROWS", 16)
    monkeypatch.setattr(_neighbours, "PROBES", 1)
    Z = np.random.default_rng(0).standard_normal((800, 4))
    found = NeighbourIndex(Z, approximate=True, rng=np.random.default_rng(0)).query(Z, 40)
    np.testing.assert_array_equal(found, _exact(Z, Z, 40))
    with pytest.raises(ValueError, match="need rng"):
        NeighbourIndex(Z, approximate=True)


def test_resolve_search_by_size_dimension_and_whether_faiss_is_installed(monkeypatch, caplog):
    big, wide = 150_000, 7  # measured: the tree and the lists cost about the same there
    assert not resolve_search("exact", 10**7, 16)
    assert not resolve_search("auto", big - 1, wide) and not resolve_search("auto", 6 * big - 1, wide - 1)
    assert not resolve_search("auto", big // 6 - 1, wide + 1)
    with pytest.raises(ValueError, match="neighbor_search must be one of"):
        resolve_search("kd_tree", 10, 2)
    monkeypatch.setattr(_neighbours, "faiss_module", lambda: object())
    assert resolve_search("auto", big, wide) and resolve_search("auto", big // 6, wide + 1)
    assert resolve_search("auto", 6 * big, wide - 1) and resolve_search("approximate", 10, 2)
    monkeypatch.setattr(_neighbours, "faiss_module", lambda: None)
    with caplog.at_level(logging.INFO, logger=_neighbours.__name__):
        assert not resolve_search("auto", big, wide)
    assert "spectral-leverage[ann]" in caplog.text
    with pytest.raises(ImportError, match=r"spectral-leverage\[ann\].*neighbor_search='exact'"):
        resolve_search("approximate", 10, 2)

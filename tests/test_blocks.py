"""The package's own thread fan-out (on_all_cores, kernel_block) and its context-local limit; the
column summary."""

import contextvars
import itertools
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.gaussian_process.kernels import RBF

from spectral_leverage import _blocks
from spectral_leverage._blocks import (
    _THREAD_LIMIT,
    N_THREADS,
    blas_at_most,
    column_summary,
    kernel_block,
    limit_threads,
    max_threads,
    on_all_cores,
    openmp_at_most,
)

CORES = 4  # the machine the fan-out tests pretend to run on: threads need not have a core each
TIMEOUT = 10.0  # seconds a barrier waits for threads that must run at the same time


def _on_cores(test):
    """``test()`` as on a machine with CORES cores: in a fresh context whose default limit is CORES."""
    def run():
        _THREAD_LIMIT.set(CORES)
        return test()
    return contextvars.copy_context().run(run)


def _threads_used(n_parts: int, parties: int = 0, timeout: float = TIMEOUT) -> set:
    """The threads on_all_cores ran ``fill`` on for ``n_parts`` parts; with ``parties``, each part
    waits until that many run at the same time (BrokenBarrierError after ``timeout`` seconds)."""
    barrier = threading.Barrier(parties) if parties else None
    seen = set()

    def fill(_) -> None:
        seen.add(threading.get_ident())
        if barrier is not None:
            barrier.wait(timeout)

    on_all_cores(fill, range(n_parts))
    return seen


def _blas_counts() -> list[int]:
    return [lib.num_threads for lib in _blocks._blas_libraries()]


def test_blas_at_most_nests_never_raises_and_restores():
    before = _blas_counts()
    with blas_at_most(1):
        assert _blas_counts() == [1] * len(before)
        with blas_at_most(10**6):  # an inner block never raises an outer one
            assert _blas_counts() == [1] * len(before)
        assert _blas_counts() == [1] * len(before)
    with blas_at_most(10**6):  # nor the count from before
        assert _blas_counts() == before
    assert _blas_counts() == before


def _more_than_one_blas_thread() -> list[int]:
    """The counts now, or a skip where BLAS starts on one thread: a limit to 1 is then invisible."""
    before = _blas_counts()
    if max(before, default=1) < 2:
        pytest.skip("BLAS runs on one thread here: a limit to one thread cannot be seen")
    return before


def test_blas_blocks_open_in_two_threads_at_once_restore_the_count():
    # the count is process-wide (OpenBLAS): A opens, B opens, A closes, B closes; saving and
    # restoring per block left BLAS on one thread here (B restored the 1 it found)
    before = _more_than_one_blas_thread()
    a_open, b_open, a_closed = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with blas_at_most(1):
            a_open.set()
            b_open.wait(TIMEOUT)
        a_closed.set()

    def second():
        a_open.wait(TIMEOUT)
        with blas_at_most(1):
            b_open.set()
            a_closed.wait(TIMEOUT)
            seen["B after A closed"] = _blas_counts()

    _in_threads(first, second)
    assert seen == {"B after A closed": [1] * len(before)}  # still limited for B
    assert _blas_counts() == before


def test_a_block_in_another_thread_limits_blas_after_the_main_thread_opened_one():
    """threadpoolctl lets one thread at a time set OpenBLAS's process-wide count: the main thread's
    block, once closed, must not keep that right from a block in a worker thread (a Dask task)."""
    before = _more_than_one_blas_thread()
    with blas_at_most(1):
        pass
    seen = {}

    def worker():
        with blas_at_most(1):
            seen["inside"] = _blas_counts()
        seen["after"] = _blas_counts()

    _in_threads(worker)
    assert seen == {"inside": [1] * len(before), "after": before}


def _in_threads(*targets) -> None:
    threads = [threading.Thread(target=target) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert not any(thread.is_alive() for thread in threads)


def test_limit_is_set_nested_and_restored():
    assert max_threads() == 1  # joblib's default outside a parallel_config context
    with limit_threads(1):
        assert max_threads() == 1
        with limit_threads(N_THREADS + 5):  # an inner limit never raises an outer one
            assert max_threads() == 1
        assert max_threads() == 1
    assert max_threads() == 1
    with pytest.raises(RuntimeError), limit_threads(1):
        raise RuntimeError
    assert _THREAD_LIMIT.get() is None
    with limit_threads(N_THREADS + 5):
        assert max_threads() == N_THREADS
    with pytest.raises(ValueError, match="n must be >= 1"), limit_threads(0):
        pass


def test_on_all_cores_uses_every_core_without_a_limit():
    # CORES parts meet at a barrier of CORES parties only if they all run at the same time
    assert len(_on_cores(lambda: _threads_used(CORES, parties=CORES))) == CORES
    assert len(_on_cores(lambda: _threads_used(2, parties=2))) == 2  # no more threads than parts


def test_on_all_cores_runs_in_the_calling_thread_under_limit_one():
    order = []
    with limit_threads(1):
        on_all_cores(lambda part: order.append((part, threading.get_ident())), range(6))
    assert order == [(part, threading.get_ident()) for part in range(6)]


def test_on_all_cores_caps_the_threads_at_the_limit():
    def capped():
        with limit_threads(CORES - 1):
            assert len(_threads_used(2 * (CORES - 1), parties=CORES - 1)) == CORES - 1  # reached
            with pytest.raises(threading.BrokenBarrierError):  # but not passed
                _threads_used(CORES, parties=CORES, timeout=0.5)

    _on_cores(capped)


def test_nested_fan_out_runs_serially():
    inner = {}

    def fill(part) -> None:
        inner[part] = _threads_used(4)

    _on_cores(lambda: on_all_cores(fill, range(CORES)))
    assert all(len(seen) == 1 for seen in inner.values())  # each in its own pool thread
    assert len(set().union(*inner.values())) <= CORES


def test_limit_is_local_to_the_thread_that_sets_it():
    inside, outside = threading.Event(), threading.Event()
    seen = {}

    def limited() -> None:
        with limit_threads(1):
            seen["limited"] = max_threads()
            inside.set()
            outside.wait(TIMEOUT)

    def caller() -> None:
        thread = threading.Thread(target=limited)
        thread.start()
        assert inside.wait(TIMEOUT)
        seen["caller"] = max_threads()  # while the other thread holds its limit
        outside.set()
        thread.join(TIMEOUT)
        with limit_threads(2):  # and a limit here does not reach a thread started here
            thread = threading.Thread(target=lambda: seen.setdefault("started", max_threads()))
            thread.start()
            thread.join(TIMEOUT)

    _on_cores(caller)
    assert seen == {"limited": 1, "caller": CORES, "started": 1}  # 1: joblib's default


class _RecordingKernel:
    """An RBF kernel that records the threads it is called on (each call waits at ``barrier``)."""

    def __init__(self, barrier: threading.Barrier | None = None):
        self.kernel, self.barrier, self.threads = RBF(0.7), barrier, []

    def __call__(self, X, Z):
        self.threads.append(threading.get_ident())
        if self.barrier is not None:
            self.barrier.wait(TIMEOUT)
        return self.kernel(X, Z)


@pytest.fixture(scope="module")
def points():
    rng = np.random.default_rng(0)
    X, Z = rng.normal(size=(2048, 3)), rng.normal(size=(256, 3))  # 2^19 entries: threaded
    return X, Z, RBF(0.7)(X, Z)


@pytest.mark.parametrize("limit", [CORES, 2])
def test_kernel_block_splits_rows_over_the_allowed_threads(points, limit):
    X, Z, expected = points
    kernel = _RecordingKernel(threading.Barrier(limit))

    def run():
        with limit_threads(limit):
            return kernel_block(kernel, X, Z)

    np.testing.assert_array_equal(_on_cores(run), expected)
    assert len(set(kernel.threads)) == len(kernel.threads) == limit


def test_kernel_block_under_limit_one_is_one_call_in_the_calling_thread(points):
    X, Z, expected = points
    kernel = _RecordingKernel()
    with limit_threads(1):
        np.testing.assert_array_equal(kernel_block(kernel, X, Z), expected)
    assert kernel.threads == [threading.get_ident()]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 70), d=st.integers(1, 4), block=st.integers(1, 9),
       offset=st.sampled_from([0.0, 1e6]), seed=st.integers(0, 2**16), fortran=st.booleans())
def test_column_summary_matches_numpy(n, d, block, offset, seed, fortran):
    X = offset + np.random.default_rng(seed).normal(size=(n, d))
    X = np.asfortranarray(X) if fortran else X
    with pytest.MonkeyPatch.context() as patch:
        # blocks of a few rows, so that the pairwise update combines many of them, some of one row
        patch.setattr(_blocks, "_SUMMARY_ROWS", block)
        low, high, std = column_summary(X)
    np.testing.assert_array_equal(low, X.min(axis=0))
    np.testing.assert_array_equal(high, X.max(axis=0))
    # a large offset costs NumPy's own two-pass std about eps·offset (2e-10); the update must do
    # as well
    np.testing.assert_allclose(std, X.std(axis=0), rtol=1e-12, atol=1e-9)


def test_column_summary_leaves_its_input_alone():
    X = np.random.default_rng(0).normal(size=(100, 3))
    before = X.copy()
    column_summary(X)
    np.testing.assert_array_equal(X, before)


def test_row_chunks_cover_the_rows_in_blocks_no_larger_than_the_cap():
    from spectral_leverage._blocks import MAX_BLOCK_BYTES, row_chunks

    n, per_row = 200_000, 1024.0
    capped = MAX_BLOCK_BYTES // 1024
    for budget, step in [(2**20, 1024), (MAX_BLOCK_BYTES, capped), (2**30, capped)]:
        chunks = list(row_chunks(n, per_row, budget))
        assert [c.stop - c.start for c in chunks[:-1]] == [step] * (len(chunks) - 1)
        assert chunks[0].start == 0 and chunks[-1].stop == n
        assert all(a.stop == b.start for a, b in itertools.pairwise(chunks))
    assert [c.stop - c.start for c in row_chunks(3, 1e12, 2**30)] == [1, 1, 1]  # at least one row


@pytest.mark.parametrize("scale", [1e160, 1e300, 1e-200, 1e-300])
def test_column_summary_standard_deviation_of_extreme_magnitudes(scale):
    # finding 4: the squares overflowed beyond about 1e154 (a NaN deviation, which range checks let
    # through) and underflowed below 1e-154; each column is now scaled by a power of two first
    X = np.random.default_rng(0).normal(size=(500, 3)) * [1.0, 1e-3, 1e3]
    low, high, std = column_summary(X * scale)
    np.testing.assert_allclose(std, X.std(axis=0) * scale, rtol=1e-12)
    np.testing.assert_array_equal(low, (X * scale).min(axis=0))
    np.testing.assert_array_equal(high, (X * scale).max(axis=0))


def _openmp_counts() -> list[int]:
    return [lib.get_num_threads() for lib in _blocks._openmp_libraries()]


def _openmp_above_one() -> list[int]:
    """The OpenMP counts, skipping the test where there is nothing to limit (no OpenMP runtime, as
    in pykdtree's builds without it, or OMP_NUM_THREADS=1)."""
    counts = _openmp_counts()
    if not counts or max(counts) < 2:
        pytest.skip("no OpenMP runtime above one thread to limit")
    return counts


def test_openmp_is_one_thread_inside_every_worker_and_restored_after():
    # pykdtree's queries run OpenMP loops inside the workers: each must hold its own runtime to one
    # thread (libgomp counts per thread), or n workers start n x cores threads
    before = _openmp_above_one()
    seen = []
    _on_cores(lambda: on_all_cores(lambda _: seen.append(_openmp_counts()), range(2 * CORES)))
    with limit_threads(1):  # in the calling thread
        on_all_cores(lambda _: seen.append(_openmp_counts()), range(3))
    assert len(seen) == 2 * CORES + 3 and all(counts == [1] * len(before) for counts in seen)
    assert _openmp_counts() == before


def test_openmp_at_most_lowers_never_raises_and_restores():
    before = _openmp_above_one()
    with openmp_at_most(1):
        assert _openmp_counts() == [1] * len(before)
        with openmp_at_most(10**6):
            assert _openmp_counts() == [1] * len(before)
    assert _openmp_counts() == before

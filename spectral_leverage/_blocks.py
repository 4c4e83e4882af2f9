"""Row blocks sized by a memory budget: how every n×m kernel product is computed.

No n×m matrix is ever held whole (except in the explicitly exact methods): rows are processed in
blocks of at most ``memory_budget / bytes_per_row`` rows.

The package's own threads (:func:`on_all_cores`, :func:`kernel_block`) number at most
:func:`max_threads`, resolved as joblib resolves ``n_jobs``: an estimator's ``n_jobs``
(:func:`use_n_jobs`), else ``joblib.effective_n_jobs(None)``, which is 1 unless inside a
``joblib.parallel_config(n_jobs=...)`` context; never more than the cores, fewer inside
:func:`limit_threads` (the Dask worker tasks run under :func:`in_task`, which holds them to one
thread, as Dask already runs one task per worker thread, and shows no progress bars from inside
them). While the blocks run, threaded or not, BLAS is held to one thread (threadpoolctl), so
that n threads use n cores rather than n times BLAS's own: the blocks' products have the data's
d as inner dimension, where BLAS's threads buy little and, on a busy machine, cost several times
over. Between the blocks (factorisations, products with the m×m factors) an estimator's method
holds BLAS to its ``n_jobs`` threads (:func:`use_n_jobs`, :func:`blas_at_most`): one with the
default, so a fit beside other work does not wait on a BLAS thread the machine has no core for.
For OpenBLAS the limit is process-wide, not per thread (seen with ``threadpool_info`` from
another thread), so the calling thread sets it once around the blocks, as scikit-learn does around
its OpenMP loops. OpenMP's count (the k-d tree queries of pykdtree, faiss's) is per thread instead,
so it is held inside each worker thread (:func:`openmp_at_most`), and to ``n_jobs`` in the
calling one.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache, wraps

import numpy as np
from joblib import effective_n_jobs
from threadpoolctl import ThreadpoolController
from tqdm.auto import tqdm

__all__ = ["DEFAULT_MEMORY_BUDGET", "KERNEL_BYTES_PER_ENTRY", "blas_at_most", "column_summary", "in_task",
           "kernel_block", "kernel_product", "limit_threads", "max_threads", "on_all_cores", "openmp_at_most",
           "progress", "rescan_openmp", "row_chunks", "use_n_jobs"]

DEFAULT_MEMORY_BUDGET = 2**30  # bytes for temporaries: scikit-learn's default working_memory (1024 MiB)
MAX_BLOCK_BYTES = 2**26  # one block's temporaries at most, whatever the budget
KERNEL_BYTES_PER_ENTRY = 8.0 * 5  # a float64 kernel block plus the kernel's own temporaries
N_THREADS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
_MIN_THREADED_ENTRIES = 2**18  # below this, starting threads costs more than it saves
_SUMMARY_ROWS = 2**15  # rows per transposed block in column_summary (d × 256 KiB)


def row_chunks(n_rows: int, bytes_per_row: float, memory_budget: float):
    """Yield slices of at most ``min(memory_budget, MAX_BLOCK_BYTES) / bytes_per_row`` rows (at least
    1) covering n_rows: a larger budget allows more blocks at once, not larger ones, which only add
    page faults (BLAS runs at full speed on far smaller blocks)."""
    step = max(1, int(min(memory_budget, MAX_BLOCK_BYTES) // max(bytes_per_row, 1.0)))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


def column_summary(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(minimum, maximum, standard deviation) of each column of X, shape (n, d) with n >= 1.

    The same as ``X.min(axis=0)``, ``X.max(axis=0)`` and ``X.std(axis=0)`` to rounding, in one pass
    and an order of magnitude faster for a few columns: NumPy reduces a C-ordered array along its
    rows a few elements at a time, so blocks of rows are transposed first. The blocks' means and sums
    of squared deviations are combined by the pairwise update of Chan, Golub & LeVeque (1983).

    Examples
    --------
    >>> X = np.arange(12.0).reshape(6, 2)
    >>> low, high, std = column_summary(X)
    >>> low.tolist(), high.tolist(), bool(np.allclose(std, X.std(axis=0)))
    ([0.0, 1.0], [10.0, 11.0], True)
    """
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):  # redone below if so
        low, high, std = _column_moments(X, None)
    magnitude = np.maximum(np.abs(low), np.abs(high))
    if np.any((magnitude > _SAFE_MAGNITUDE) | ((magnitude > 0) & (magnitude < 1 / _SAFE_MAGNITUDE))):
        # again, each column divided by a power of two near its largest magnitude (exact), so that
        # the squares neither overflow (beyond about 1e154 the deviation was NaN, which every range
        # check let through) nor underflow; the deviation is scaled back exactly
        unit = np.ldexp(1.0, np.frexp(magnitude)[1])
        unit[unit == 0] = 1.0
        std = _column_moments(X, unit)[2] * unit
    return low, high, std


#: column magnitudes within 2^±500 keep every square of column_summary in float64's normal range
_SAFE_MAGNITUDE = 2.0**500


def _column_moments(X: np.ndarray, unit: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`column_summary`'s pass, on the columns divided by ``unit`` (None: as they are)."""
    d = X.shape[1]
    low, high = np.full(d, np.inf), np.full(d, -np.inf)
    mean, squares, count = np.zeros(d), np.zeros(d), 0
    for rows in row_chunks(X.shape[0], 1.0, _SUMMARY_ROWS):
        block = np.array(X[rows].T, order="C", dtype=float)
        if unit is not None:
            block /= unit[:, None]
        size = block.shape[1]
        np.minimum(low, block.min(axis=1), out=low)
        np.maximum(high, block.max(axis=1), out=high)
        block_mean = block.mean(axis=1)
        block -= block_mean[:, None]
        delta, total = block_mean - mean, count + size
        mean += delta * (size / total)
        squares += np.einsum("ij,ij->i", block, block) + delta**2 * (count * size / total)
        count = total
    return low, high, np.sqrt(squares / count)


# context-local, so a limit set in one thread (one Dask task, say) leaves the others alone; a new
# thread starts without a limit (None: joblib's default)
_THREAD_LIMIT: ContextVar[int | None] = ContextVar("spectral_leverage_thread_limit", default=None)


# context-local like the thread limit: True inside one task of a task scheduler (in_task)
_IN_TASK: ContextVar[bool] = ContextVar("spectral_leverage_in_task", default=False)


@contextmanager
def in_task() -> Iterator[None]:
    """Context manager for the body of one task of a task scheduler (the Dask backend runs each of
    its tasks under it): :func:`limit_threads` (1), since the scheduler already runs one task per
    worker thread, and no progress bars (:func:`progress`), since bars printed by concurrent tasks
    interleave on the workers' output; the scheduler's own progress (``dask.diagnostics.ProgressBar``,
    ``distributed.progress``, the dashboard) follows the tasks instead.

    Examples
    --------
    >>> with in_task():
    ...     progress(range(3), verbose=True).disable
    True
    """
    token = _IN_TASK.set(True)
    try:
        with limit_threads(1):
            yield
    finally:
        _IN_TASK.reset(token)


def progress(iterable=None, *, verbose: bool, **kwargs) -> tqdm:
    """``tqdm(iterable, **kwargs)``, shown when ``verbose`` and not inside :func:`in_task`."""
    return tqdm(iterable, disable=not verbose or _IN_TASK.get(), **kwargs)


def max_threads() -> int:
    """Threads :func:`on_all_cores` and :func:`kernel_block` may use here and now.

    Returns
    -------
    int
        The innermost :func:`limit_threads` (or :func:`use_n_jobs`), else
        ``joblib.effective_n_jobs(None)`` (1 outside a ``joblib.parallel_config`` context), at
        most the number of cores available to the process.
    """
    limit = _THREAD_LIMIT.get()
    return min(N_THREADS, effective_n_jobs(None)) if limit is None else limit


@contextmanager
def limit_threads(n: int) -> Iterator[None]:
    """Context manager: at most ``n`` threads for the package's own fan-out inside the block.

    The limit holds in the current context only: the calling thread (or asyncio task), and work run
    in a copy of its context (as Dask's threaded scheduler runs its tasks), not other threads.
    Limits nest: an inner limit never raises an outer one, and none exceeds the cores. It replaces
    joblib's default (1 thread) where no limit is set.

    Parameters
    ----------
    n : int
        Maximum number of threads, >= 1; 1 runs every call serially in the calling thread.

    Yields
    ------
    None

    Raises
    ------
    ValueError
        If ``n`` is less than 1.

    Examples
    --------
    >>> with limit_threads(1):
    ...     max_threads()
    1
    >>> with limit_threads(10**6):
    ...     max_threads() == N_THREADS
    True
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}.")
    outer = _THREAD_LIMIT.get()
    token = _THREAD_LIMIT.set(min(int(n), N_THREADS if outer is None else outer))
    try:
        yield
    finally:
        _THREAD_LIMIT.reset(token)


def use_n_jobs(method):
    """Decorator: run an estimator's ``method`` with the threads its ``n_jobs`` asks for, BLAS's
    included, and the OpenMP loops of pykdtree's and faiss's queries (:func:`openmp_at_most`).

    ``n_jobs`` has joblib's meaning (``joblib.effective_n_jobs``: -1 is every core, None is 1
    unless inside a ``joblib.parallel_config`` context); None inside another fit keeps that fit's
    limit, so a density estimate made by ``SpectralLeverage(n_jobs=2)`` uses its two threads.
    BLAS is held to the same number of threads for the whole method (:func:`blas_at_most`), the
    serial factorisations and products between the row blocks included: with ``n_jobs=None`` a
    fit uses one core, as joblib's None means.
    """
    @wraps(method)
    def run(self, *args, **kwargs):
        if self.n_jobs is None and _THREAD_LIMIT.get() is not None:
            return method(self, *args, **kwargs)
        with limit_threads(effective_n_jobs(self.n_jobs)), blas_at_most(max_threads()), \
                openmp_at_most(max_threads()):
            return method(self, *args, **kwargs)
    return run


@contextmanager
def blas_at_most(n: int) -> Iterator[None]:
    """Context manager: BLAS held to at most ``n`` threads inside the block, never raised above
    the count it had when the first such block began (a ``threadpool_limits`` set by the caller
    stays in force); restored when the last one ends.

    Multi-threaded BLAS gains a little on an idle machine and loses much more beside other work:
    at n = 10⁵ on two cores, the 3-D scores with BLAS's two threads outside the row blocks took
    0.75x the one-thread time when idle but 1.44x beside one busy process (docs/performance.md,
    "Threads and BLAS"); ``n_jobs`` is the one switch for both.

    For OpenBLAS the count is process-wide, so blocks open in several threads at once (Dask's
    threaded scheduler runs tasks side by side) share it: the count in force is the smallest ``n``
    of the open blocks, and the count from before comes back when the last closes. Saving and
    restoring per block instead leaks a limit: A saves 2 and sets 1, B saves 1, A restores 2,
    B restores 1, and BLAS stays on one thread after both.

    Parameters
    ----------
    n : int
        Most BLAS threads, >= 1.

    Yields
    ------
    None
    """
    with _BLAS_LOCK:
        if not _BLAS_OPEN:
            _BLAS_BEFORE[:] = [lib.num_threads for lib in _blas_libraries()]
        _BLAS_OPEN.append(int(n))
        _set_blas(min(_BLAS_OPEN))
    try:
        yield
    finally:
        with _BLAS_LOCK:
            _BLAS_OPEN.remove(int(n))
            _set_blas(min(_BLAS_OPEN) if _BLAS_OPEN else None)


_BLAS_LOCK = threading.Lock()
_BLAS_OPEN: list[int] = []  # the n of every open blas_at_most block, in any thread
_BLAS_BEFORE: list[int] = []  # each library's count when the first of them opened


def _set_blas(n: int | None) -> None:
    """Each BLAS library at min(n, its count from before the blocks); None: that count. Called
    under ``_BLAS_LOCK``, from any thread: threadpoolctl lets only one thread at a time set a
    process-wide pool (the first that sets, until it lets go, as ``threadpool_limits`` does on exit),
    so each call lets go again; otherwise the first thread to open a block kept that right, and a
    block opened later in another thread (a Dask task) changed nothing. Letting go also ends a
    ``threadpool_limits`` of the caller's own thread holding it; its restore on exit still works
    (it takes the right back) unless another thread has taken it meanwhile."""
    for lib, before in zip(_blas_libraries(), _BLAS_BEFORE, strict=True):
        lib.set_num_threads(before if n is None else min(n, before))
        release = getattr(lib, "clear_controlling_thread", None)  # threadpoolctl >= 3.8
        if release is not None:
            release()


def _serially(fill):
    """``fill`` run under ``limit_threads(1)`` and ``openmp_at_most(1)``: a pool's threads start
    without the caller's limits, and calls nested inside a fan-out must not start threads of their
    own."""
    def run(part) -> None:
        with limit_threads(1), openmp_at_most(1):
            fill(part)
    return run


@contextmanager
def openmp_at_most(n: int) -> Iterator[None]:
    """Context manager: every OpenMP runtime loaded (pykdtree's queries, faiss's) held to at most
    ``n`` threads in the calling thread, restored after. libgomp keeps the count per thread (a
    thread starts with the process default, all cores), so unlike BLAS's this limit is set inside
    each worker thread, where the queries run, and does not reach the others.

    Parameters
    ----------
    n : int
        Most OpenMP threads, >= 1.

    Yields
    ------
    None
    """
    libraries = _openmp_libraries()
    before = [lib.get_num_threads() for lib in libraries]
    for lib, count in zip(libraries, before, strict=True):
        lib.set_num_threads(min(int(n), count))
    try:
        yield
    finally:
        for lib, count in zip(libraries, before, strict=True):
            lib.set_num_threads(count)


@cache
def _blas_libraries() -> tuple:
    """threadpoolctl's handles on the BLAS libraries loaded (NumPy's and SciPy's are by the time the
    package runs a block), found once: the search costs milliseconds, a limit through them 30 µs."""
    return tuple(ThreadpoolController().select(user_api="blas").lib_controllers)


@cache
def _openmp_libraries() -> tuple:
    """threadpoolctl's handles on the OpenMP runtimes loaded, found once (:func:`rescan_openmp`)."""
    return tuple(ThreadpoolController().select(user_api="openmp").lib_controllers)


def rescan_openmp() -> None:
    """Find the OpenMP runtimes :func:`openmp_at_most` limits again: to be called after importing a
    library that brings its own (faiss: :func:`~spectral_leverage.backends._neighbours.faiss_module`)."""
    _openmp_libraries.cache_clear()


def on_all_cores(fill, parts) -> None:
    """Call ``fill(part)`` for every item of ``parts`` (row slices, say), spread over
    :func:`max_threads` threads: worth it for NumPy and SciPy work, which releases the GIL. BLAS
    is held to one thread meanwhile (see the module docstring), and OpenMP to one thread in each of
    them (:func:`openmp_at_most`)."""
    parts = list(parts)
    n_threads = min(max_threads(), len(parts))
    with blas_at_most(1):
        if n_threads < 2:
            with openmp_at_most(1):
                for part in parts:
                    fill(part)
            return
        with ThreadPoolExecutor(n_threads) as pool:
            list(pool.map(_serially(fill), parts))


def kernel_block(kernel, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """``kernel(X, Z)``, its rows split over :func:`max_threads` threads: scikit-learn's kernels are
    NumPy and SciPy calls that release the GIL, and would otherwise run on one core while BLAS uses
    all."""
    n_threads = min(max_threads(), X.shape[0])
    if n_threads < 2 or X.shape[0] * Z.shape[0] < _MIN_THREADED_ENTRIES:
        return kernel(X, Z)
    out = np.empty((X.shape[0], Z.shape[0]))
    bounds = np.linspace(0, X.shape[0], n_threads + 1).astype(int)

    def fill(rows: slice) -> None:
        out[rows] = kernel(X[rows], Z)

    on_all_cores(fill, (slice(bounds[i], bounds[i + 1]) for i in range(n_threads)))
    return out


def kernel_product(kernel, X: np.ndarray, Z: np.ndarray, coef: np.ndarray, *, memory_budget: float,
                   verbose: bool = False, desc: str = "kernel product") -> np.ndarray:
    """``kernel(X, Z) @ coef`` computed in row blocks of X; shape ``(len(X), *coef.shape[1:])``."""
    out = np.empty((X.shape[0], *coef.shape[1:]))
    bytes_per_row = KERNEL_BYTES_PER_ENTRY * Z.shape[0] + 8.0 * (X.shape[1] + coef[0].size)
    chunks = list(row_chunks(X.shape[0], bytes_per_row, memory_budget))
    for rows in progress(chunks, verbose=verbose, desc=desc, unit="block"):
        out[rows] = kernel_block(kernel, X[rows], Z) @ coef
    return out

"""``n_jobs`` with joblib's meaning on every estimator that fans out, and no oversubscription:
a fit starts no more Python threads than ``n_jobs`` and never raises BLAS's thread count."""

from __future__ import annotations

import threading
from typing import ClassVar

import joblib
import numpy as np
import pytest
from sklearn.gaussian_process.kernels import Matern
from threadpoolctl import threadpool_info, threadpool_limits

from spectral_leverage import (
    LeverageNystroem,
    NystromKRR,
    NystromKRRCV,
    SketchedKRR,
    SpectralLeverage,
    _blocks,
)
from spectral_leverage.density import BinnedDensity, TreeDensity

KERNEL = Matern(0.5, nu=1.5)
RNG = np.random.default_rng(0)
X2, X5 = RNG.uniform(size=(3000, 2)), RNG.uniform(size=(1000, 5))
Y = np.sin(4 * X2[:, 0])
SMALL = 2**18  # bytes: chunks small enough that 3000 rows make several

#: (name, run(n_jobs)): each fans out over row blocks (n·m >= 2^18 kernel entries, or the tree KDE's
#: anchors) when allowed more than one thread
RUNS = {
    "SpectralLeverage-tree": lambda j: SpectralLeverage(KERNEL, 1e-3, kde="tree", intrinsic_dim=None,
                                                        memory_budget=SMALL, n_jobs=j).fit(X5),
    "SpectralLeverage-binned": lambda j: SpectralLeverage(KERNEL, 1e-3, memory_budget=SMALL,
                                                          n_jobs=j).fit(X2),
    "TreeDensity": lambda j: TreeDensity(n_jobs=j, random_state=0).fit(X5).density(X5),
    "BinnedDensity": lambda j: BinnedDensity(memory_budget=SMALL, n_jobs=j).fit(X2).density(X2),
    "NystromKRR": lambda j: NystromKRR(KERNEL, 1e-3, 100, n_jobs=j, random_state=0).fit(X2, Y).predict(X2),
    "LeverageNystroem": lambda j: LeverageNystroem(KERNEL, reg=1e-3, n_components=100, n_jobs=j,
                                                   sampler="spectral", random_state=0).fit(X2).transform(X2),
    "SketchedKRR": lambda j: SketchedKRR(KERNEL, 1e-3, 100, n_jobs=j, random_state=0).fit(X2, Y).predict(X2),
    # 1 MiB: several blocks, and room for two threads' sums (two 100 x 100 arrays each)
    "NystromKRRCV": lambda j: NystromKRRCV(KERNEL, regs=[1e-3, 1e-4], length_scales=[0.5], n_centers=100,
                                           memory_budget=2**20, n_jobs=j,
                                           random_state=0).fit(X2, Y).predict(X2),
}


def _blas_threads() -> int:
    """The largest BLAS thread count but faiss's: an OpenMP build of OpenBLAS (faiss brings one,
    once the approximate neighbours have imported it; no call of the package reaches it) counts per
    thread, like OpenMP itself, so read from the poller's thread it shows that thread's default."""
    return max((pool["num_threads"] for pool in threadpool_info()
                if pool["user_api"] == "blas" and "faiss" not in pool["filepath"]), default=1)


def _working_threads() -> int:
    """Live Python threads but tqdm's monitor (one per process, asleep but for a check every 10 s;
    tqdm starts it even for a disabled bar)."""
    return sum(thread.name != "tqdm_monitor" for thread in threading.enumerate())


class _Watch:
    """Largest BLAS thread count (process-wide for OpenBLAS, so visible from here) and largest
    number of extra live Python threads seen while a fit runs, polled from a thread of its own."""

    def __init__(self):
        self.blas, self.threads, self._stop = 0, 0, threading.Event()
        self._poller = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.wait(0.002):
            self.blas = max(self.blas, _blas_threads())
            self.threads = max(self.threads, _working_threads() - self._baseline)

    def __enter__(self):
        # the threads already running and this poller, counted before it starts: it reads the
        # baseline at once (set after the start, a fast poller died reading it, its counts lost)
        self._baseline = _working_threads() + 1
        self._poller.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._poller.join()


class _WorkerBlas:
    """The BLAS thread counts seen inside the package's pool threads (patched ThreadPoolExecutor)."""

    def __init__(self, monkeypatch):
        seen = self.seen = []
        base = _blocks.ThreadPoolExecutor

        class Recording(base):
            def map(self, fn, *iterables):
                def run(*args):
                    seen.append(_blas_threads())
                    return fn(*args)
                return super().map(run, *iterables)

        monkeypatch.setattr(_blocks, "ThreadPoolExecutor", Recording)


@pytest.mark.parametrize("name", sorted(RUNS))
@pytest.mark.parametrize("context", ["threadpool_limits(1)", "parallel_config(n_jobs=1)"])
def test_one_job_starts_no_threads_and_no_blas_threads(name, context):
    before = _blas_threads()
    outer = threadpool_limits(1) if context == "threadpool_limits(1)" else joblib.parallel_config(n_jobs=1)
    with outer:
        limit = _blas_threads()
        with _Watch() as watch:
            RUNS[name](None)
    assert watch.threads == 0, f"{name} started {watch.threads} Python threads"
    assert watch.blas <= limit, f"{name} raised BLAS from {limit} to {watch.blas} threads"
    assert _blas_threads() == before


@pytest.mark.parametrize("name", sorted(RUNS))
@pytest.mark.parametrize("how", ["n_jobs=2", "parallel_config(n_jobs=2)"])
def test_two_jobs_use_at_most_two_threads_each_with_one_blas_thread(name, how, monkeypatch):
    workers = _WorkerBlas(monkeypatch)
    before = _blas_threads()
    with joblib.parallel_config(n_jobs=2 if how != "n_jobs=2" else None), _Watch() as watch:
        RUNS[name](2 if how == "n_jobs=2" else None)
    assert watch.threads <= 2
    assert all(count == 1 for count in workers.seen), workers.seen
    if _blocks.N_THREADS >= 2:
        assert workers.seen, f"{name} did not fan out with two jobs"
    assert _blas_threads() == before  # restored after the fan-out


class _CountingMatern(Matern):
    """Matern that notes BLAS's thread count at each call made from the main thread (inside the
    fit's methods, between and in the row blocks)."""

    seen: ClassVar[list] = []

    def __call__(self, X, Y=None, eval_gradient=False):
        if threading.current_thread() is threading.main_thread():
            _CountingMatern.seen.append(_blas_threads())
        return super().__call__(X, Y, eval_gradient)


@pytest.mark.skipif(_blocks.N_THREADS < 2, reason="one core: BLAS has one thread anyway")
@pytest.mark.parametrize("name", ["SpectralLeverage-full-scale", "NystromKRR", "LeverageNystroem",
                                  "SketchedKRR", "NystromKRRCV"])
def test_the_default_holds_blas_to_one_thread_in_the_whole_method(name):
    # n_jobs=None is one core: the serial factorisations and products between the blocks included
    kernel = _CountingMatern(0.5, nu=1.5)
    run = {
        "SpectralLeverage-full-scale": lambda: SpectralLeverage(kernel, 1e-3, algorithm="full-scale",
                                                                random_state=0).fit(X2),
        "NystromKRR": lambda: NystromKRR(kernel, 1e-3, 100, random_state=0).fit(X2, Y).predict(X2),
        "LeverageNystroem": lambda: LeverageNystroem(kernel, reg=1e-3, n_components=100,
                                                     sampler="spectral",
                                                     random_state=0).fit(X2).transform(X2),
        "SketchedKRR": lambda: SketchedKRR(kernel, 1e-3, 100, random_state=0).fit(X2, Y).predict(X2),
        "NystromKRRCV": lambda: NystromKRRCV(kernel, regs=[1e-3], length_scales=[0.5], n_centers=100,
                                             random_state=0).fit(X2, Y).predict(X2),
    }[name]
    before = _blas_threads()
    assert before >= 2, "the test needs BLAS's own default of several threads"
    _CountingMatern.seen = []
    run()
    assert _CountingMatern.seen and set(_CountingMatern.seen) == {1}, _CountingMatern.seen
    assert _blas_threads() == before


@pytest.mark.parametrize("name", ["NystromKRR", "SpectralLeverage-tree"])
def test_n_jobs_never_raises_blas_above_a_limit_set_outside(name):
    with threadpool_limits(1), _Watch() as watch:
        RUNS[name](-1)
    assert watch.blas == 1


def test_n_jobs_follows_joblib():
    assert _blocks.max_threads() == 1
    with joblib.parallel_config(n_jobs=-1):
        assert _blocks.max_threads() == min(_blocks.N_THREADS, joblib.cpu_count())
    with pytest.raises(ValueError, match="n_jobs"):
        SpectralLeverage(n_jobs=0).fit(X2)

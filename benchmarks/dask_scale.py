"""Leverage scores and Nyström KRR on a Dask cluster, data on disk larger than a worker's memory.

    python benchmarks/dask_scale.py [--n 50000000] [--workers 2] [--memory-limit 1GB] [--m 1000]
                                    [--chunk-rows 1000000] [--dir DIR] [--scheduler ADDRESS]

Writes X (n × d float64, the bimodal design 0.9·U[0,1]^d + 0.1·N(1.5, 0.05²·I) of the tests) and
y = sin(4 x_1) + x_2² + noise as .npy files in row chunks (never whole in memory), opens them as a
Dask array whose chunks are read from the memory-mapped files by the workers, starts a LocalCluster
(``--workers`` processes, one thread each, ``--memory-limit`` each; or connects to ``--scheduler``),
then times

* ``SpectralLeverage.fit`` (scores_: anchors gathered, densities and scores on the workers),
* ``NystromKRR.fit`` with those scores as its sampler (centres drawn, per-block normal equations
  summed by a tree reduction, m × m solve on the client),
* ``predict`` on the first chunk (lazy, computed) and its R²,

and prints a table with the wall time of each stage and the peak resident memory of every worker
process (sampled every 0.2 s with psutil) and of the client.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import psutil
from sklearn.gaussian_process.kernels import Matern

from spectral_leverage import NystromKRR, SpectralLeverage
from spectral_leverage.datasets import make_bimodal


class NpyRows:
    """Array-like over a .npy file for ``dask.array.from_array``: pickles as its path, each worker
    memory-maps the file and copies only the rows a chunk asks for."""

    def __init__(self, path: Path):
        self.path = str(path)
        header = np.load(self.path, mmap_mode="r")
        self.shape, self.dtype, self.ndim = header.shape, header.dtype, header.ndim

    def __getitem__(self, key):
        return np.array(np.load(self.path, mmap_mode="r")[key])


def write_data(directory: Path, n: int, d: int, chunk_rows: int) -> tuple[Path, Path]:
    """X and y as .npy files, written chunk by chunk (chunk i seeded with (0, i))."""
    x_path, y_path = directory / "X.npy", directory / "y.npy"
    X = np.lib.format.open_memmap(x_path, mode="w+", dtype=np.float64, shape=(n, d))
    y = np.lib.format.open_memmap(y_path, mode="w+", dtype=np.float64, shape=(n,))
    for start in range(0, n, chunk_rows):
        stop = min(start + chunk_rows, n)
        rng = np.random.default_rng([0, start // chunk_rows])
        block = make_bimodal(stop - start, d, random_state=rng)
        X[start:stop] = block
        y[start:stop] = np.sin(4 * block[:, 0]) + block[:, 1] ** 2 + 0.1 * rng.normal(size=stop - start)
    X.flush()
    y.flush()
    del X, y
    return x_path, y_path


class PeakMemory:
    """Peak RSS of the given processes, sampled in a background thread; reset per stage."""

    def __init__(self, pids: dict[str, int], interval: float = 0.2):
        self.processes = {name: psutil.Process(pid) for name, pid in pids.items()}
        self.interval = interval
        self.peaks = dict.fromkeys(self.processes, 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for name, process in self.processes.items():
                try:
                    self.peaks[name] = max(self.peaks[name], process.memory_info().rss)
                except psutil.Error:
                    pass
            time.sleep(self.interval)

    def take(self) -> dict[str, int]:
        time.sleep(2 * self.interval)
        peaks, self.peaks = self.peaks, dict.fromkeys(self.processes, 0)
        return peaks

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=5e7, help="rows (default 5e7: 1.2 GB at d=3)")
    parser.add_argument("--d", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="1GB", help="per worker (dask syntax)")
    parser.add_argument("--m", type=int, default=1000, help="Nyström centres drawn")
    parser.add_argument("--chunk-rows", type=int, default=1_000_000)
    parser.add_argument("--memory-budget", type=float, default=64 * 2**20,
                        help="bytes of temporaries per sub-block inside a task")
    parser.add_argument("--dir", type=Path, default=None,
                        help="directory for X.npy and y.npy (default: a temporary one, removed)")
    parser.add_argument("--scheduler", default=None,
                        help="address of an existing scheduler, e.g. tcp://host:8786 (then --workers "
                             "and --memory-limit are ignored, and the files must be readable there)")
    args = parser.parse_args()
    n = int(args.n)

    import dask.array as da
    from distributed import Client, LocalCluster

    directory = args.dir or Path(tempfile.mkdtemp(prefix="dask_scale_"))
    directory.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    x_path, y_path = write_data(directory, n, args.d, args.chunk_rows)
    t_write = time.perf_counter() - start
    print(f"wrote {n:,} x {args.d} float64 ({n * args.d * 8 / 1e9:.2f} GB) + y to {directory} "
          f"in {t_write:.1f}s", flush=True)

    cluster = None
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               memory_limit=args.memory_limit, dashboard_address=None)
        client = Client(cluster)
    try:
        pids = {f"worker {i}": pid for i, pid in enumerate(client.run(os.getpid).values())}
        pids["client"] = os.getpid()
        monitor = PeakMemory(pids)
        X = da.from_array(NpyRows(x_path), chunks=(args.chunk_rows, args.d), asarray=False)
        y = da.from_array(NpyRows(y_path), chunks=(args.chunk_rows,), asarray=False)
        kernel, reg = Matern(length_scale=0.5, nu=1.5), n**-0.75
        rows = []

        def stage(name, fn):
            began = time.perf_counter()
            result = fn()
            rows.append((name, time.perf_counter() - began, monitor.take()))
            print(f"  {name}: {rows[-1][1]:.1f}s", flush=True)
            return result

        monitor.take()
        sl = stage("SpectralLeverage.fit (scores)", lambda: SpectralLeverage(
            kernel, reg, memory_budget=args.memory_budget, random_state=0).fit(X))
        model = stage(f"NystromKRR.fit (m={args.m} draws)", lambda: NystromKRR(
            kernel, reg, args.m, sampler=sl, memory_budget=args.memory_budget,
            random_state=0).fit(X, y))
        first = slice(0, min(args.chunk_rows, n))
        predicted = stage("predict (first chunk)", lambda: model.predict(X[first]).compute())
        y_first = y[first].compute()
        r2 = 1 - np.mean((predicted - y_first) ** 2) / np.var(y_first)
        monitor.stop()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
        if args.dir is None:
            shutil.rmtree(directory, ignore_errors=True)

    names = list(pids)
    print(f"\nn = {n:,}, d = {args.d} ({n * args.d * 8 / 1e9:.2f} GB on disk, chunks of "
          f"{args.chunk_rows:,} rows), {args.workers} workers x 1 thread, memory limit "
          f"{args.memory_limit} each; Matern(0.5, 1.5), reg = n^-3/4")
    print(f"density: {type(sl._model).__name__}; "
          f"effective dimension {sl.effective_dimension_:.1f}, {len(model.center_indices_)} unique "
          f"centres, R^2 on the first chunk {r2:.4f}; data written in {t_write:.1f}s")
    print("| stage | seconds | " + " | ".join(f"peak RSS {name} (MB)" for name in names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    for name, seconds, peaks in rows:
        print(f"| {name} | {seconds:.1f} | " + " | ".join(f"{peaks[k] / 2**20:.0f}" for k in names) + " |")
    total = sum(seconds for _, seconds, _ in rows)
    print(f"| total | {total:.1f} | " + " | ".join(
        f"{max(p[k] for _, _, p in rows) / 2**20:.0f}" for k in names) + " |")


if __name__ == "__main__":
    main()

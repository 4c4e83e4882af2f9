"""The default scores (algorithm="auto") on a Dask cluster beside the same fit in memory, one setting
per path of the default (density formula, full-scale with the tail integral, with neighbours).

    python benchmarks/dask_default.py [--n 1e6] [--d 3] [--workers 2] [--memory-limit 2GB]
                                      [--chunk-rows 100000] [--paths density tail neighbours]
                                      [--in-memory] [--dir DIR]

Writes X (n × d standard normal float64) as a .npy file in row chunks, then for each path starts a
fresh LocalCluster (``--workers`` processes, one thread each, ``--memory-limit`` each), fits
``SpectralLeverage(kernel, reg, random_state=0)`` on the Dask array read from the file by the
workers (``dask_scale.NpyRows``), and reports the wall time, the path taken, the effective
dimension and the peak resident memory of each worker process and of the client (sampled every
0.2 s). With ``--in-memory`` the same fit on the NumPy array runs too (in this process, before the
cluster starts), with its time, peak RSS and the largest per-row relative difference of the scores.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil
from dask_scale import NpyRows, PeakMemory
from sklearn.gaussian_process.kernels import Matern

from spectral_leverage import SpectralLeverage

#: one setting per path of the default on standard normal rows in 3-D (kernel, reg as a power of n)
SETTINGS = {
    "density": (Matern(1.0, nu=1.5), -1.0),
    "tail": (Matern(3.0, nu=2.5), -0.5),  # the tail integral at n = 1e6 and 1e7 (64 pivots)
    "neighbours": (Matern(0.2, nu=0.5), -1.0),
}


class PathLog(logging.Handler):
    """The neighbours of the full-scale leverage, as its fit logs them."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.found: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.found += re.findall(r"pivots \(rank \d+\), (\d+) neighbours", record.getMessage())


def write_normal(directory: Path, n: int, d: int, chunk_rows: int) -> Path:
    """X as a .npy file written chunk by chunk (chunk i seeded with (0, i))."""
    path = directory / "X.npy"
    X = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n, d))
    for start in range(0, n, chunk_rows):
        stop = min(start + chunk_rows, n)
        X[start:stop] = np.random.default_rng([0, start // chunk_rows]).normal(size=(stop - start, d))
    X.flush()
    del X
    return path


def fit(X, kernel, reg, log: PathLog):
    log.found.clear()
    began = time.perf_counter()
    sl = SpectralLeverage(kernel, reg, random_state=0).fit(X)
    scores = sl.scores_ if isinstance(sl.scores_, np.ndarray) else sl.scores_.compute()
    seconds = time.perf_counter() - began
    path = "density" if sl.algorithm_ == "density" else "tail" if log.found == ["0"] else "neighbours"
    return seconds, path, sl.effective_dimension_, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--d", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="2GB", help="per worker (dask syntax)")
    parser.add_argument("--chunk-rows", type=int, default=100_000)
    parser.add_argument("--paths", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--in-memory", action="store_true", help="also fit the NumPy array")
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    n = int(args.n)

    import dask.array as da
    from distributed import Client, LocalCluster

    log = PathLog()
    logging.getLogger("spectral_leverage.spectral.full_scale").addHandler(log)
    logging.getLogger("spectral_leverage.spectral.full_scale").setLevel(logging.INFO)
    directory = args.dir or Path(tempfile.mkdtemp(prefix="dask_default_"))
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        x_path = write_normal(directory, n, args.d, args.chunk_rows)
        for name in args.paths:
            kernel, power = SETTINGS[name]
            reg = n**power
            row = {"setting": name, "kernel": kernel, "reg": f"n^{power:g}"}
            local = None
            if args.in_memory:
                X = np.load(x_path)
                monitor = PeakMemory({"client": os.getpid()})
                monitor.take()
                row["memory s"], row["memory path"], _, local = fit(X, kernel, reg, log)
                row["memory peak MB"] = monitor.take()["client"] / 2**20
                monitor.stop()
                del X
                print(f"  {name} in memory: {row['memory s']:.1f}s ({row['memory path']})", flush=True)
            with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                              memory_limit=args.memory_limit, dashboard_address=None) as cluster, \
                    Client(cluster) as client:
                pids = {f"worker {i}": pid for i, pid in enumerate(client.run(os.getpid).values())}
                pids["client"] = os.getpid()
                monitor = PeakMemory(pids)
                monitor.take()
                Xd = da.from_array(NpyRows(x_path), chunks=(args.chunk_rows, args.d), asarray=False)
                row["dask s"], row["dask path"], row["d_eff"], scores = fit(Xd, kernel, reg, log)
                peaks = monitor.take()
                monitor.stop()
            row["peak MB per worker"] = max(v for k, v in peaks.items() if k != "client") / 2**20
            row["client peak MB"] = peaks["client"] / 2**20
            if local is not None:
                row["max rel diff"] = float(np.max(np.abs(scores / local - 1)))
            print(f"  {name} on Dask: {row['dask s']:.1f}s ({row['dask path']})", flush=True)
            rows.append(row)
    finally:
        if args.dir is None:
            shutil.rmtree(directory, ignore_errors=True)

    print(f"\nn = {n:,}, d = {args.d}, standard normal rows, chunks of {args.chunk_rows:,} rows, "
          f"{args.workers} workers x 1 thread, memory limit {args.memory_limit} each; "
          f"machine: {psutil.cpu_count()} cores")
    columns = [c for c in ("setting", "kernel", "reg", "dask path", "d_eff", "dask s", "peak MB per worker",
                           "client peak MB", "memory path", "memory s", "memory peak MB", "max rel diff")
               if any(c in r for r in rows)]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for r in rows:
        print("| " + " | ".join(_cell(r.get(c, "")) for c in columns) + " |")


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1e-2 else f"{value:.1f}"
    return str(value)


if __name__ == "__main__":
    main()

"""Seconds of greedy and randomly pivoted Cholesky (``rp_cholesky``) on real data, per m.

    python benchmarks/pivoting.py [--datasets ccpp casp] [--n 8000] [--m 50 200 800] [--repeats 3]

CCPP and CASP (``../shared/data``): the first n rows of a permutation by seed 0, features
standardised; Matérn 1.5 and RBF at ℓ = 1. Per (set, kernel, m): the median CPU seconds over
``--repeats`` runs of greedy pivoting and of block RPCholesky, one BLAS thread, and their ratio.
The same script times an older revision with ``PYTHONPATH`` pointing at its checkout
(docs/notes/centres.md quotes both)::

    python benchmarks/pivoting.py --method greedy --m 800   # one cell, for a whole-process timer
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.gaussian_process.kernels import RBF, Matern
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from spectral_leverage.pivoted_cholesky import rp_cholesky

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
KERNELS = {"matern1.5": Matern(1.0, nu=1.5), "rbf": RBF(1.0)}


def rows(name: str, n: int) -> np.ndarray:
    table = np.loadtxt(DATA / f"{name}.csv", delimiter=",", skiprows=1)
    order = np.random.default_rng(0).permutation(table.shape[0])[:n]
    return StandardScaler().fit_transform(table[order, :-1])


def seconds(X, kernel, m: int, greedy: bool, repeats: int) -> float:
    times = []
    for seed in range(repeats):
        start = time.process_time()
        rp_cholesky(X, kernel, m, np.random.default_rng(seed), greedy=greedy)
        times.append(time.process_time() - start)
    return float(np.median(times))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["ccpp", "casp"])
    parser.add_argument("--n", type=int, default=8000)
    parser.add_argument("--kernels", nargs="+", default=list(KERNELS), choices=list(KERNELS))
    parser.add_argument("--m", nargs="+", type=int, default=[50, 200, 800])
    parser.add_argument("--method", choices=["greedy", "random", "both"], default="both")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    methods = {"greedy": [True], "random": [False], "both": [True, False]}[args.method]
    print("| set | kernel | m | " + " | ".join("greedy s" if g else "random s" for g in methods)
          + (" | greedy / random |" if len(methods) == 2 else " |"))
    print("|---" * (3 + len(methods) + (len(methods) == 2)) + "|")
    with threadpool_limits(1):
        for name in args.datasets:
            X = rows(name, args.n)
            for kname in args.kernels:
                for m in args.m:
                    secs = [seconds(X, KERNELS[kname], m, g, args.repeats) for g in methods]
                    cells = " | ".join(f"{s:.3f}" for s in secs)
                    ratio = f" | {secs[0] / secs[1]:.2f}" if len(secs) == 2 else ""
                    print(f"| {name} | {kname} | {m} | {cells}{ratio} |", flush=True)


if __name__ == "__main__":
    main()

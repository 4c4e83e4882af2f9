"""Nyström centres against what practitioners use: k-means, greedy and randomly pivoted Cholesky.

    python benchmarks/centres.py table [--datasets ccpp casp] [--n-train 8000 36000] [--seeds 0 1 2 3 4]
    python benchmarks/centres.py scale [--n 1000000] [--d 3] [--m 2000]

``table`` (issue 20, acceptance 1): CCPP and CASP (``../shared/data``), a uniform split of n_train
training rows and up to 5000 test rows (disjoint; a set with fewer than n_train + 1000 rows is skipped
at that n_train, so CCPP's 9568 rows give n_train = 8000 only), features standardised on the
training rows, Matérn 1.5 and RBF at ℓ = 1, λ = ``--reg`` (1e-4), m ∈ {50, 200, 800}.
``NystromKRR(kernel, λ, m, sampler=...)`` per method, the same solver for all; the selection time is
the estimator's own timing of its centre choice (its ``verbose`` log) plus, for the score-based
methods, the time to fit their scores (fitted once per seed and reused across m, as a user choosing
one m would pay it once). Per cell: the mean test RMSE over seeds divided by the best mean RMSE of
k-means, greedy and RP-Cholesky ("ratio"), and the median selection time divided by the fastest of
those three ("time ratio"). Rows go to ``--out`` (JSON) as they come.

``scale`` (acceptance 2): n × d standard normal inputs, RBF ℓ = 1, λ = 1e-4, m centres: seconds
and tracemalloc peak (bytes allocated during the selection, the data excluded) of each selection,
against scikit-learn's ``MiniBatchKMeans(n_clusters=m)`` with its defaults. A selector that reads the
target (``"adaptive-cholesky"``) is given y = sin(x₁) + x₂²/2 + 0.1 ε.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import time
import tracemalloc
import warnings
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")

import numpy as np
from sklearn.cluster import MiniBatchKMeans
from sklearn.gaussian_process.kernels import RBF, Matern
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from spectral_leverage import NystromKRR
from spectral_leverage.samplers import make_sampler

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
BASELINES = ("kmeans", "greedy-cholesky", "rp-cholesky")
METHODS = ("spectral", "spectral-greedy", "adaptive-cholesky", "uniform", *BASELINES)
SCORED = ("spectral", "spectral-greedy")  # scores fitted once per seed, reused across m
KERNELS = {"matern1.5": Matern(1.0, nu=1.5), "rbf": RBF(1.0)}


class _StageTimes(logging.Handler):
    """Collects NystromKRR's own stage timings (the last argument of its verbose log records)."""

    def __init__(self):
        super().__init__()
        self.seconds: dict[str, float] = {}

    def emit(self, record):
        stage = record.msg.split(":", 1)[1].split("(")[0].strip()
        self.seconds[stage] = float(record.args[-1])


def split(name: str, n_train: int, seed: int):
    table = np.loadtxt(DATA / f"{name}.csv", delimiter=",", skiprows=1)
    order = np.random.default_rng(seed).permutation(table.shape[0])
    train, test = order[:n_train], order[n_train:n_train + 5000]
    scaler = StandardScaler().fit(table[train, :-1])
    return (scaler.transform(table[train, :-1]), table[train, -1],
            scaler.transform(table[test, :-1]), table[test, -1])


def fit_one(X, y, X_test, y_test, kernel, reg, m, sampler, seed, stages):
    stages.seconds.clear()
    model = NystromKRR(kernel, reg, m, sampler=sampler, random_state=seed, verbose=True).fit(X, y)
    rmse = float(np.sqrt(np.mean((model.predict(X_test) - y_test) ** 2)))
    return rmse, stages.seconds["centre sampling"], model.centers_.shape[0]


def table(args) -> None:
    stages = _StageTimes()
    logger = logging.getLogger("spectral_leverage.krr.nystrom")
    logger.addHandler(stages)
    logger.setLevel(logging.INFO)
    rows = []
    for name in args.datasets:
        for n_train in args.n_train:
            available = sum(1 for _ in open(DATA / f"{name}.csv")) - 1
            if available < n_train + 1000:
                print(f"{name}: {available} rows, n_train = {n_train} skipped", flush=True)
                continue
            for kname in args.kernels:
                kernel = KERNELS[kname]
                for seed in args.seeds:
                    X, y, X_test, y_test = split(name, n_train, seed)
                    fitted = {}
                    for method in SCORED:
                        start = time.perf_counter()
                        fitted[method] = make_sampler(method, kernel=kernel, reg=args.reg,
                                                      random_state=seed).fit(X)
                        fitted[method + " scores"] = time.perf_counter() - start
                    for m in args.m:
                        for method in args.methods:
                            sampler = fitted.get(method, method)
                            rmse, seconds, kept = fit_one(X, y, X_test, y_test, kernel, args.reg, m,
                                                          sampler, seed, stages)
                            seconds += fitted.get(method + " scores", 0.0)
                            row = {"dataset": name, "n_train": n_train, "kernel": kname, "m": m,
                                   "seed": seed, "method": method, "rmse": rmse,
                                   "select_seconds": seconds, "centres": kept}
                            rows.append(row)
                            print(json.dumps(row), flush=True)
                            if args.out:
                                Path(args.out).write_text(json.dumps(rows, indent=1))
    summarise(rows)


def summarise(rows) -> None:
    """The acceptance-1 table: per cell, each method's RMSE and time against the best baseline."""
    cells = sorted({(r["dataset"], r["n_train"], r["kernel"], r["m"]) for r in rows})
    methods = [m for m in METHODS if any(r["method"] == m for r in rows)]
    print("\n| set | n_train | kernel | m | seeds | " + " | ".join(methods) + " |")
    print("|" + "---|" * (5 + len(methods)))
    wins = {m: [0, 0, 0.0, 0, 0] for m in methods}  # <= 1.000, cells, worst, < 1.005, time <= 2x
    for cell in cells:
        mine = [r for r in rows if (r["dataset"], r["n_train"], r["kernel"], r["m"]) == cell]
        rmse = {m: np.mean([r["rmse"] for r in mine if r["method"] == m]) for m in methods}
        secs = {m: np.median([r["select_seconds"] for r in mine if r["method"] == m]) for m in methods}
        best = min(rmse[m] for m in BASELINES)
        fastest = min(secs[m] for m in BASELINES)
        seeds = len({r["seed"] for r in mine})
        cols = []
        for m in methods:
            ratio = rmse[m] / best
            wins[m][0] += ratio <= 1.0
            wins[m][1] += 1
            wins[m][2] = max(wins[m][2], ratio)
            wins[m][3] += ratio < 1.005
            wins[m][4] += secs[m] <= 2 * fastest
            cols.append(f"{ratio:.3f} ({secs[m]:.2f} s, ×{secs[m] / fastest:.1f})")
        print(f"| {cell[0]} | {cell[1]} | {cell[2]} | {cell[3]} | {seeds} | " + " | ".join(cols) + " |")
    print("\nper method, over the cells: RMSE ratio <= 1.000 | ratio < 1.005 (1.00 to two decimals) | "
          "worst ratio | selection time <= 2x the fastest baseline's")
    for m, (ok, total, worst, ok2, fast) in wins.items():
        print(f"  {m:16s} {ok:2d} / {total:2d} | {ok2:2d} / {total:2d} | {worst:.3f} "
              f"| {fast:2d} / {total:2d}")


def scale(args) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(args.n, args.d))
    y = np.sin(X[:, 0]) + X[:, 1] ** 2 / 2 + 0.1 * rng.normal(size=args.n)
    kernel = RBF(1.0)
    runs = [("MiniBatchKMeans (defaults)",
             lambda: MiniBatchKMeans(n_clusters=args.m, random_state=0).fit(X).cluster_centers_)]
    for method in args.methods:
        def run(method=method):
            sampler = make_sampler(method, kernel=kernel, reg=args.reg, random_state=0,
                                   memory_budget=args.memory_budget)
            sampler.fit(X, y)  # only adaptive-cholesky reads y
            if hasattr(sampler, "select"):
                return sampler.select(args.m)[0]
            return X[np.unique(sampler.sample(args.m))]
        runs.append((method, run))
    print(f"n = {args.n}, d = {args.d}, m = {args.m}, memory_budget = {args.memory_budget / 2**20:.0f} "
          "MiB\n\n| method | seconds | peak MiB (tracemalloc) | centres |\n|---|---|---|---|")
    for label, run in runs:
        tracemalloc.start()
        start = time.perf_counter()
        centres = run()
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"| {label} | {seconds:.2f} | {peak / 2**20:.0f} | {centres.shape[0]} |", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("table")
    t.add_argument("--datasets", nargs="+", default=["ccpp", "casp"])
    t.add_argument("--n-train", nargs="+", type=int, default=[8000, 36000])
    t.add_argument("--kernels", nargs="+", default=list(KERNELS), choices=list(KERNELS))
    t.add_argument("--m", nargs="+", type=int, default=[50, 200, 800])
    t.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    t.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    t.add_argument("--reg", type=float, default=1e-4)
    t.add_argument("--out", default=None, help="JSON file for the rows")
    t.add_argument("--summarise", nargs="*", default=None,
                   help="only print the table of earlier --out files")
    s = sub.add_parser("scale")
    s.add_argument("--n", type=int, default=1_000_000)
    s.add_argument("--d", type=int, default=3)
    s.add_argument("--m", type=int, default=2000)
    s.add_argument("--reg", type=float, default=1e-4)
    s.add_argument("--memory-budget", type=float, default=2**28)
    s.add_argument("--methods", nargs="+",
                   default=["spectral", "spectral-greedy", "adaptive-cholesky", "kmeans", "rp-cholesky",
                            "greedy-cholesky"])
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    with threadpool_limits(args.threads):
        if args.command == "scale":
            scale(args)
        elif args.summarise is not None:
            summarise([row for path in args.summarise for row in json.loads(Path(path).read_text())])
        else:
            table(args)


if __name__ == "__main__":
    main()

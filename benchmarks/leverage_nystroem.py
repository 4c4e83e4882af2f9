"""LeverageNystroem against scikit-learn's Nystroem, as a user swaps one for the other (issue 36).

    python benchmarks/leverage_nystroem.py [--datasets ccpp casp] [--m 100 300 1000] [--seeds 0 1 2]
    python benchmarks/leverage_nystroem.py --summarise runs.jsonl

For each data set (``../shared/data``; CASP subsampled to ``--n-train`` training rows), seed and m:
a uniform split into ``--n-train`` training and up to 5000 test rows, then the pipeline a
practitioner writes, ``StandardScaler() → <transformer>(kernel="rbf", n_components=m) →
RidgeCV(alphas=np.logspace(-6, 2, 9))``, with each transformer:

* ``Nystroem`` (scikit-learn; uniform components);
* ``LeverageNystroem`` with each ``--samplers`` value (a name of ``spectral_leverage.SAMPLERS``, or
  ``density``: ``SpectralLeverage(algorithm="density")``, the density scores without refinement).

``gamma`` is left at its default (1/d), as the replaced line had it. Per row: test RMSE, the
transformer's fit (CPU seconds of this process, one BLAS thread) and the whole pipeline's fit. The
table gives, per (data set, m), each transformer's mean RMSE over seeds divided by ``Nystroem``'s and
its median fit time divided by ``Nystroem``'s, both over the seeds that transformer ran (``Nystroem``'s
own column: all its seeds). ``--out`` appends finished rows (JSON lines) and skips
those already there, so a run can resume.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import RidgeCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from spectral_leverage import LeverageNystroem, SpectralLeverage

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def split(name: str, n_train: int, seed: int):
    table = np.loadtxt(DATA / f"{name}.csv", delimiter=",", skiprows=1)
    order = np.random.default_rng(seed).permutation(table.shape[0])
    train, test = order[:n_train], order[n_train:n_train + 5000]
    return table[train, :-1], table[train, -1], table[test, :-1], table[test, -1]


def transformer(method: str, m: int, seed: int):
    if method == "Nystroem":
        return Nystroem(kernel="rbf", n_components=m, random_state=seed)
    sampler = SpectralLeverage(algorithm="density") if method == "density" else method
    return LeverageNystroem(kernel="rbf", n_components=m, random_state=seed, sampler=sampler)


def run_one(X, y, X_test, y_test, method: str, m: int, seed: int) -> dict:
    pipeline = make_pipeline(StandardScaler(), transformer(method, m, seed),
                             RidgeCV(alphas=np.logspace(-6, 2, 9)))
    start = time.process_time()
    pipeline.fit(X, y)
    whole = time.process_time() - start
    scaled = pipeline[0].transform(X)
    start = time.process_time()
    transformer(method, m, seed).fit(scaled)
    alone = time.process_time() - start
    rmse = float(np.sqrt(np.mean((pipeline.predict(X_test) - y_test) ** 2)))
    return {"rmse": rmse, "fit_seconds": alone, "pipeline_seconds": whole}


def summarise(rows: list) -> None:
    cells = defaultdict(lambda: defaultdict(list))
    for row in rows:
        cells[(row["dataset"], row["n_train"], row["m"])][row["method"]].append(row)
    methods = sorted({row["method"] for row in rows}, key=lambda name: (name != "Nystroem", name))
    print("| data | n_train | m | " + " | ".join(methods) + " |")
    print("|---|---|---|" + "---|" * len(methods))
    for (name, n_train, m), by_method in sorted(cells.items()):
        entries = []
        for method in methods:
            runs = by_method.get(method, [])
            if not runs:
                entries.append("–")
                continue
            seeds = {r["seed"] for r in runs}  # Nystroem's runs on the same seeds
            base = [r for r in by_method["Nystroem"] if r["seed"] in seeds]
            rmse0 = np.mean([r["rmse"] for r in base])
            time0 = np.median([r["fit_seconds"] for r in base])
            rmse = np.mean([r["rmse"] for r in runs])
            seconds = np.median([r["fit_seconds"] for r in runs])
            entries.append(f"{rmse / rmse0:.3f} ({seconds:.2f} s, ×{seconds / time0:.1f})"
                           if method != "Nystroem" else f"{rmse:.3f} ({seconds:.3f} s)")
        print(f"| {name} | {n_train} | {m} | " + " | ".join(entries) + " |")
    print("\nNystroem: mean test RMSE (median fit CPU s); others: RMSE / Nystroem's "
          "(median fit CPU s, × Nystroem's)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["ccpp", "casp"])
    parser.add_argument("--n-train", type=int, default=8000)
    parser.add_argument("--m", nargs="+", type=int, default=[100, 300, 1000])
    parser.add_argument("--samplers", nargs="+",
                        default=["spectral", "density", "rp-cholesky", "kmeans", "uniform"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--out", default=None, help="JSON lines file for the rows")
    parser.add_argument("--summarise", nargs="*", default=None, help="only summarise these files")
    args = parser.parse_args()
    if args.summarise is not None:
        summarise([json.loads(line) for path in args.summarise for line in open(path) if line.strip()])
        return
    done = set()
    if args.out and Path(args.out).exists():
        for line in open(args.out):
            r = json.loads(line)
            done.add((r["dataset"], r["n_train"], r["m"], r["seed"], r["method"]))
    rows = []
    with threadpool_limits(1):
        for name in args.datasets:
            for seed in args.seeds:
                data = split(name, args.n_train, seed)
                n_train = data[0].shape[0]
                for m in args.m:
                    for method in ["Nystroem", *args.samplers]:
                        if (name, n_train, m, seed, method) in done:
                            continue
                        row = {"dataset": name, "n_train": n_train, "m": m, "seed": seed,
                               "method": method, **run_one(*data, method, m, seed)}
                        rows.append(row)
                        print(json.dumps(row), flush=True)
                        if args.out:
                            with open(args.out, "a") as f:
                                f.write(json.dumps(row) + "\n")
    summarise(rows)


if __name__ == "__main__":
    main()

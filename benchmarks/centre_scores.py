"""Do Nyström centres need the refined scores? The default scores against the density formula's.

    python benchmarks/centre_scores.py [--datasets ccpp casp] [--regs 1e-4 1e-6] [--seeds 0 1 2 3 4]

``SpectralLeverage(algorithm="auto")`` refines the density formula's scores by the full-scale
leverage where the formula is outside its regime (:mod:`spectral_leverage.spectral.full_scale`);
at n_train = 8000 with these λ it always does, and costs about ten times the density formula.
This asks whether the centres drawn from the refined scores are worth that: for each split of
:func:`centres.split` (n_train = 8000), kernel (Matérn 1.5 and RBF, ℓ = 1), λ and m ∈ {50, 200,
800}, ``NystromKRR`` is fitted on centres drawn from each of the two fitted samplers (the same
seed) and on uniform ones. Prints, per cell, the mean test RMSE of each, the paired ratio
density / refined (mean ± standard error over seeds), the median CPU seconds of each fit of the
scores and the mean number of distinct centres. ``--out`` appends the rows as JSON lines.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections import defaultdict

import numpy as np
from centres import KERNELS, split
from threadpoolctl import threadpool_limits

from spectral_leverage import NystromKRR, SpectralLeverage

ALGORITHMS = ("auto", "density")


def rmse(model, X, y) -> float:
    return float(np.sqrt(np.mean((model.predict(X) - y) ** 2)))


def run(name: str, seed: int, kernel_name: str, reg: float, ms) -> list[dict]:
    X, y, X_test, y_test = split(name, 8000, seed)
    kernel = KERNELS[kernel_name]
    fitted = {}
    for algorithm in ALGORITHMS:
        start = time.process_time()
        scores = SpectralLeverage(kernel, reg, algorithm=algorithm, random_state=seed).fit(X)
        fitted[algorithm] = (scores, time.process_time() - start)
    rows = []
    for m in ms:
        row = dict(dataset=name, seed=seed, kernel=kernel_name, reg=reg, m=m,
                   refined_by=fitted["auto"][0].algorithm_)
        for algorithm, (scores, seconds) in fitted.items():
            model = NystromKRR(kernel, reg, m, sampler=scores, random_state=seed).fit(X, y)
            row[algorithm] = rmse(model, X_test, y_test)
            row[f"{algorithm}_s"], row[f"{algorithm}_m"] = seconds, int(model.centers_.shape[0])
        row["uniform"] = rmse(NystromKRR(kernel, reg, m, sampler="uniform", random_state=seed).fit(X, y),
                              X_test, y_test)
        rows.append(row)
    return rows


def summarise(rows: list[dict]) -> None:
    cells = defaultdict(list)
    for row in rows:
        cells[(row["dataset"], row["kernel"], row["reg"], row["m"])].append(row)
    print(f"{'data':5} {'kernel':9} {'λ':>6} {'m':>4} {'seeds':>5} {'refined':>8} {'density':>8} "
          f"{'uniform':>8} {'density / refined':>18} {'CPU s refined':>14} {'density':>8} {'distinct':>10}")
    for (name, kernel, reg, m), group in sorted(cells.items()):
        refined, density, uniform = (np.array([r[k] for r in group]) for k in ("auto", "density", "uniform"))
        ratio = density / refined
        spread = ratio.std(ddof=1) / np.sqrt(ratio.size) if ratio.size > 1 else float("nan")
        seconds = [np.median([r[f"{a}_s"] for r in group]) for a in ALGORITHMS]
        distinct = [np.mean([r[f"{a}_m"] for r in group]) for a in ALGORITHMS]
        print(f"{name:5} {kernel:9} {reg:6.0e} {m:4d} {len(group):5d} {refined.mean():8.4f} "
              f"{density.mean():8.4f} {uniform.mean():8.4f} {ratio.mean():9.4f} ± {spread:.4f} "
              f"{seconds[0]:14.2f} {seconds[1]:8.2f} {distinct[0]:4.0f}/{distinct[1]:<4.0f}")

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["ccpp", "casp"])
    parser.add_argument("--kernels", nargs="+", default=list(KERNELS), choices=list(KERNELS))
    parser.add_argument("--regs", nargs="+", type=float, default=[1e-4, 1e-6])
    parser.add_argument("--m", nargs="+", type=int, default=[50, 200, 800])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads")
    parser.add_argument("--out", default=None, help="JSON-lines file the rows are appended to")
    parser.add_argument("--summarise", nargs="*", default=None, metavar="FILE",
                        help="only print the table of these JSON-lines files")
    args = parser.parse_args()
    if args.summarise is not None:
        summarise([json.loads(line) for path in args.summarise for line in open(path)])
        return
    warnings.filterwarnings("ignore", category=UserWarning)  # the scores' regime warnings
    rows = []
    with threadpool_limits(args.threads):
        for name in args.datasets:
            for seed in args.seeds:
                for kernel_name in args.kernels:
                    for reg in args.regs:
                        new = run(name, seed, kernel_name, reg, args.m)
                        rows += new
                        if args.out:
                            with open(args.out, "a") as out:
                                out.writelines(json.dumps(row) + "\n" for row in new)
    summarise(rows)


if __name__ == "__main__":
    main()

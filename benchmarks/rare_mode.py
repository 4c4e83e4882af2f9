"""Centres on a design with a rare mode (issue 36, acceptance 3): do they find the 0.1 % of rows far away?

    python benchmarks/rare_mode.py --n 1000000 --m 512 1024 --seeds 0 1 2 --out runs.jsonl
    python benchmarks/rare_mode.py --summarise runs.jsonl

The design: n training and ``--n-test`` test rows in d = 3, a fraction ``--rare`` of them (0.1 %)
from a far mode, N((8, 0, 0), 0.3² I), the rest from N(0, I); the target
sin(2 x₁) + x₂ x₃ + 4 exp(−‖x − (8, 0, 0)‖² / 2) sin(3 x₂) (a bump that only the far mode sees) plus
noise N(0, 0.1²). ``NystromKRR(Matern(1, nu=1.5), 1e-6, n_centers=m, sampler=s)`` for each sampler
``s``: ``"auto"`` (the default: the race of greedy and randomly pivoted Cholesky on a row
subsample and k-means on every row below 800 centres, k-means from there), ``"uniform"``, and
the subsampled pivotings alone (``"rp-cholesky"``, ``"greedy-cholesky"``, which pivot among a
uniform subsample of rows when the n × m factor would pass half of ``memory_budget``). Per row:
the test RMSE on all test rows and on the far mode's, the centres in the far mode, the fit's CPU
seconds (one BLAS thread). ``--out`` appends finished rows and skips those already there.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import numpy as np
from _rows import append_row, parse_run_args, read_rows
from sklearn.gaussian_process.kernels import Matern
from threadpoolctl import threadpool_limits

from spectral_leverage import NystromKRR

FAR = np.array([8.0, 0.0, 0.0])
SAMPLERS = ("auto", "uniform", "rp-cholesky", "greedy-cholesky")


def design(n: int, rare: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, whether each row is from the far mode)."""
    far = rng.random(n) < rare
    X = rng.normal(size=(n, 3))
    X[far] = FAR + 0.3 * X[far]
    bump = 4 * np.exp(-0.5 * np.sum((X - FAR) ** 2, axis=1)) * np.sin(3 * X[:, 1])
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + bump + 0.1 * rng.normal(size=n)
    return X, y, far


def run(args, seed: int, m: int, sampler: str) -> dict:
    X, y, _ = design(args.n, args.rare, np.random.default_rng(seed))
    X_test, y_test, far_test = design(args.n_test, args.rare, np.random.default_rng(10**6 + seed))
    start = time.process_time()
    model = NystromKRR(Matern(1.0, nu=1.5), 1e-6, n_centers=m, sampler=sampler, random_state=seed).fit(X, y)
    seconds = time.process_time() - start
    error = model.predict(X_test) - y_test
    in_far = np.linalg.norm(model.centers_ - FAR, axis=1) < 2.0
    return dict(n=args.n, rare=args.rare, seed=seed, m=m, sampler=sampler, sampler_=str(model.sampler_),
                rmse=float(np.sqrt(np.mean(error**2))),
                rmse_far=float(np.sqrt(np.mean(error[far_test] ** 2))),
                far_test_rows=int(far_test.sum()), far_centres=int(in_far.sum()), seconds=seconds)


def summarise(rows: list) -> None:
    cells = defaultdict(lambda: defaultdict(list))
    for row in rows:
        cells[(row["n"], row["m"])][row["sampler"]].append(row)
    print("| n | m | sampler | test RMSE (mean over seeds) | far-mode RMSE | far-mode centres | "
          "fit s (median) |")
    print("|---|---|---|---|---|---|---|")
    for (n, m), by_sampler in sorted(cells.items()):
        for sampler in SAMPLERS:
            runs = by_sampler.get(sampler)
            if runs:
                print(f"| {n} | {m} | {sampler} | {np.mean([r['rmse'] for r in runs]):.4f} | "
                      f"{np.mean([r['rmse_far'] for r in runs]):.3f} | "
                      f"{np.mean([r['far_centres'] for r in runs]):.1f} | "
                      f"{np.median([r['seconds'] for r in runs]):.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10**6)
    parser.add_argument("--n-test", type=int, default=10**5)
    parser.add_argument("--rare", type=float, default=1e-3)
    parser.add_argument("--m", nargs="+", type=int, default=[512, 1024])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--samplers", nargs="+", default=list(SAMPLERS), choices=SAMPLERS)
    args = parse_run_args(parser, summarise)
    if args is None:
        return
    done = {(r["n"], r["rare"], r["seed"], r["m"], r["sampler"]) for r in read_rows(args.out)}
    for m in args.m:
        for seed in args.seeds:
            for sampler in args.samplers:
                if (args.n, args.rare, seed, m, sampler) in done:
                    continue
                with threadpool_limits(1):
                    append_row(args.out, run(args, seed, m, sampler))


if __name__ == "__main__":
    main()

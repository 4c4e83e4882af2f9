"""Thread settings against each other: the default, BLAS held to one thread, n_jobs=1, n_jobs=-1.

Each fit runs in a fresh process (so that BLAS's pools and the package's threads start clean), the
settings alternate within each repeat, and the table gives medians of the workers' own fit times
and the ratio of the default to the best of {BLAS limited to 1 thread, BLAS unlimited with
``n_jobs=1``}, from the same run. ``--busy`` repeats everything beside a competing busy process
(``python -c "while True: pass"``), stopped at the end. The load average before and after each
phase says how quiet the machine was::

    python benchmarks/threads.py --busy            # SpectralLeverage d = 3, 5, 8 and NystromKRR
    python benchmarks/threads.py --n 20000 --repeats 1 --problems spectral-d3   # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SETTINGS = {
    "default": [],
    "blas=1": ["--blas", "1"],
    "n_jobs=1": ["--n-jobs", "1"],
    "n_jobs=-1": ["--n-jobs", "-1"],
}
PROBLEMS = ("spectral-d3", "spectral-d5", "spectral-d8", "nystrom")


def worker(args) -> None:
    """One fit, its time printed as JSON on stdout."""
    import numpy as np
    from sklearn.gaussian_process.kernels import Matern
    from threadpoolctl import threadpool_limits

    from spectral_leverage import NystromKRR, SpectralLeverage
    from spectral_leverage.datasets import make_bimodal

    kernel, n = Matern(0.5, nu=1.5), args.n
    if args.problem == "nystrom":
        X = make_bimodal(n, 3, random_state=np.random.default_rng(0))
        y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 - X[:, 2]
        model = NystromKRR(kernel, n ** -0.75, args.m, random_state=0, n_jobs=args.n_jobs)
        fit = lambda: model.fit(X, y)  # noqa: E731
    else:
        X = make_bimodal(n, int(args.problem[-1]), random_state=np.random.default_rng(0))
        model = SpectralLeverage(kernel, n ** -0.75, random_state=0, n_jobs=args.n_jobs)
        fit = lambda: model.fit(X)  # noqa: E731
    with threadpool_limits(args.blas) if args.blas else _nothing():
        start = time.perf_counter()
        fit()
        seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds}))


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def run_one(problem: str, setting: str, args) -> float:
    command = [sys.executable, __file__, "--worker", "--problem", problem, "--n", str(args.n),
               "--m", str(args.m), *SETTINGS[setting]]
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout, check=True)
    except subprocess.TimeoutExpired:
        return float("inf")
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def phase(label: str, args) -> list[dict]:
    load_before = os.getloadavg()
    times = {(p, s): [] for p in args.problems for s in SETTINGS}
    for _ in range(args.repeats):
        for problem in args.problems:
            for setting in SETTINGS:
                times[problem, setting].append(run_one(problem, setting, args))
    load_after = os.getloadavg()
    rows = []
    for problem in args.problems:
        med = {s: statistics.median(times[problem, s]) for s in SETTINGS}
        best = min(med["blas=1"], med["n_jobs=1"])
        rows.append({"condition": label, "problem": problem, "medians": med, "runs": {
            s: times[problem, s] for s in SETTINGS}, "default/best": med["default"] / best})
    print(f"\n{label}: load average {load_before[0]:.1f} before, {load_after[0]:.1f} after "
          f"({os.cpu_count()} cores), {args.repeats} repeats, n = {args.n}, m = {args.m}")
    header = " | ".join(f"{s} s" for s in SETTINGS)
    print(f"| problem | {header} | default / best of (blas=1, n_jobs=1) |")
    print("|---" * (len(SETTINGS) + 2) + "|")
    for row in rows:
        cells = " | ".join(f"{row['medians'][s]:.2f}" for s in SETTINGS)
        print(f"| {row['problem']} | {cells} | {row['default/best']:.2f} |")
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--problem", choices=PROBLEMS, help=argparse.SUPPRESS)
    parser.add_argument("--blas", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--n-jobs", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--problems", nargs="+", choices=PROBLEMS, default=list(PROBLEMS))
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--m", type=int, default=1000, help="NystromKRR's n_centers")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per fit")
    parser.add_argument("--busy", action="store_true", help="also run beside a busy process")
    parser.add_argument("--skip-idle", action="store_true", help="with --busy: only that phase")
    parser.add_argument("--json", default=None, help="write every run here")
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return
    rows = [] if args.skip_idle else phase("idle", args)
    if args.busy:
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            rows += phase("beside a busy process", args)
        finally:
            busy.kill()
            busy.wait()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

"""Time and peak memory of NystromKRR at large n: the n×m kernel matrix is never held at once.

Fits NystromKRR on synthetic data (X ~ U[0,1]^d, f(x) = sin(4 x_1) + x_2² [− x_3], noise 0.5) and
prints fit time, predict time and peak resident memory (``resource.getrusage``). The peak should be
about the data (8·n·(d+2) bytes) + two m×m matrices (16·m² bytes) + ``--memory-budget``, far below
the 8·n·m bytes of the full kernel matrix. Run it under ``/usr/bin/time -v`` for an outside view::

    /usr/bin/time -v python benchmarks/nystrom_memory.py --n 1000000 --d 3 --m 2000
"""

from __future__ import annotations

import argparse
import logging
import resource
import sys
import time

import numpy as np
from sklearn.gaussian_process.kernels import Matern

from spectral_leverage._blocks import DEFAULT_MEMORY_BUDGET
from spectral_leverage.krr.nystrom import NystromKRR


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="training points")
    parser.add_argument("--d", type=int, default=3, help="dimension")
    parser.add_argument("--m", type=int, default=2000, help="n_centers (draws)")
    parser.add_argument("--n-test", type=int, default=100_000, help="points to predict")
    parser.add_argument("--reg", type=float, default=None, help="λ (default n^(-3/4))")
    parser.add_argument("--length-scale", type=float, default=0.5)
    parser.add_argument("--nu", type=float, default=1.5)
    parser.add_argument("--sampler", default="spectral")
    parser.add_argument("--solver", default="auto", choices=["auto", "direct", "cg"])
    parser.add_argument("--memory-budget", type=int, default=DEFAULT_MEMORY_BUDGET, help="bytes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--verbose", action="store_true", help="progress bars and stage timings")
    args = parser.parse_args(argv)
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")

    rng = np.random.default_rng(args.seed)
    X = rng.uniform(size=(args.n, args.d))
    f = np.sin(4 * X[:, 0]) + (X[:, 1] ** 2 if args.d > 1 else 0) - (X[:, 2] if args.d > 2 else 0)
    y = f + 0.5 * rng.normal(size=args.n)
    reg = args.reg if args.reg is not None else args.n ** -0.75
    rss_data = peak_rss_mb()

    model = NystromKRR(Matern(length_scale=args.length_scale, nu=args.nu), reg, args.m,
                       sampler=args.sampler, solver=args.solver, memory_budget=args.memory_budget,
                       random_state=args.seed, verbose=args.verbose)
    start = time.perf_counter()
    model.fit(X, y)
    fit_time = time.perf_counter() - start
    rss_fit = peak_rss_mb()

    X_test = X[: args.n_test]
    start = time.perf_counter()
    pred = model.predict(X_test)
    predict_time = time.perf_counter() - start
    m = len(model.center_indices_)
    risk = float(np.mean((pred - f[: args.n_test]) ** 2))

    print(f"n={args.n} d={args.d} draws={args.m} unique centres m={m} reg={reg:.3g} "
          f"sampler={args.sampler} solver={model.solver_} (cg iterations {model.n_iter_})")
    print(f"fit time      {fit_time:9.2f} s")
    print(f"predict time  {predict_time:9.2f} s  ({len(X_test)} points)")
    print(f"in-sample risk on the predicted points ‖f̂ − f*‖²/n = {risk:.4g}")
    print(f"peak RSS      {peak_rss_mb():9.1f} MiB  (after data {rss_data:.1f} MiB, after fit "
          f"{rss_fit:.1f} MiB)")
    print(f"for scale:    full K_nJ would be {8 * args.n * m / 2**20:.1f} MiB; m×m matrices "
          f"{16 * m * m / 2**20:.1f} MiB; memory budget {args.memory_budget / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()

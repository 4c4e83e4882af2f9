"""The ``spectral-leverage`` command.

Sub-commands
------------
``demo``
    Spectral leverage scores on built-in synthetic data (no download), compared with exact ones.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time

import numpy as np
from sklearn.gaussian_process.kernels import Matern

from .exact import exact_leverage
from .leverage import SpectralLeverage
from .metrics import score_accuracy

__all__ = ["main"]


def _bimodal(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    in_mode = rng.uniform(size=n) < 0.1
    return np.where(in_mode[:, None], rng.normal(1.5, 0.05, (n, d)), rng.uniform(size=(n, d)))


def _demo(args: argparse.Namespace) -> int:
    rng = np.random.default_rng(args.seed)
    n, kernel = args.n, Matern(length_scale=0.5, nu=1.5)
    reg = n**-0.75
    print(f"Spectral vs exact ridge leverage: Matern(nu=1.5, length_scale=0.5), reg = n^-3/4, n = {n}")
    print(f"{'design':14s} {'spectral s':>10s} {'exact s':>8s} {'mean R-ACC':>10s} {'5th':>6s} "
          f"{'95th':>6s} {'Spearman':>8s} {'d_eff ratio':>11s}")
    for d in (1, 3):
        X = _bimodal(n, d, rng)
        start = time.perf_counter()
        approx = SpectralLeverage(kernel, reg, random_state=args.seed, verbose=args.verbose).fit(X).scores_
        t_spectral = time.perf_counter() - start
        start = time.perf_counter()
        exact = n * exact_leverage(X, kernel, reg)
        t_exact = time.perf_counter() - start
        acc = score_accuracy(approx, exact)
        print(f"{f'bimodal {d}-D':14s} {t_spectral:10.2f} {t_exact:8.2f} {acc['mean']:10.3f} "
              f"{acc['p05']:6.3f} {acc['p95']:6.3f} {acc['spearman']:8.3f} {acc['scale']:11.3f}")
    print("R-ACC = (spectral probability) / (exact probability) per point; 1 is perfect.")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``spectral-leverage`` command; returns the exit code."""
    parser = argparse.ArgumentParser(prog="spectral-leverage", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="spectral vs exact scores on built-in synthetic data")
    demo.add_argument("--n", type=int, default=4000, help="points per design (default 4000)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--verbose", action="store_true", help="progress bars and stage timings")
    demo.set_defaults(run=_demo)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING)
    if getattr(args, "n", 2) < 2:
        parser.error("--n must be at least 2")
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())

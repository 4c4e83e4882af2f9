"""``demo``: spectral against exact scores on built-in synthetic data (no download)."""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.gaussian_process.kernels import Matern

from ..datasets import make_bimodal
from ..io import InputError
from ..metrics import score_accuracy
from ..samplers.exact import exact_leverage
from ..spectral import SpectralLeverage

__all__ = ["add_parser"]


def _demo(args: argparse.Namespace) -> int:
    if args.n < 2:
        raise InputError(f"--n must be at least 2, got {args.n}")
    rng = np.random.default_rng(args.seed)
    n, kernel = args.n, Matern(length_scale=0.5, nu=1.5)
    reg = n**-0.75
    print(f"Spectral vs exact ridge leverage: Matern(nu=1.5, length_scale=0.5), reg = n^-3/4, n = {n}")
    print(f"{'design':14s} {'spectral s':>10s} {'exact s':>8s} {'mean R-ACC':>10s} {'5th':>6s} "
          f"{'95th':>6s} {'Spearman':>8s} {'d_eff ratio':>11s}")
    for d in (1, 3):
        X = make_bimodal(n, d, random_state=rng)
        start = time.perf_counter()
        approx = SpectralLeverage(kernel, reg, random_state=args.seed).fit(X).scores_
        t_spectral = time.perf_counter() - start
        start = time.perf_counter()
        exact = n * exact_leverage(X, kernel, reg)
        t_exact = time.perf_counter() - start
        acc = score_accuracy(approx, exact)
        print(f"{f'bimodal {d}-D':14s} {t_spectral:10.2f} {t_exact:8.2f} {acc['mean']:10.3f} "
              f"{acc['p05']:6.3f} {acc['p95']:6.3f} {acc['spearman']:8.3f} {acc['scale']:11.3f}")
    print("R-ACC = (spectral probability) / (exact probability) per point; 1 is perfect.")
    return 0


def add_parser(sub) -> None:
    demo = sub.add_parser("demo", help="spectral vs exact scores on built-in synthetic data")
    demo.add_argument("--n", type=int, default=4000, help="points per design (default 4000)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.set_defaults(run=_demo, quiet=False)

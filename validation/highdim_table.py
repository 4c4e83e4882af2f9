"""The default against exact scores in many dimensions: isotropic standard normal rows.

    python validation/highdim_table.py [--n 8000] [--d 16,32] [--cells rbf:1,matern1.5:4]
                                       [--reg-exponents 0.75,1] [--cache DIR]

For each d and cell ``family:ℓ`` (one list for every d, or ``--cells`` per d separated by ``;``)
and λ = n^-a it prints the exact effective dimension and mean leverage, the default's path
(``algorithm_``), R-ACC's 5th/95th percentiles with the effective-dimension ratio, and the fit's
process CPU seconds. Exact scores cost an n×n Cholesky factorisation (about 20 s at n = 8000 on
one core); ``--cache`` keeps them.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from spectral_leverage import SpectralLeverage
from spectral_leverage.metrics import score_accuracy
from spectral_leverage.validation.grid import cached_exact_scores, cell_text, make_kernel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8000)
    parser.add_argument("--d", default="16,32")
    parser.add_argument("--cells", default="rbf:1,rbf:4,matern1.5:1,matern1.5:4;"
                                            "rbf:2,rbf:6,matern1.5:2,matern1.5:6")
    parser.add_argument("--reg-exponents", default="0.75,1")
    parser.add_argument("--cache", type=Path, default=None, help="folder for the exact scores")
    args = parser.parse_args()
    dims = [int(v) for v in args.d.split(",")]
    cells = args.cells.split(";")
    cells = cells * len(dims) if len(cells) == 1 else cells
    warnings.simplefilter("ignore", UserWarning)
    print("| d | kernel | ℓ | λ | d_eff | mean leverage | path | default | CPU s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d, per_d in zip(dims, cells, strict=True):
        X = np.random.default_rng(0).standard_normal((args.n, d))
        for cell in per_d.split(","):
            family, ell = cell.split(":")
            for a in (float(v) for v in args.reg_exponents.split(",")):
                kernel, reg = make_kernel(family, float(ell)), args.n ** -a
                exact = cached_exact_scores(X, kernel, reg, args.cache, f"normal{d}_{family}_{ell}_{a:g}")
                start = time.process_time()
                fit = SpectralLeverage(kernel, reg, random_state=0).fit(X)
                seconds = time.process_time() - start
                print(f"| {d} | {family} | {ell} | n^-{a:g} | {exact.sum() / args.n:.0f} | "
                      f"{exact.mean() / args.n:.3f} | {fit.algorithm_} | "
                      f"{cell_text(score_accuracy(fit.scores_, exact))} | {seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main()

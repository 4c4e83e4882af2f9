"""The middle regime: the default against exact scores at one n, with where its misses lie.

    python validation/middle_table.py [--n 8000] [--data casp,normal8,ccpp]
        [--cells matern1.5:0.5,...] [--reg-exponents 1] [--variants 1024/32,2048/32] [--cache DIR]

For each data set (``normal<d>``: standard normal in d dimensions, seed 0; ``bimodal<d>``:
:func:`~spectral_leverage.datasets.make_bimodal`, seed 0, not standardised; ``manifold<d>``: a 4-D
cube in d dimensions with noise 0.01 (:func:`~spectral_leverage.datasets.make_embedded`, seed 0),
standardised; a name: that CSV of
``../shared/data``, standardised, n rows drawn with seed 0), cell ``family:ℓ`` and λ = n^-a (a in
``--reg-exponents``, 1 by default) it prints the plan (``full_scale_plan``) and path of the
default, R-ACC's 5th/95th percentiles and the effective-dimension ratio of the default and of the
density formula, the share of rows over 1.15, the default's mean ratio to exact by exact-leverage
decile group (lowest tenth, 10-50 %, 50-90 %, top tenth), the correlation of the log ratio with
the log distance to the 32nd neighbour (in length scales) and the fit's wall and process CPU
seconds; then each ``--variants`` plan (pivots/neighbours) forced. Exact scores cost an n×n
Cholesky factorisation (about 20 s at n = 8000 on one core); ``--cache`` keeps them.
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
from pykdtree.kdtree import KDTree

from spectral_leverage import SpectralLeverage
from spectral_leverage.metrics import score_accuracy
from spectral_leverage.spectral import leverage
from spectral_leverage.spectral.plan import full_scale_plan
from spectral_leverage.validation.data import DESIGNS, csv_dataset, design_rows
from spectral_leverage.validation.grid import cached_exact_scores, cell_text, make_kernel

CELLS = ",".join(f"{f}:{ell}" for f in ("matern1.5", "matern2.5", "rbf") for ell in ("0.5", "1", "2"))


def data(name: str, n: int, shared: Path) -> np.ndarray:
    for design in DESIGNS:  # normal8, bimodal8, manifold16, ...
        if name.startswith(design):
            return design_rows(design, n, int(name[len(design):]))
    return csv_dataset(shared / f"{name}.csv", length_scale=1.0).draw(n, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8000)
    parser.add_argument("--data", default="casp,normal8,ccpp")
    parser.add_argument("--cells", default=CELLS)
    parser.add_argument("--reg-exponents", default="1")
    parser.add_argument("--variants", default="")
    shared = Path(__file__).resolve().parents[2] / "shared" / "data"
    parser.add_argument("--shared", type=Path, default=shared)
    parser.add_argument("--cache", type=Path, default=None, help="folder for the exact scores")
    args = parser.parse_args()
    variants = [tuple(map(int, v.split("/"))) for v in args.variants.split(",") if v]
    warnings.simplefilter("ignore", UserWarning)
    for name in args.data.split(","):
        X = data(name, args.n, args.shared)
        n = X.shape[0]
        for cell, a in itertools.product(args.cells.split(","), map(float, args.reg_exponents.split(","))):
            family, ell = cell.split(":")
            kernel, reg = make_kernel(family, float(ell)), n**-a
            exact = cached_exact_scores(X, kernel, reg, args.cache, f"{name}_{family}_{ell}_{a:g}")
            start, cpu = time.perf_counter(), time.process_time()
            default = SpectralLeverage(kernel, reg, random_state=0).fit(X)
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
            density = SpectralLeverage(kernel, reg, algorithm="density", random_state=0).fit(X)
            plan = full_scale_plan(density.effective_dimension_, n, density.intrinsic_dim_)
            ratio = default.scores_ / exact
            group = np.digitize(exact, np.quantile(exact, [0.1, 0.5, 0.9]))
            by_group = " ".join(f"{np.mean(ratio[group == g]):.2f}" for g in range(4))
            reach = KDTree(X / float(ell)).query(X / float(ell), k=33)[0][:, -1]
            corr = np.corrcoef(np.log(ratio), np.log(reach))[0, 1]
            over = np.mean(ratio > 1.15)
            print(f"{name} d={X.shape[1]} {family} l={ell} lambda=n^-{a:g} "
                  f"mean leverage {exact.mean() / n:.3f} "
                  f"plan {plan} -> {default.algorithm_} "
                  f"{cell_text(score_accuracy(default.scores_, exact))}; density "
                  f"{cell_text(score_accuracy(density.scores_, exact))}; over 1.15 {over:.3f}; "
                  f"by exact-leverage group {by_group}; corr(log ratio, log reach) {corr:.2f}; "
                  f"{seconds:.1f} s ({cpu:.1f} CPU s)", flush=True)
            for variant in variants:
                start = time.perf_counter()
                with mock.patch.object(leverage, "full_scale_plan", return_value=variant):
                    forced = SpectralLeverage(kernel, reg, algorithm="full-scale", random_state=0).fit(X)
                print(f"    {variant[0]}/{variant[1]}: {cell_text(score_accuracy(forced.scores_, exact))} "
                      f"{time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()

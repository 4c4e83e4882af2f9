"""Speed at equal accuracy: the default scores against BLESS and Recursive-RLS with their
oversampling raised (BLESS's ``qbar``, Recursive-RLS's ``oversampling``), every fit against exact
scores, so that a faster competitor's time is read beside what its scores are worth.

    python benchmarks/equal_accuracy.py --n 20000 --d 8 --reg-exponent 0.5 \
        --cells matern1.5:1,rbf:1,rbf:2 --cache DIR [--oversampling 2,5,10,20,40]

Standard normal rows (seed 0); exact scores by Cholesky (``cached_exact_scores``: about 100 s each
at 20 000 rows on one core, kept in ``--cache``). Each fit runs in this process, timed in process
CPU seconds (set ``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1`` for one thread). Prints a row per fit
(R-ACC 5th/95th percentile and effective-dimension ratio against exact scores, and whether that is
within the validation's band, ``validation.grid.is_ok``) and appends it to ``--out`` (JSON lines)
as it finishes; after each setting, every method's cheapest fit within the band. A fit that refuses
its memory budget is reported as such, and the competitor's larger settings are skipped.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from _rows import accuracy_fields

from spectral_leverage import SpectralLeverage
from spectral_leverage.samplers.bless import BLESS
from spectral_leverage.samplers.recursive_rls import RecursiveRLS
from spectral_leverage.validation.grid import cached_exact_scores, make_kernel

#: the competitors and the keyword of their oversampling (None: the estimator's own default); each
#: scored both ways (``scoring``: the leverage of their dictionary's Nyström approximation, the
#: project's default, and the literature's weighted-dictionary estimator)
COMPETITORS = {"bless": (BLESS, "qbar"), "recursive-rls": (RecursiveRLS, "oversampling")}
SCORINGS = ("nystrom", "weighted")


def fit_row(estimator, X: np.ndarray, exact: np.ndarray) -> dict:
    """CPU seconds of ``estimator.fit(X)`` and its scores' accuracy against ``exact``."""
    start = time.process_time()
    try:
        estimator.fit(X)
    except ValueError as err:  # a dictionary past the memory budget
        return {"error": str(err).splitlines()[0][:100]}
    accuracy = accuracy_fields(estimator.scores_, exact)
    return {"cpu_seconds": round(time.process_time() - start, 2), **accuracy,
            **({"algorithm": estimator.algorithm_} if hasattr(estimator, "algorithm_") else {})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--d", type=int, default=8)
    parser.add_argument("--reg-exponent", type=float, default=0.5, help="lambda = n^-a")
    parser.add_argument("--cells", default="matern1.5:1,rbf:1,rbf:2", help="family:length_scale,...")
    parser.add_argument("--oversampling", default="default,5,10,20,40",
                        help="the competitors' qbar / oversampling values ('default': their own)")
    parser.add_argument("--cache", type=Path, default=None, help="folder for the exact scores")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("results_equal_accuracy.jsonl"))
    args = parser.parse_args()
    X = np.random.default_rng(0).normal(size=(args.n, args.d))
    reg = args.n ** -args.reg_exponent
    values = [None if v == "default" else float(v) for v in args.oversampling.split(",")]
    warnings.simplefilter("ignore")  # the estimators' warnings are about the accuracy measured here
    print(f"n = {args.n}, d = {args.d}, standard normal rows, lambda = n^-{args.reg_exponent:g}; "
          "CPU s, 5th/95th percentile and d_eff ratio against exact scores")
    for cell in args.cells.split(","):
        family, length_scale = cell.split(":")
        kernel = make_kernel(family, float(length_scale))
        exact = cached_exact_scores(X, kernel, reg, args.cache,
                                    f"normal{args.d}_{family}_{length_scale}_{args.reg_exponent:g}")
        base = {"n": args.n, "d": args.d, "reg_exponent": args.reg_exponent, "kernel": family,
                "length_scale": float(length_scale), "exact_d_eff": round(float(exact.mean()), 2)}
        runs = [("default", None, SpectralLeverage(kernel, reg, random_state=0))]
        for name, (cls, key) in COMPETITORS.items():
            for scoring in SCORINGS:
                runs += [(f"{name} {scoring}", value, cls(kernel, reg, scoring=scoring, random_state=0,
                                                          **({} if value is None else {key: value})))
                         for value in values]
        refused, rows = set(), []
        for name, value, estimator in runs:
            if name in refused:
                continue
            row = {**base, "method": name, "oversampling": value, **fit_row(estimator, X, exact)}
            refused |= {name} if "error" in row else set()
            found = row["error"] if "error" in row else (
                f"{row['cpu_seconds']:8.2f} s  {row['p05']:.3f}/{row['p95']:.3f} ({row['d_eff_ratio']:.3f})")
            print(f"{cell:>14} {name:>22} {'' if value is None else value:>5} {found}", flush=True)
            with args.out.open("a") as out:
                out.write(json.dumps(row) + "\n")
            rows.append(row)
        for name in dict.fromkeys(row["method"] for row in rows):
            within = [row for row in rows if row["method"] == name and row.get("ok")]
            best = min(within, key=lambda row: row["cpu_seconds"], default=None)
            setting = "default" if best is None or best["oversampling"] is None else best["oversampling"]
            found = "none" if best is None else f"{setting}, {best['cpu_seconds']:.2f} s"
            print(f"{cell:>14} {name:>22} cheapest within the band: {found}", flush=True)


if __name__ == "__main__":
    main()

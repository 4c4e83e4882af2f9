r"""Nyström-type estimates at the low-rank end: what they cost against the default and BLESS.

    python benchmarks/low_rank_estimates.py --n 20000 --d 8 --cells rbf:2,matern1.5:1 --cache DIR
    python benchmarks/low_rank_estimates.py --n 100000 --d 8 --cells rbf:2,matern1.5:1   # times only

Standard normal rows (seed 0), λ = n^-a. Per setting, each fit in this process, timed in process CPU
seconds (set ``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1`` for one thread), and with ``--cache`` its
5th/95th percentile and effective-dimension ratio against exact scores (``cached_exact_scores``;
about 100 s each at 20 000 rows) and whether that is in the validation's band:

* ``default``: ``SpectralLeverage`` as shipped;
* ``bless-w``: BLESS at its default q̄, scored by the weighted-dictionary estimator (its paper's);
* ``fitc m``: m pivots of randomly pivoted Cholesky (``subsample_pivots``, the full-scale path's
  draw), and every row's leverage under :math:`K \approx FF^\top + \mathrm{diag}(R)`, the residual
  taken as independent between rows (FITC; Snelson & Ghahramani 2005):
  :math:`l_i = r_i/d_i + \gamma\, f_i^\top M^{-1} f_i / d_i^2`, :math:`d_i = r_i + \gamma`,
  :math:`M = I + F^\top D^{-1} F` (Woodbury), M summed over the pivots' subsample and scaled to n.
  It is exact where the residual is diagonal and too high by the residual's correlations;
* ``uniform s``: s rows drawn uniformly, each row scored by the weighted-dictionary estimator
  (``samplers._dictionary.weighted_rls``, weights n/s).

The two Nyström-type estimates are measured here, not offered by the package: they cost
:math:`n m^2` (:math:`n s^2`) a fit, BLESS's own final pass (docs/performance.md, "The low-rank
end in 8 dimensions"). Rows are appended to ``--out`` (JSON lines) as they finish.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from functools import partial
from pathlib import Path

import numpy as np
from _rows import accuracy_fields
from scipy.linalg import cholesky, solve_triangular

from spectral_leverage import SpectralLeverage
from spectral_leverage.pivoted_cholesky import subsample_pivots
from spectral_leverage.samplers._dictionary import weighted_rls
from spectral_leverage.samplers.bless import BLESS
from spectral_leverage.validation.grid import cached_exact_scores, make_kernel


def fitc_leverage(X: np.ndarray, kernel, reg: float, pivots: int, rng: np.random.Generator) -> np.ndarray:
    """n × the FITC leverage of every row of X from at most ``pivots`` pivots (module docstring)."""
    n, gamma = X.shape[0], X.shape[0] * reg
    drawn = subsample_pivots(X, kernel, reg, max_pivots=pivots, max_samples=2**14, memory_budget=2**30,
                             rng=rng)
    gram = kernel(drawn.rows)
    gram[np.diag_indices_from(gram)] += 1e-10 * np.trace(gram) / gram.shape[0]
    lower = cholesky(gram, lower=True)

    def factor(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        F = solve_triangular(lower, kernel(drawn.rows, rows), lower=True, check_finite=False)
        return F, np.maximum(kernel.diag(rows) - np.einsum("ij,ij->j", F, F), 0.0)

    F, r = factor(drawn.sample)
    scaled = F / np.sqrt(r + gamma)
    M = (n / drawn.sample.shape[0]) * (scaled @ scaled.T)
    M[np.diag_indices_from(M)] += 1.0
    inner = cholesky(M, lower=True)
    out = np.empty(n)
    for start in range(0, n, 8192):
        F, r = factor(X[start:start + 8192])
        Z = solve_triangular(inner, F, lower=True, check_finite=False)
        out[start:start + 8192] = r / (r + gamma) + gamma * np.einsum("ij,ij->j", Z, Z) / (r + gamma) ** 2
    return n * out


def uniform_leverage(X: np.ndarray, kernel, reg: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """n × the weighted-dictionary leverage of every row of X from ``size`` uniform rows."""
    n = X.shape[0]
    rows = np.sort(rng.choice(n, size, replace=False))
    return n * weighted_rls(X, kernel, X[rows], np.full(size, size / n), n * reg)


def fit_scores(estimator, X: np.ndarray) -> np.ndarray:
    """``estimator.fit(X).scores_`` (n × leverage)."""
    return estimator.fit(X).scores_


def timed(method, exact: np.ndarray | None) -> dict:
    """CPU seconds of ``method()`` (scores, n × leverage) and, against ``exact``, their accuracy."""
    start = time.process_time()
    scores = method()
    row = {"cpu_seconds": round(time.process_time() - start, 2), "d_eff": round(float(scores.mean()), 2)}
    return row if exact is None else row | accuracy_fields(scores, exact)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--d", type=int, default=8)
    parser.add_argument("--reg-exponent", type=float, default=0.5, help="lambda = n^-a")
    parser.add_argument("--cells", default="rbf:2,matern2.5:2,matern1.5:2,rbf:1,matern1.5:1,rbf:0.5")
    parser.add_argument("--pivots", default="128,256,512,1024", help="the FITC estimate's pivots")
    parser.add_argument("--dictionary", default="256,512,1024", help="the uniform dictionary's sizes")
    parser.add_argument("--cache", type=Path, default=None,
                        help="folder of exact scores (computed there when absent); without it, times only")
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).with_name("results_low_rank_estimates.jsonl"))
    args = parser.parse_args()
    X = np.random.default_rng(0).normal(size=(args.n, args.d))
    reg = args.n ** -args.reg_exponent
    warnings.simplefilter("ignore")  # the estimators' warnings are about the accuracy measured here
    print(f"n = {args.n}, d = {args.d}, standard normal rows, lambda = n^-{args.reg_exponent:g}; CPU s"
          + (", 5th/95th percentile (d_eff ratio) against exact scores" if args.cache else ""))
    for cell in args.cells.split(","):
        family, length_scale = cell.split(":")
        kernel = make_kernel(family, float(length_scale))
        exact = None if args.cache is None else cached_exact_scores(
            X, kernel, reg, args.cache, f"normal{args.d}_{family}_{length_scale}_{args.reg_exponent:g}")
        runs = [("default", partial(fit_scores, SpectralLeverage(kernel, reg, random_state=0), X)),
                ("bless-w", partial(fit_scores, BLESS(kernel, reg, scoring="weighted", random_state=0), X))]
        runs += [(f"fitc {m}", partial(fitc_leverage, X, kernel, reg, m, np.random.default_rng(0)))
                 for m in map(int, args.pivots.split(","))]
        runs += [(f"uniform {s}", partial(uniform_leverage, X, kernel, reg, s, np.random.default_rng(0)))
                 for s in map(int, args.dictionary.split(","))]
        for name, method in runs:
            row = {"n": args.n, "d": args.d, "reg_exponent": args.reg_exponent, "kernel": family,
                   "length_scale": float(length_scale), "method": name, **timed(method, exact)}
            found = f"d_eff {row['d_eff']:.1f}" if exact is None else (
                f"{row['p05']:.3f}/{row['p95']:.3f} ({row['d_eff_ratio']:.3f}){'' if row['ok'] else ' x'}")
            print(f"{cell:>14} {name:>12} {row['cpu_seconds']:8.2f} s  {found}", flush=True)
            with args.out.open("a") as out:
                out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

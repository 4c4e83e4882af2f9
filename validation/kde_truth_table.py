"""Density scores from the estimated density against those from the true one, in d dimensions.

    python validation/kde_truth_table.py [--n 100000] [--d 8] [--design normal|bimodal] [--out FILE]

Standard normal rows (or the same with half of them shifted by 4 along the first axis), whose
density is known: ``SpectralLeverage(algorithm="density")`` with its own density estimate against
the same with ``density=`` the true one, over Matérn ½, 3/2, 5/2 and RBF × ℓ ∈ {0.5, 1, 2} at
λ = n^-1/2 and the smaller λ of the grid. This isolates the density step's error from the
formula's: exact scores are out of reach at n = 10^5. One row per setting (5th/50th/95th
percentile of the ratio, the d_eff ratio, the fit's CPU seconds) printed and written as JSON lines.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from spectral_leverage import SpectralLeverage
from spectral_leverage.validation.grid import make_kernel

SETTINGS = ([(f, ell, 0.5) for f in ("matern0.5", "matern1.5", "matern2.5", "rbf") for ell in (0.5, 1.0, 2.0)]
            + [(f, ell, a) for a in (0.75, 1.0) for f in ("matern1.5", "rbf") for ell in (1.0, 2.0)])


def design(name: str, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, their true density)."""
    X = np.random.default_rng(0).normal(size=(n, d))
    centres = [np.zeros(d)]
    if name == "bimodal":
        X[: n // 2, 0] += 4.0
        centres.append(np.eye(d)[0] * 4.0)
    p = np.mean([np.exp(-0.5 * np.sum((X - c) ** 2, axis=1)) for c in centres], axis=0)
    return X, p / (2 * np.pi) ** (d / 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=8)
    parser.add_argument("--design", choices=("normal", "bimodal"), default="normal")
    parser.add_argument("--out", type=Path, default=Path("kde_truth.jsonl"))
    args = parser.parse_args()
    X, p = design(args.design, args.n, args.d)
    with args.out.open("a") as out:
        for family, ell, a in SETTINGS:
            kernel, reg = make_kernel(family, ell), args.n**-a
            fit = SpectralLeverage(kernel, reg, algorithm="density", random_state=0)
            truth = fit.set_params(density=p).fit(X).scores_
            start = time.process_time()
            scores = fit.set_params(density=None).fit(X).scores_
            seconds = time.process_time() - start
            ratio = scores / truth
            row = dict(design=args.design, n=args.n, d=args.d, kernel=family, length_scale=ell,
                       reg_exponent=a,
                       p5=float(np.percentile(ratio, 5)), p50=float(np.median(ratio)),
                       p95=float(np.percentile(ratio, 95)), d_eff_ratio=float(scores.sum() / truth.sum()),
                       cpu_seconds=seconds)
            print(f"{family:10s} {ell:4.1f} n^-{a:<4} {row['p5']:.3f}/{row['p50']:.3f}/{row['p95']:.3f} "
                  f"({row['d_eff_ratio']:.3f})  {seconds:.1f} CPU s", flush=True)
            out.write(json.dumps(row) + "\n")
            out.flush()


if __name__ == "__main__":
    main()

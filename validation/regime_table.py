"""Which estimate where: the density formula against the full-scale leverage's variants at one n,
against exact scores (the evidence behind ``spectral_leverage.spectral.plan.full_scale_plan``).

    python validation/regime_table.py [--data normal3,casp] [--n 20000]
        [--cells matern1.5:1:1,matern2.5:1:1,...] [--cache DIR]

For each data set (``normal<d>``: standard normal in d dimensions; a name: that CSV of
``../shared/data``, standardised, n rows drawn with seed 0) and cell ``family:ℓ:a`` (λ = n^-a)
it prints R-ACC's 5th/95th percentiles and the effective-dimension ratio of: the density formula
(``algorithm="density"``), pivots with the tail integral (512/0; the neighbours instead where the
residual outweighs the factor and n/m <= 16, as the library does), pivots with 32 neighbours
(512/32), the neighbours with a single pivot (1/32), a per-row rule (512/32's scores for the rows
whose density-formula leverage is 2/k = 1/16 or more, the density scores for the others; an
experiment, not a path of the library), and the default: its plan
(``full_scale_plan``), the path it took (``algorithm_``: the factor's count can keep the density
scores) and its scores. Each variant is
``SpectralLeverage(algorithm="full-scale")`` with its plan set, so it sees the library's density.
Exact scores cost an n×n Cholesky factorisation each (about 3 minutes at n = 20 000 on one core);
``--cache`` keeps them.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from unittest import mock

import numpy as np

from spectral_leverage import SpectralLeverage
from spectral_leverage.metrics import score_accuracy
from spectral_leverage.spectral import leverage
from spectral_leverage.spectral.plan import NEIGHBOURS_LEVERAGE, full_scale_plan
from spectral_leverage.validation.data import csv_dataset
from spectral_leverage.validation.grid import cached_exact_scores, cell_text, make_kernel

VARIANTS = ((512, 0), (512, 32), (1, 32))  # (pivots, neighbours)
CELLS = "matern1.5:1:1,matern2.5:1:1,rbf:0.5:1,matern1.5:0.5:1,matern0.5:1:1"


def data(name: str, n: int, shared: Path) -> np.ndarray:
    if name.startswith("normal"):
        return np.random.default_rng(0).normal(size=(n, int(name[len("normal"):])))
    return csv_dataset(shared / f"{name}.csv", length_scale=1.0).draw(n, 0)


def accuracy_text(scores: np.ndarray, exact: np.ndarray) -> str:
    return cell_text(score_accuracy(scores, exact))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="normal3,casp")
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--cells", default=CELLS)
    shared = Path(__file__).resolve().parents[2] / "shared" / "data"
    parser.add_argument("--shared", type=Path, default=shared)
    parser.add_argument("--cache", type=Path, default=None, help="folder for the exact scores")
    args = parser.parse_args()
    names = [f"{m}/{k}" for m, k in VARIANTS]
    print("| data | kernel | ℓ | λ | mean leverage | density | " + " | ".join(names)
          + " | per row | default |")
    print("|---|---|---|---|---|---|" + "---|" * (len(names) + 2))
    for name in args.data.split(","):
        X = data(name, args.n, args.shared)
        n = X.shape[0]
        for cell in args.cells.split(","):
            family, ell, a = cell.split(":")
            kernel, reg = make_kernel(family, float(ell)), n ** -float(a)
            exact = cached_exact_scores(X, kernel, reg, args.cache, f"{name}_{cell.replace(':', '_')}")
            density = SpectralLeverage(kernel, reg, algorithm="density", random_state=0).fit(X)
            texts, scores = [accuracy_text(density.scores_, exact)], {}
            for plan in VARIANTS:  # the library's own path (its density), with the plan set
                with mock.patch.object(leverage, "full_scale_plan", return_value=plan):
                    fitted = SpectralLeverage(kernel, reg, algorithm="full-scale", random_state=0).fit(X)
                texts.append(accuracy_text(fitted.scores_, exact))
                scores[plan] = fitted.scores_
            high = density.scores_ / n >= NEIGHBOURS_LEVERAGE
            texts.append(accuracy_text(np.where(high, scores[(512, 32)], density.scores_), exact)
                         + f" [{high.mean():.2f}]")
            default = SpectralLeverage(kernel, reg, random_state=0).fit(X)
            plan = full_scale_plan(density.effective_dimension_, n, density.intrinsic_dim_)
            chosen = "density" if plan is None else f"{plan[0]}/{plan[1]}"
            texts.append(f"{chosen} → {default.algorithm_}: {accuracy_text(default.scores_, exact)}")
            print(f"| {name} | {family} | {ell} | n^-{a} | {exact.mean() / n:.3f} | "
                  + " | ".join(texts) + " |", flush=True)


if __name__ == "__main__":
    main()

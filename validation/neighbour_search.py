"""Approximate against exact neighbours in the full-scale leverage's near field, on real data, against
exact scores.

    python validation/neighbour_search.py [--data casp] [--n 20000] [--probes 8] [--cache DIR]
        [--cells matern0.5:0.5,...] [--reg-exponents 1]

For each cell ``family:ℓ`` and λ = n^-a the default fit is run twice, with
``neighbor_search="exact"`` and ``"approximate"``; it prints each one's path, R-ACC's 5th/95th
percentiles and effective-dimension ratio against exact scores ("p05/p95 (scale)"), and the ratio
of the two fits' scores (1st/5th/95th/99th percentiles, largest change), with the recall of the 33
nearest rows (2000 rows drawn at random).
At 20 000 rows the default's 48 lists of 156 make the search nearly exact; ``--probes`` narrows
the lists a query scans, so that the recall is that of the default at 10^6 rows (8 lists: 0.989 on
CASP). Data as ``middle_table.py`` (a CSV of ``../shared/data``, standardised, n rows drawn with
seed 0; ``normal<d>``: standard normal). Needs faiss (``pip install ".[ann]"``).
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings
from pathlib import Path

import numpy as np
from middle_table import data

from spectral_leverage import SpectralLeverage
from spectral_leverage.backends import _neighbours
from spectral_leverage.backends._neighbours import NeighbourIndex
from spectral_leverage.metrics import neighbour_recall, score_accuracy
from spectral_leverage.validation.grid import cached_exact_scores, make_kernel

FAMILIES = ("matern0.5", "matern1.5", "matern2.5", "rbf")
CELLS = ",".join(f"{family}:{ell}" for family in FAMILIES for ell in ("0.5", "1", "2"))
NEIGHBOURS = 33


def recall(Z: np.ndarray, rows: int = 2000) -> float:
    """Share of the exact 33 nearest rows the approximate index finds, over ``rows`` rows."""
    probe = np.random.default_rng(2).choice(len(Z), min(rows, len(Z)), replace=False)
    exact = NeighbourIndex(Z, approximate=False).query(Z[probe], NEIGHBOURS)
    found = NeighbourIndex(Z, approximate=True, rng=np.random.default_rng(0)).query(Z[probe], NEIGHBOURS)
    return neighbour_recall(found, exact)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="casp")
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--cells", default=CELLS)
    parser.add_argument("--reg-exponents", default="1")
    parser.add_argument("--probes", type=int, default=8, help="lists a query scans (the default's: 48)")
    shared = Path(__file__).resolve().parents[2] / "shared" / "data"
    parser.add_argument("--shared", type=Path, default=shared)
    parser.add_argument("--cache", type=Path, default=None, help="folder for the exact scores")
    args = parser.parse_args()
    if _neighbours.faiss_module() is None:
        raise SystemExit('faiss is not installed: pip install ".[ann]"')
    _neighbours.PROBES = args.probes
    warnings.simplefilter("ignore", UserWarning)
    X = data(args.data, args.n, args.shared)
    n = X.shape[0]
    for cell, a in itertools.product(args.cells.split(","), map(float, args.reg_exponents.split(","))):
        family, ell = cell.split(":")
        kernel, reg = make_kernel(family, float(ell)), n**-a
        exact = cached_exact_scores(X, kernel, reg, args.cache, f"{args.data}_{family}_{ell}_{a:g}")
        scores = {}
        for search in ("exact", "approximate"):
            cpu = time.process_time()
            fit = SpectralLeverage(kernel, reg, neighbor_search=search, random_state=0).fit(X)
            scores[search] = fit.scores_
            acc = score_accuracy(fit.scores_, exact)
            print(f"{args.data} n={n} {family} l={ell} lambda=n^-{a:g} {search}: {fit.algorithm_} "
                  f"{acc['p05']:.3f}/{acc['p95']:.3f} ({acc['scale']:.3f}) "
                  f"{time.process_time() - cpu:.1f} CPU s", flush=True)
        ratio = scores["approximate"] / scores["exact"]
        percentiles = np.round(np.percentile(ratio, [1, 5, 95, 99]), 4)
        print(f"    approximate / exact neighbours: 1/5/95/99th percentiles {percentiles}, largest change "
              f"{np.abs(ratio - 1).max():.3f}; recall@{NEIGHBOURS} {recall(X / float(ell)):.4f} "
              f"({args.probes} lists a query)", flush=True)


if __name__ == "__main__":
    main()

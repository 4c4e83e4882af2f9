"""Figure for docs/examples/scores-map.md: ridge leverage scores on a 2-D map of real data.

    python docs/examples/scores_map.py [--out docs/img/examples/scores_map.png]

CCPP's ambient temperature and exhaust vacuum (9568 rows, standardised), RBF ℓ = 0.3,
λ = 1e-4: left, every row coloured by its score n·l_i (log scale); right, 150 centres drawn by
the scores beside 150 drawn uniformly. Leverage puts centres where the data are sparse (the
edges, the isolated clusters); uniform draws follow the density.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm
from sklearn.gaussian_process.kernels import RBF

from spectral_leverage import SpectralLeverage

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "ccpp.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "examples" / "scores_map.png")
    args = parser.parse_args()
    X = np.loadtxt(DATA, delimiter=",", skiprows=1)[:, :2]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    sl = SpectralLeverage(RBF(0.3), reg=1e-4, random_state=0).fit(X)
    leverage = np.unique(sl.sample(150, replace=False, random_state=0))
    uniform = np.random.default_rng(0).choice(X.shape[0], size=150, replace=False)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2), sharex=True, sharey=True)
    points = left.scatter(X[:, 0], X[:, 1], c=sl.scores_, s=3, cmap="viridis", norm=LogNorm())
    fig.colorbar(points, ax=left, label="score n·l_i")
    left.set_title(f"scores (d_eff ≈ {sl.effective_dimension_:.0f})")
    right.scatter(X[:, 0], X[:, 1], s=1, color="0.85")
    right.scatter(*X[uniform].T, s=12, marker="x", color="tab:blue", label="uniform")
    right.scatter(*X[leverage].T, s=12, color="tab:red", label="leverage")
    right.legend(loc="upper left")
    right.set_title("150 centres")
    for ax in (left, right):
        ax.set_xlabel("ambient temperature (standardised)")
    left.set_ylabel("exhaust vacuum (standardised)")
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}; d_eff = {sl.effective_dimension_:.1f}, "
          f"score range {sl.scores_.min():.3g}..{sl.scores_.max():.3g}")


if __name__ == "__main__":
    main()

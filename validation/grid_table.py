"""The hyper-parameter grid on the real data sets: every method's R-ACC 5th/95th percentiles and
effective-dimension ratio against exact scores over kernels × ℓ × λ (the experiment of
:mod:`spectral_leverage.validation.grid`, here with the published table's settings).

    python validation/grid_table.py [--data-dir ../shared/data] [--methods spectral,density]
                                    [--seeds 0] [--n 4000] [--out grid.json] [--cache DIR]

Each file is standardised and subsampled to n rows afresh per seed. ``--cache`` keeps the exact
scores (about 3 minutes each at n = 20 000 on one core), so that a run resumes where one stopped.
Prints a markdown table (one row per setting, a column per method) and the share of ok settings,
and writes every row as JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from spectral_leverage.validation.data import csv_dataset
from spectral_leverage.validation.grid import cell_text, hyperparameter_grid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    parser.add_argument("--data-dir", type=Path, default=shared)
    parser.add_argument("--files", default="ccpp.csv,casp.csv")
    parser.add_argument("--methods", default="spectral,density")
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--out", type=Path, default=Path("grid.json"))
    parser.add_argument("--cache", type=Path, default=None, help="folder for the exact scores")
    args = parser.parse_args()
    datasets = [csv_dataset(args.data_dir / name, length_scale=1.0) for name in args.files.split(",")]
    methods = args.methods.split(",")
    rows = []
    for seed in map(int, args.seeds.split(",")):
        rows += hyperparameter_grid(datasets, n=args.n, methods=methods, random_state=seed,
                                    progress=True, exact_cache=args.cache)["rows"]
    args.out.write_text(json.dumps(rows, indent=1))
    print("| data | kernel | ℓ | λ | d_eff | " + " | ".join(methods) + " |")
    print("|---|---|---|---|---|" + "---|" * len(methods))
    def key(r):
        return r["dataset"], r["kernel"], r["length_scale"], r["reg_exponent"], r["seed"]

    for setting in sorted({key(r) for r in rows}):
        mine = {r["method"]: r for r in rows if key(r) == setting}
        cells = [cell_text(mine[name]) for name in methods]
        first = next(iter(mine.values()))
        print(f"| {setting[0]} | {setting[1]} | {setting[2]:g} | n^-{setting[3]:g} | "
              f"{first['effective_dimension']:.0f} | "
              + " | ".join(cells) + " |")
    for name in methods:
        for data in datasets:
            mine = [r for r in rows if r["method"] == name and r["dataset"] == data.name]
            print(f"{name} on {data.name}: {sum(r['ok'] for r in mine)} of {len(mine)} settings ok; worst "
                  f"{min(r['p05'] for r in mine):.3f}/{max(r['p95'] for r in mine):.3f}, d_eff ratio "
                  f"{min(r['scale'] for r in mine):.3f}-{max(r['scale'] for r in mine):.3f}")


if __name__ == "__main__":
    main()

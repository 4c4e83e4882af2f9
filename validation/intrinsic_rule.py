"""Which path does ``intrinsic_dim="auto"`` take, and is it the better one? Before and after the
flatness condition.

    python validation/intrinsic_rule.py [--data-dir ../shared/data] [--out rows.jsonl] [--quick]
                                        [--designs bimodal,CCPP] [--tables-from rows.jsonl]

The rule before: the k-NN density in d' when the intrinsic-dimension estimate d' < 0.9 d, else
the ambient KDE. After: the same, and the neighbourhoods must also be flat (flatness < 0.3; see
:mod:`spectral_leverage.density.intrinsic`). For every design, n ∈ {2000, 4000}, seeds 0 and 1,
two length scales and λ ∈ {n^-1/2, n^-3/4} (Matérn ν = 1.5, ``algorithm="density"``), both paths
are fitted (``intrinsic_dim=None`` and ``intrinsic_dim=d'``) and compared with exact scores:
R-ACC 5th / 95th percentiles and the effective dimension's ratio to exact. A path is better when
its loss |log p05| + |log p95| + |log d_eff ratio| is lower by at least 0.1 ("material"); both
rules' choices are then scored. At n = 16000 (CCPP: its 9568 rows), seeds 0-2, only d', the
flatness and the decisions are read. Each read and case is one JSON line (``--out``); three
tables follow (decisions, one line per design, every case). ``--quick``: n = 2000, seed 0.

Designs: the bimodal design (0.9 U[0,1]^d + 0.1 N(1.5, 0.05² I)), d = 3, 4, 5, 6, 8; uniform
[0,1]^d and standard Gaussian, d = 3, 5, 8; a 3-D cube embedded in R^8 by a random orthonormal
map plus N(0, σ²) noise, σ = 0.01 and the thicker 0.02, 0.04, 0.08; k-D cubes in R^(k+1) (σ = 0.01);
a swiss roll (standardised) in R^3 and embedded in R^6; the CCPP and CASP features
(standardised, random subsamples of n rows per seed). Length scales 0.25 and 0.5 on the unit-cube
designs, 0.5 and 1 on the standardised ones.
"""

from __future__ import annotations

import argparse
import json
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
from sklearn.gaussian_process.kernels import Matern

from spectral_leverage import SpectralLeverage, exact_leverage
from spectral_leverage.datasets import make_bimodal
from spectral_leverage.density import intrinsic_dimension
from spectral_leverage.metrics import score_accuracy

LOW, FLAT, MATERIAL = 0.9, 0.3, 0.1
REGS = {"n^-1/2": -0.5, "n^-3/4": -0.75}


def embed(Y: np.ndarray, ambient: int, rng: np.random.Generator) -> np.ndarray:
    Q, _ = np.linalg.qr(rng.normal(size=(ambient, Y.shape[1])))
    return Y @ Q.T


def swiss_roll(n: int, ambient: int, rng: np.random.Generator) -> np.ndarray:
    t = 1.5 * np.pi * (1 + 2 * rng.uniform(size=n))
    Y = np.column_stack([t * np.cos(t), 21 * rng.uniform(size=n), t * np.sin(t)])
    Y = (Y - Y.mean(axis=0)) / Y.std(axis=0)
    return Y if ambient == 3 else embed(Y, ambient, rng)


def real(path: Path, n: int, seed: int) -> np.ndarray:
    X = np.loadtxt(path, delimiter=",", skiprows=1)[:, :-1]
    if n < X.shape[0]:
        X = X[np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))]
    return (X - X.mean(axis=0)) / X.std(axis=0)


def designs(data_dir: Path) -> dict:
    """name -> (make(n, seed), length scales)."""
    unit, standard = (0.25, 0.5), (0.5, 1.0)
    cases = {}
    for d in (3, 4, 5, 6, 8):
        cases[f"bimodal {d}-D"] = (lambda n, s, d=d: make_bimodal(n, d, random_state=s), unit)
    for d in (3, 5, 8):
        cases[f"uniform {d}-D"] = (lambda n, s, d=d: np.random.default_rng(s).uniform(size=(n, d)), unit)
    for d in (3, 5, 8):
        cases[f"Gaussian {d}-D"] = (lambda n, s, d=d: np.random.default_rng(s).normal(size=(n, d)),
                                    standard)
    for sigma in (0.01, 0.02, 0.04, 0.08):
        def cube(n, s, sigma=sigma):
            rng = np.random.default_rng(s)
            return embed(rng.uniform(size=(n, 3)), 8, rng) + sigma * rng.normal(size=(n, 8))
        cases[f"3-D cube in R^8, σ={sigma}"] = (cube, unit)
    for k in (3, 4, 5):
        def flat(n, s, k=k):
            rng = np.random.default_rng(s)
            return embed(rng.uniform(size=(n, k)), k + 1, rng) + 0.01 * rng.normal(size=(n, k + 1))
        cases[f"{k}-D cube in R^{k + 1}"] = (flat, unit)
    for ambient in (3, 6):
        cases[f"swiss roll in R^{ambient}"] = (
            lambda n, s, a=ambient: swiss_roll(n, a, np.random.default_rng(s)), standard)
    for name in ("ccpp", "casp"):
        if (data_dir / f"{name}.csv").is_file():
            cases[name.upper()] = (lambda n, s, p=data_dir / f"{name}.csv": real(p, n, s), standard)
    return cases


def loss(acc: dict) -> float:
    return abs(np.log(acc["p05"])) + abs(np.log(acc["p95"])) + abs(np.log(acc["scale"]))


def decisions(X: np.ndarray) -> dict:
    estimate, flatness = intrinsic_dimension(X, random_state=0, return_flatness=True)
    low = estimate < LOW * X.shape[1]
    return {"dprime": estimate, "flatness": flatness, "before": "k-NN" if low else "KDE",
            "after": "k-NN" if low and not flatness >= FLAT else "KDE"}


def run_case(name: str, X: np.ndarray, ell: float, seed: int) -> list[dict]:
    n, d = X.shape
    rows, decided = [], decisions(X)
    kernel = Matern(length_scale=ell, nu=1.5)
    auto = SpectralLeverage(kernel, n**-0.75, random_state=0, algorithm="density").fit(X)
    expected = decided["dprime"] if decided["after"] == "k-NN" else float(d)
    assert abs(auto.intrinsic_dim_ - expected) < 1e-9, (name, auto.intrinsic_dim_, decided)
    for reg_name, power in REGS.items():
        reg = n**power
        exact = n * exact_leverage(X, kernel, reg)
        row = {"design": name, "n": n, "d": d, "seed": seed, "ell": ell, "reg": reg_name, **decided}
        for path, dim in (("KDE", None), ("k-NN", decided["dprime"])):
            sl = SpectralLeverage(kernel, reg, intrinsic_dim=dim, random_state=0, algorithm="density")
            acc = score_accuracy(sl.fit(X).scores_, exact)
            row[path] = {key: round(acc[key], 4) for key in ("p05", "p95", "scale", "spearman")}
        gap = loss(row["k-NN"]) - loss(row["KDE"])
        row["better"] = "KDE" if gap >= MATERIAL else "k-NN" if gap <= -MATERIAL else "either"
        rows.append(row)
    return rows


def joined(values) -> str:
    return "/".join(sorted(set(values)))


def span(values) -> str:
    low, high = min(values), max(values)
    return f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}"


def triple(rows: list[dict], path: str) -> str:
    return " / ".join(f"{np.mean([r[path][key] for r in rows]):.2f}" for key in ("p05", "p95", "scale"))


def decision_table(reads: list[dict]) -> None:
    print("| design | d' (n = 2000 / 4000 / 16000) | flatness | before | after |")
    print("|---|---|---|---|---|")
    by_design = defaultdict(list)
    for r in reads:
        by_design[r["design"]].append(r)
    for name, rs in by_design.items():
        ns = sorted({r["n"] for r in rs})
        reading = {key: " / ".join(span([r[key] for r in rs if r["n"] == n]) for n in ns)
                   for key in ("dprime", "flatness")}
        print(f"| {name} | {reading['dprime']} | {reading['flatness']} | "
              f"{joined(r['before'] for r in rs)} | {joined(r['after'] for r in rs)} |")


def accuracy_table(rows: list[dict]) -> None:
    """One line per design: both paths at the larger length scale, λ = n^-3/4, the largest n
    (mean over seeds), and over every case how often each rule took the materially better path."""
    print("| design | before → after | ambient KDE | k-NN in d' | paths differ | before right "
          "| after right |\n|---|---|---|---|---|---|---|")
    by_design = defaultdict(list)
    for r in rows:
        by_design[r["design"]].append(r)
    totals = defaultdict(int)
    for name, rs in by_design.items():
        n, ell = max(r["n"] for r in rs), max(r["ell"] for r in rs)
        shown = [r for r in rs if r["n"] == n and r["ell"] == ell and r["reg"] == "n^-3/4"]
        differ = [r for r in rs if r["better"] != "either"]
        right = {rule: sum(r[rule] == r["better"] for r in differ) for rule in ("before", "after")}
        for key, value in (("cases", len(rs)), ("differ", len(differ)), *right.items()):
            totals[key] += value
        print(f"| {name} | {joined(r['before'] for r in rs)} → {joined(r['after'] for r in rs)} | "
              f"{triple(shown, 'KDE')} | {triple(shown, 'k-NN')} | {len(differ)} of {len(rs)} | "
              f"{right['before']} | {right['after']} |")
    print(f"| all | | | | {totals['differ']} of {totals['cases']} | {totals['before']} | {totals['after']} |")


def case_table(rows: list[dict]) -> None:
    print("| design | n | ℓ | λ | ambient KDE | k-NN in d' | better | before | after |")
    print("|---|---|---|---|---|---|---|---|---|")
    cells = defaultdict(list)
    for r in rows:
        cells[(r["design"], r["n"], r["ell"], r["reg"])].append(r)
    for (name, n, ell, reg), rs in cells.items():
        print(f"| {name} | {n} | {ell} | {reg} | {triple(rs, 'KDE')} | {triple(rs, 'k-NN')} | "
              f"{joined(r['better'] for r in rs)} | {joined(r['before'] for r in rs)} | "
              f"{joined(r['after'] for r in rs)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_dir = Path(__file__).resolve().parents[2] / "shared" / "data"
    parser.add_argument("--data-dir", type=Path, default=default_dir)
    parser.add_argument("--out", type=Path, help="append every read and case here as JSON lines")
    parser.add_argument("--designs", help="comma-separated parts of design names: run only those")
    parser.add_argument("--tables-from", type=Path, help="print the tables of an --out file, run nothing")
    parser.add_argument("--quick", action="store_true", help="n = 2000, seed 0, no n = 16000 reads")
    args = parser.parse_args()
    warnings.simplefilter("ignore", UserWarning)
    lines = []
    if args.tables_from:
        lines = [json.loads(line) for line in args.tables_from.read_text().splitlines()]
    else:
        sizes, seeds = ((2000,), (0,)) if args.quick else ((2000, 4000, 16000), (0, 1))
        chosen = args.designs.split(",") if args.designs else None
        for name, (make, ells) in designs(args.data_dir).items():
            if chosen and not any(part in name for part in chosen):
                continue
            for n in sizes:
                for seed in seeds + ((2,) if n == 16000 else ()):  # n = 16000: the decision only
                    X = make(n, seed)
                    found = [{"kind": "read", "design": name, "n": X.shape[0], "seed": seed, **decisions(X)}]
                    for ell in ells if n < 16000 else ():
                        found += [{"kind": "case", **row} for row in run_case(name, X, ell, seed)]
                    lines += found
                    if args.out:
                        with args.out.open("a") as f:
                            f.writelines(json.dumps(line) + "\n" for line in found)
            print(f"{name}: done", flush=True)
    rows = [line for line in lines if line["kind"] == "case"]
    decision_table([line for line in lines if line["kind"] == "read"])
    print("\nR-ACC 5th / 95th percentile / d_eff ratio against exact scores, both paths, mean over seeds; "
          "'paths differ': cases (n, seed, ℓ, λ) where one path's loss is lower by 0.1 or more.\n")
    accuracy_table(rows)
    print()
    case_table(rows)


if __name__ == "__main__":
    main()

"""NystromKRRCV's error curve against the searches a practitioner would run (issue 36, acceptance 1).

    python benchmarks/center_curve.py --data casp --n-train 20000 --seeds 0 --out runs.jsonl
    python benchmarks/center_curve.py --summarise runs.jsonl

For each data set (CCPP and CASP from ``../shared/data``; ``friedman``: scikit-learn's
``make_friedman1`` with 8 features, noise 1; ``smooth3``: standard normal rows in 3-D,
y = sin(2 x₁) + x₂ x₃ + N(0, 0.1²)), seed and kernel: ``--n-train`` training rows and up to
5000 test rows drawn by the seed (CCPP: 80 % of its 9568 rows at most), X standardised on the
training rows, then

* ``cv``: ``NystromKRRCV(kernel, random_state=seed)``, every other parameter at its default;
* ``grid``: the best ``NystromKRR`` of a grid over m ∈ {256, 512, …, ``--grid-max``} (up to n: every
  row, exact KRR, on smaller sets) × NystromKRRCV's own
  (λ, ℓ) grid, judged on the test rows (an oracle: a real search would pick on held-out folds and
  could only do worse). Per (m, ℓ) one ``NystromKRR(n_centers=m)`` is fitted at the grid's middle
  λ (timed) and every λ is scored on its centres along the path; the grid's time is
  Σ (fit time) × the number of λ, the refits a grid search makes (without its folds: a lower bound);
* ``nystroem``: scikit-learn's ``Nystroem(kernel="rbf", gamma=1/(2ℓ²), n_components=m) + RidgeCV``
  over the same ℓ × m ∈ {500, 1000, 2000}, ``RidgeCV``'s α = n·λ over the same λ grid; the best
  (ℓ, m) by test RMSE (an oracle again), and the one a practitioner's search picks, by ``RidgeCV``'s
  own leave-one-out error (``best_score_``), the time of all fits.

* ``uniform`` (``--methods``): ``NystromKRR`` with uniform centres at the CV's (ℓ, λ, m).

Times are CPU seconds of this process with ``--threads`` BLAS threads (default 1; the CV's
``n_jobs`` too; rows keep their wall seconds). ``--out`` appends each finished row and
skips rows already there, so a run resumes. ``--summarise`` prints the table of docs/notes/centres.md:
the CV's test RMSE over the grid's best and over the Nystroem search's best, its time over theirs, and
uniform centres' RMSE.
"""

from __future__ import annotations

import argparse
import logging
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from _rows import append_row, parse_run_args, read_rows
from sklearn.datasets import make_friedman1
from sklearn.gaussian_process.kernels import RBF, Matern
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import RidgeCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from spectral_leverage import NystromKRR, NystromKRRCV
from spectral_leverage._validation import check_random_state
from spectral_leverage.cli.regress import seconds_or_none
from spectral_leverage.kernels import parse_kernel
from spectral_leverage.krr.center_curve import TIME_BUDGET, center_sizes
from spectral_leverage.krr.cv_inputs import default_length_scales, default_regs, with_length_scale
from spectral_leverage.krr.reg_path import nystrom_path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
WALL: list[float] = []
#: "auto" is NystromKRRCV's default (kernel=None: Matérn 3/2 and RBF raced)
KERNELS = {"matern15": Matern(nu=1.5), "rbf": RBF(), "auto": None}
GRID_BUDGET = 4 * 2**30  # room for 8192 centres (the default 1 GiB allows 5792)
TEST_ROWS = 5000


def split(name: str, n_train: int, seed: int):
    if name == "friedman":
        X, y = make_friedman1(n_train + TEST_ROWS, n_features=8, noise=1.0, random_state=seed)
    elif name == "smooth3":
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n_train + TEST_ROWS, 3))
        y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=X.shape[0])
    else:
        table = np.loadtxt(DATA / f"{name}.csv", delimiter=",", skiprows=1)
        X, y = table[:, :-1], table[:, -1]
        n_train = min(n_train, int(0.8 * X.shape[0]))
    order = np.random.default_rng(seed).permutation(X.shape[0])
    train, test = order[:n_train], order[n_train:n_train + TEST_ROWS]
    scaler = StandardScaler().fit(X[train])
    return scaler.transform(X[train]), y[train], scaler.transform(X[test]), y[test]


def cpu(func):
    """(func(), its CPU seconds in this process); its wall seconds go to ``WALL[-1]``."""
    start, wall = time.process_time(), time.perf_counter()
    out = func()
    WALL.append(time.perf_counter() - wall)
    return out, time.process_time() - start


def rmse(prediction, y) -> float:
    return float(np.sqrt(np.mean((prediction - y) ** 2)))


def run_cv(X, y, X_test, y_test, kernel, seed: int, time_budget: float | None = TIME_BUDGET,
           verbose: bool = False, threads: int = 1) -> list[dict]:
    model, seconds = cpu(lambda: NystromKRRCV(kernel, time_budget=time_budget, random_state=seed,
                                              verbose=verbose, n_jobs=threads).fit(X, y))
    results = model.cv_results_
    curve = sorted({(family(k), float(ell), int(m)) for k, ell, m in zip(
        results["param_kernel"], results["param_length_scale"], results["n_centers"], strict=True)})
    return [dict(method="cv", rmse=rmse(model.predict(X_test), y_test), seconds=seconds, wall=WALL[-1],
                 m=model.n_centers_, reg=model.reg_, ell=model.length_scale_, chosen=family(model.kernel_),
                 curve=curve, time_budget=time_budget)]


def family(kernel) -> str:
    """The name in KERNELS of a kernel's family."""
    return "rbf" if parse_kernel(kernel).family == "rbf" else "matern15"


def run_uniform(X, y, X_test, y_test, cv: dict, seed: int) -> list[dict]:
    """m distinct rows drawn uniformly as centres at the CV's (ℓ, λ, m): its centre choice's worth."""
    kern = with_length_scale(KERNELS[cv.get("chosen", cv["kernel"])], cv["ell"])
    centres = X[np.random.default_rng(seed).choice(X.shape[0], cv["m"], replace=False)]
    path, seconds = cpu(lambda: nystrom_path(X, y[:, None], kern, centres, np.array([cv["reg"]]),
                                             criterion=None, memory_budget=GRID_BUDGET))
    prediction = kern(X_test, centres) @ path["coef"][0, :, 0] + path["intercept"][0, 0]
    return [dict(method="uniform", rmse=rmse(prediction, y_test), seconds=seconds, wall=WALL[-1],
                 m=cv["m"], reg=cv["reg"], ell=cv["ell"])]


def grids(X, seed: int):
    """NystromKRRCV's own λ and ℓ grids for ``random_state=seed``."""
    return default_regs(X.shape[0]), default_length_scales(X, check_random_state(seed))


def run_grid(X, y, X_test, y_test, kernel, seed: int, m: int, ell: float) -> list[dict]:
    regs, _ = grids(X, seed)
    middle = float(np.exp(np.mean(np.log(regs))))
    kern = with_length_scale(kernel, ell)
    model, seconds = cpu(lambda: NystromKRR(kern, middle, m, memory_budget=GRID_BUDGET,
                                            random_state=seed).fit(X, y))
    path = nystrom_path(X, y[:, None], kern, model.centers_, regs, criterion=None, memory_budget=GRID_BUDGET)
    K_test = kern(X_test, model.centers_)
    errors = [rmse(K_test @ path["coef"][j, :, 0] + path["intercept"][j, 0], y_test)
              for j in range(regs.size)]
    j = int(np.argmin(errors))
    return [dict(method="grid", rmse=errors[j], seconds=seconds * regs.size, m=m, reg=float(regs[j]),
                 ell=ell)]


def run_nystroem(X, y, X_test, y_test, seed: int, m: int, ell: float) -> list[dict]:
    regs, _ = grids(X, seed)
    pipeline = make_pipeline(Nystroem(kernel="rbf", gamma=0.5 / ell**2, n_components=m, random_state=seed),
                             RidgeCV(alphas=X.shape[0] * regs))
    _, seconds = cpu(lambda: pipeline.fit(X, y))
    return [dict(method="nystroem", rmse=rmse(pipeline.predict(X_test), y_test), seconds=seconds, m=m,
                 reg=float(pipeline[-1].alpha_ / X.shape[0]), ell=ell, loo=-float(pipeline[-1].best_score_))]


def jobs(X, y, X_test, y_test, kernel, seed: int, grid_max: int, methods, cv_row, time_budget=TIME_BUDGET,
         verbose=False, threads=1, grid_scales=None):
    """(key, thunk) for every row of ``methods`` for one (data set, seed, kernel), the cheap ones
    first; ``cv_row()`` is the CV's row once run (for ``uniform``)."""
    _, scales = grids(X, seed)
    if "cv" in methods:
        yield ("cv",), lambda: run_cv(X, y, X_test, y_test, kernel, seed, time_budget, verbose, threads)
    if "uniform" in methods:
        yield ("uniform",), lambda: run_uniform(X, y, X_test, y_test, cv_row(), seed)
    for ell in map(float, scales) if "nystroem" in methods else []:
        for m in (500, 1000, 2000):
            yield ("nystroem", m, ell), lambda m=m, ell=ell: run_nystroem(X, y, X_test, y_test, seed, m, ell)
    if grid_scales is not None:
        scales = [scales[i] for i in grid_scales]
    for m in center_sizes(min(grid_max, X.shape[0])) if "grid" in methods else []:
        for ell in map(float, scales):
            yield ("grid", m, ell), lambda m=m, ell=ell: run_grid(X, y, X_test, y_test, kernel, seed, m, ell)


def key_of(row: dict) -> tuple:
    head = row["data"], row["n_train"], row["kernel"], row["seed"], row.get("threads", 1)
    if row["method"] in ("cv", "uniform"):
        return *head, (row["method"],)
    return *head, (row["method"], row["m"], row["ell"])


def summarise(rows: list) -> None:
    cells = defaultdict(lambda: defaultdict(list))
    for row in rows:
        cell = row["data"], row["n_train"], row["d"], row["kernel"], row["seed"], row.get("threads", 1)
        cells[cell][row["method"]].append(row)
    print("| data | n_train | d | kernel | seed | threads | CV RMSE (m) | CV s | grid best RMSE (m) | "
          "grid s | CV / grid RMSE | CV / grid time | Nystroem best RMSE (m) | Nystroem s | "
          "CV / Nystroem RMSE | CV / Nystroem time | Nystroem by its LOO: RMSE (m) | CV / that RMSE | "
          "uniform centres RMSE (CV's ℓ, λ, m) |")
    print("|" + "---|" * 19)
    for (name, n_train, d, kernel, seed, threads), methods in sorted(cells.items()):
        if not methods["cv"]:
            continue
        cv = methods["cv"][0]
        others = [cells[name, n_train, d, k, seed, threads] for k in KERNELS if k != kernel]
        if not methods["nystroem"]:  # RBF whatever the CV's kernel: the rows of any kernel's cell
            methods["nystroem"] = next((o["nystroem"] for o in others if o["nystroem"]), [])
        if kernel == "auto":  # the grid over both families
            methods["grid"] = [row for o in others for row in o["grid"]]
        line = [name, n_train, d, kernel, seed, threads, f"{cv['rmse']:.4f} ({cv['m']})",
                f"{cv['seconds']:.0f}"]
        for method in ("grid", "nystroem"):
            if not methods[method]:
                line += ["–"] * 4
                continue
            best = min(methods[method], key=lambda r: r["rmse"])
            spent = sum(r["seconds"] for r in methods[method])
            line += [f"{best['rmse']:.4f} ({best['m']})", f"{spent:.0f}", f"{cv['rmse'] / best['rmse']:.4f}",
                     f"1/{spent / cv['seconds']:.1f}"]
        searched = methods["nystroem"]
        if searched and all("loo" in r for r in searched):  # the practitioner's pick: RidgeCV's own LOO
            picked = min(searched, key=lambda r: r["loo"])
            line += [f"{picked['rmse']:.4f} ({picked['m']})", f"{cv['rmse'] / picked['rmse']:.4f}"]
        else:
            line += ["–"] * 2
        line.append(f"{methods['uniform'][0]['rmse']:.4f}" if methods["uniform"] else "–")
        print("| " + " | ".join(map(str, line)) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", nargs="+", default=["ccpp", "casp", "friedman"])
    parser.add_argument("--n-train", type=int, default=20000)
    parser.add_argument("--kernels", nargs="+", default=["matern15"], choices=sorted(KERNELS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--grid-max", type=int, default=8192)
    parser.add_argument("--grid-scales", type=int, nargs="+", default=None,
                        help="the grid over these ℓ only (indices into the CV's ℓ grid, 0 the shortest): "
                             "its best is then a bound from above and its time from below")
    parser.add_argument("--methods", nargs="+", default=["cv", "nystroem", "grid"],
                        choices=["cv", "uniform", "nystroem", "grid"])
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    parser.add_argument("--time-budget", type=seconds_or_none, default=TIME_BUDGET,
                        help=f"NystromKRRCV's time_budget, or none (default {TIME_BUDGET:g})")
    parser.add_argument("--verbose", action="store_true",
                        help="NystromKRRCV(verbose=True): log each (ℓ, m) scored, progress bars")
    args = parse_run_args(parser, summarise)
    if args is None:
        return
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
        logging.getLogger("spectral_leverage.krr.cv").setLevel(logging.INFO)
    done = {key_of(row): row for row in read_rows(args.out)}
    for name in args.data:
        for seed in args.seeds:
            X, y, X_test, y_test = split(name, args.n_train, seed)
            for kernel_name in args.kernels:
                head = dict(data=name, n_train=X.shape[0], d=X.shape[1], kernel=kernel_name, seed=seed)
                prefix = key_of({**head, "threads": args.threads, "method": "cv"})[:-1]
                for key, job in jobs(X, y, X_test, y_test, KERNELS[kernel_name], seed, args.grid_max,
                                     args.methods, lambda prefix=prefix: done[(*prefix, ("cv",))],
                                     args.time_budget, args.verbose, args.threads, args.grid_scales):
                    if (*prefix, key) in done:
                        continue
                    with threadpool_limits(args.threads):
                        for row in job():
                            row = {**head, **row, "threads": args.threads}
                            append_row(args.out, row)
                            done[key_of(row)] = row


if __name__ == "__main__":
    main()

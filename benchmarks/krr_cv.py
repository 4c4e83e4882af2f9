"""NystromKRRCV with its defaults against grid searches over the same (λ, ℓ) grid, on real data.

For each dataset (CCPP, CASP from ``../shared/data``), seed and kernel (Matérn ν = 1.5, RBF): an
80/20 split by the seed, X standardised on the training part, then

* ``NystromKRRCV(kernel, random_state=seed)``, every other parameter at its default;
* ``GridSearchCV(NystromKRR(n_centers=m))`` (``--folds`` folds) over the same (λ, ℓ) grid, m the
  ``n_centers_`` NystromKRRCV ended with;
* ``GridSearchCV(KernelRidge(alpha=n·λ))`` over the same grid on at most ``--krr-max-n`` training
  rows (skipped for 0).

It prints one row per run (test RMSE, fit seconds, the chosen λ and ℓ) and the medians over seeds of
the RMSE ratios and the time ratios, all from the same run. Times are CPU seconds of this process
(``time.process_time``): with one BLAS thread and ``n_jobs=1`` they equal the wall time of an idle
machine, and unlike wall time they do not count the other processes of a shared one (the wall
seconds are kept in ``--out``). ``--out FILE`` appends each finished run as a JSON line and skips
the runs already in the file, so a long benchmark can be split over several processes or resumed;
``--reuse-krr FILE`` takes the ``GridSearchCV(KernelRidge)`` figures (which do not depend on this
package) from an earlier file where dataset, kernel, seed, rows and folds match.
``--figure PATH`` draws the CV error of the first run against λ, one line per ℓ. One BLAS thread
per process (``--threads``) keeps the timings comparable on a shared machine::

    python benchmarks/krr_cv.py --datasets ccpp --seeds 0 1 2 --figure docs/img/cv_error.png
    python benchmarks/krr_cv.py --datasets ccpp --kernels rbf --krr-max-n 7654 --out runs.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from sklearn.gaussian_process.kernels import RBF, Matern
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import GridSearchCV, KFold, train_test_split
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from spectral_leverage import NystromKRR, NystromKRRCV

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
KERNELS = {"matern15": Matern(nu=1.5), "rbf": RBF()}


def load(name: str, seed: int) -> tuple:
    table = np.loadtxt(DATA / f"{name}.csv", delimiter=",", skiprows=1)
    X_train, X_test, y_train, y_test = train_test_split(table[:, :-1], table[:, -1], test_size=0.2,
                                                        random_state=seed)
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def timed(func, row: dict, name: str):
    """``func()``; its CPU seconds go to ``row[name]``, its wall seconds to ``row["wall"][name]``."""
    start, cpu = time.perf_counter(), time.process_time()
    out = func()
    row[name] = time.process_time() - cpu
    row.setdefault("wall", {})[name] = time.perf_counter() - start
    return out


def rmse(model, X, y) -> float:
    return float(np.sqrt(np.mean((model.predict(X) - y) ** 2)))


def run(name: str, seed: int, kernel_name: str, folds: int, krr_max_n: int, earlier: dict) -> tuple:
    """(row, fitted NystromKRRCV); ``earlier`` maps (dataset, kernel, seed, n_small, folds) to rows
    of an earlier run whose exact grid search is reused (it does not depend on this package)."""
    X_train, X_test, y_train, y_test = load(name, seed)
    kernel = KERNELS[kernel_name]
    row = dict(dataset=name, seed=seed, kernel=kernel_name, n=X_train.shape[0], folds=folds)
    cv_model = timed(lambda: NystromKRRCV(kernel, random_state=seed).fit(X_train, y_train), row, "cv_s")
    regs = np.unique(cv_model.cv_results_["param_reg"])
    scales = np.unique(cv_model.cv_results_["param_length_scale"])
    kernels = [kernel.clone_with_theta(kernel.theta).set_params(length_scale=ell) for ell in scales]
    row.update(m=cv_model.n_centers_, cv_rmse=rmse(cv_model, X_test, y_test), reg=cv_model.reg_,
               ell=cv_model.length_scale_, grid=regs.size * scales.size)
    search = GridSearchCV(
        NystromKRR(n_centers=cv_model.n_centers_, random_state=seed),
        {"reg": list(regs), "kernel": kernels}, cv=KFold(folds, shuffle=True, random_state=seed),
        scoring="neg_mean_squared_error")
    search = timed(lambda: search.fit(X_train, y_train), row, "grid_s")
    row["grid_rmse"] = rmse(search, X_test, y_test)
    if krr_max_n:
        rows = np.random.default_rng(seed).permutation(X_train.shape[0])[:krr_max_n]
        Xs, ys = X_train[rows], y_train[rows]
        n_fold = Xs.shape[0] * (folds - 1) // folds
        if Xs.shape[0] == X_train.shape[0]:  # every row: the same fit as above
            small, row["cv_small_s"] = cv_model, row["cv_s"]
        else:
            small = timed(lambda: NystromKRRCV(kernel, random_state=seed).fit(Xs, ys), row, "cv_small_s")
        row["n_small"] = Xs.shape[0]
        row["cv_small_rmse"] = rmse(small, X_test, y_test)
        before = earlier.get((name, kernel_name, seed, Xs.shape[0], folds))
        if before is not None:
            row.update(krr_s=before["krr_s"], krr_rmse=before["krr_rmse"], krr_reused=True)
            row["wall"]["krr_s"] = before["wall"]["krr_s"]
            return row, cv_model
        exact = GridSearchCV(
            KernelRidge(kernel=kernels[0]),
            {"alpha": list(n_fold * np.unique(small.cv_results_["param_reg"])),
             "kernel": [kernel.clone_with_theta(kernel.theta).set_params(length_scale=ell)
                        for ell in np.unique(small.cv_results_["param_length_scale"])]},
            cv=KFold(folds, shuffle=True, random_state=seed), scoring="neg_mean_squared_error")
        # KernelRidge fits no intercept: it gets the targets centred by their training mean
        exact = timed(lambda: exact.fit(Xs, ys - ys.mean()), row, "krr_s")
        row["krr_rmse"] = float(np.sqrt(np.mean((exact.predict(X_test) + ys.mean() - y_test) ** 2)))
    return row, cv_model


def figure(model, path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = model.cv_results_
    fig, ax = plt.subplots(figsize=(6, 4))
    for ell in np.unique(results["param_length_scale"]):
        mask = results["param_length_scale"] == ell
        m = results["n_centers"][mask].max()  # each ℓ at the most centres its curve reached
        mask &= results["n_centers"] == m
        ax.loglog(results["param_reg"][mask], -results["mean_test_score"][mask], marker=".",
                  label=f"ℓ = {ell:.2f} (m = {m})")
    ax.axvline(model.reg_, color="grey", linestyle=":", label=f"chosen λ = {model.reg_:.1e}")
    ax.set_xlabel("λ (reg)")
    ax.set_ylabel(f"criterion cv={model.cv!r} (mean squared error)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["ccpp", "casp"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--kernels", nargs="+", default=list(KERNELS), choices=list(KERNELS))
    parser.add_argument("--folds", type=int, default=5, help="folds of the grid searches")
    parser.add_argument("--krr-max-n", type=int, default=0,
                        help="training rows for GridSearchCV(KernelRidge) (CCPP only; 0 skips it)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads")
    parser.add_argument("--figure", default=None, help="PNG of the first run's CV error against λ")
    parser.add_argument("--out", default=None,
                        help="JSON-lines file: finished runs are appended, runs already in it skipped")
    parser.add_argument("--reuse-krr", default=None, metavar="FILE",
                        help="JSON-lines file of an earlier run: its GridSearchCV(KernelRidge) figures "
                             "are reused where dataset, kernel, seed, rows and folds match")
    parser.add_argument("--figure-only", action="store_true",
                        help="fit NystromKRRCV on the first dataset, kernel and seed, draw --figure, stop")
    args = parser.parse_args(argv)
    if args.figure_only:
        name, kernel_name, seed = args.datasets[0], args.kernels[0], args.seeds[0]
        X_train, _, y_train, _ = load(name, seed)
        with threadpool_limits(args.threads):
            model = NystromKRRCV(KERNELS[kernel_name], random_state=seed).fit(X_train, y_train)
        figure(model, args.figure, f"{name.upper()}, {kernel_name}, seed {seed}")
        return
    earlier = {}
    if args.reuse_krr:
        for line in Path(args.reuse_krr).read_text().splitlines():
            record = json.loads(line)
            if "krr_s" in record and not record.get("krr_reused"):
                key = ("dataset", "kernel", "seed", "n_small", "folds")
                earlier[tuple(record[k] for k in key)] = record

    rows, first_run = [], None
    done = {}
    if args.out and Path(args.out).exists():
        for line in Path(args.out).read_text().splitlines():
            record = json.loads(line)
            done[record["dataset"], record["kernel"], record["seed"]] = record
    header = (f"{'data':5} {'kernel':8} {'seed':>4} {'n':>6} {'m':>5} {'grid':>4} {'λ':>8} {'ℓ':>5} "
              f"{'CV rmse':>8} {'CV s':>7} {'GS rmse':>8} {'GS s':>7} | {'n_krr':>5} {'CV rmse':>8} "
              f"{'CV s':>6} {'KRR rmse':>8} {'KRR s':>7}")
    print(header)
    with threadpool_limits(args.threads):
        for name in args.datasets:
            for kernel_name in args.kernels:
                for seed in args.seeds:
                    row = done.get((name, kernel_name, seed))
                    if row is None:
                        row, model = run(name, seed, kernel_name, args.folds,
                                         args.krr_max_n if name == "ccpp" else 0, earlier)
                        first_run = first_run or (row, model)
                        if args.out:
                            with open(args.out, "a") as out:
                                out.write(json.dumps(row) + "\n")
                    rows.append(row)
                    small = (f"{row['n_small']:5d} {row['cv_small_rmse']:8.3f} {row['cv_small_s']:6.1f} "
                             f"{row['krr_rmse']:8.3f} {row['krr_s']:7.1f}" if "krr_s" in row else "")
                    print(f"{name:5} {kernel_name:8} {seed:4d} {row['n']:6d} {row['m']:5d} "
                          f"{row['grid']:4d} {row['reg']:8.1e} {row['ell']:5.2f} {row['cv_rmse']:8.3f} "
                          f"{row['cv_s']:7.1f} {row['grid_rmse']:8.3f} {row['grid_s']:7.1f} | {small}",
                          flush=True)
    print("\nmedians over seeds: RMSE ratio and time ratio of NystromKRRCV to each grid search")
    for name in args.datasets:
        for kernel_name in args.kernels:
            group = [r for r in rows if r["dataset"] == name and r["kernel"] == kernel_name]
            line = (f"{name:5} {kernel_name:8} vs GridSearchCV(NystromKRR): RMSE ×"
                    f"{np.median([r['cv_rmse'] / r['grid_rmse'] for r in group]):.3f}, time ×"
                    f"{np.median([r['cv_s'] / r['grid_s'] for r in group]):.3f}")
            if all("krr_s" in r for r in group):
                line += (f"; vs GridSearchCV(KernelRidge): RMSE ×"
                         f"{np.median([r['cv_small_rmse'] / r['krr_rmse'] for r in group]):.3f}, time ×"
                         f"{np.median([r['cv_small_s'] / r['krr_s'] for r in group]):.3f}")
            print(line)
    if args.figure and first_run is not None:  # the first run made now (a model is not kept in --out)
        first, model = first_run
        figure(model, args.figure, f"{first['dataset'].upper()}, {first['kernel']}, seed {first['seed']}")


if __name__ == "__main__":
    main()

"""Cost of the default scores over the hyper-parameter grid: what ``algorithm="auto"`` chooses at each
(kernel, ℓ, λ = n^-a), its fit time and peak memory against the density path and the project's
Recursive-RLS / BLESS on the same data (d features; ``--design``: "normal" standard Gaussian rows,
"bimodal" ``make_bimodal``'s, or "manifold" a 4-D cube in d dimensions with noise 0.01,
``make_embedded``'s, standardised: ``spectral_leverage.validation.data.design_rows``).

    python benchmarks/grid_cost.py --n 100000 --d 3 [--design normal] [--kernels rbf,matern1.5]
        [--against recursive-rls]

Each fit runs in a fresh process (peak memory is the process's own); a method that has not finished
within ``--timeout`` seconds is reported as such. Prints a table and writes JSON next to this file
(rewritten after every row).
``--clock cpu`` prints and compares the fit's process CPU seconds instead of its wall seconds: with
``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1`` they are an idle machine's wall time, and they do not
count the other processes of a shared one (the timeout stays in wall seconds).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

WORKER = """
import json, resource, sys, time
from spectral_leverage import SpectralLeverage, make_sampler
from spectral_leverage.validation.data import design_rows
from spectral_leverage.validation.grid import make_kernel
n, d, family, ell, a, method, n_jobs, design = json.loads(sys.argv[1])
X = design_rows(design, n, d)
kernel, reg = make_kernel(family, ell), n ** -a
if method in ("spectral", "density"):
    sampler = SpectralLeverage(kernel, reg, algorithm="auto" if method == "spectral" else "density",
                               n_jobs=n_jobs, random_state=0)
else:
    name, _, scoring = method.partition(":")  # "bless:weighted": the final scoring named
    sampler = make_sampler(name, kernel=kernel, reg=reg, random_state=0)
    if scoring:
        sampler.set_params(scoring=scoring)
start, cpu = time.perf_counter(), time.process_time()
sampler.fit(X)
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "d_eff": float(sampler.effective_dimension_),
                  "algorithm": getattr(sampler, "algorithm_", method),
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run(setting: list, timeout: float) -> dict:
    try:
        done = subprocess.run([sys.executable, "-c", WORKER, json.dumps(setting)], capture_output=True,
                              text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return {"seconds": None, "note": f"over {timeout:.0f} s"}
    except subprocess.CalledProcessError as err:
        return {"seconds": None, "note": err.stderr.strip().splitlines()[-1][:80]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=3)
    parser.add_argument("--design", choices=("normal", "bimodal", "manifold"), default="normal")
    parser.add_argument("--kernels", default="matern0.5,matern1.5,matern2.5,rbf")
    parser.add_argument("--length-scales", default="0.5,1,2")
    parser.add_argument("--reg-exponents", default="0.5,0.75,1")
    parser.add_argument("--against", default="recursive-rls",
                        help="comma-separated sampler names, or ''; NAME:SCORING sets a dictionary sampler's "
                             "final scoring (bless:weighted, the literature's estimator)")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="the seconds printed and compared")
    parser.add_argument("--n-jobs", type=int, default=None,
                        help="SpectralLeverage's n_jobs (joblib's meaning; default: one thread)")
    parser.add_argument("--no-density", action="store_true",
                        help="leave out the density path's column (its cost is the same in every cell)")
    parser.add_argument("--out", default=None, help="JSON file (default: next to this script)")
    args = parser.parse_args()
    key = "seconds" if args.clock == "wall" else "cpu_seconds"
    methods = ["spectral", *([] if args.no_density else ["density"]),
               *[m for m in args.against.split(",") if m]]
    rows = []
    out = Path(args.out) if args.out else Path(__file__).with_name(
        f"results_grid_cost_n{args.n}_d{args.d}{'' if args.design == 'normal' else '_' + args.design}.json")
    print(f"n = {args.n}, d = {args.d}, {args.design} rows; {args.clock} seconds per fit (fresh process), "
          "peak MiB of the default")
    print(f"{'kernel':>10} {'ℓ':>4} {'a':>5} {'auto →':>11} {'d_eff':>8} "
          + " ".join(f"{m:>14}" for m in methods) + "   ratios to spectral")
    for family in args.kernels.split(","):
        for ell in map(float, args.length_scales.split(",")):
            for a in map(float, args.reg_exponents.split(",")):
                row = {"kernel": family, "length_scale": ell, "reg_exponent": a}
                for method in methods:
                    row[method] = run([args.n, args.d, family, ell, a, method, args.n_jobs, args.design],
                                      args.timeout)
                rows.append(row)
                own = row["spectral"]
                cells = [f"{r[key]:14.2f}" if r["seconds"] is not None else f"{r['note']:>14}"
                         for r in (row[m] for m in methods)]
                ratios = [f"{row[m][key] / own[key]:.1f}x" if row[m]["seconds"] and own["seconds"]
                          else "-" for m in methods[1:]]
                print(f"{family:>10} {ell:4g} {a:5g} {own.get('algorithm', '-'):>11} "
                      f"{own.get('d_eff', float('nan')):8.1f} " + " ".join(cells) + "   " + " ".join(ratios)
                      + f"   peak {own.get('peak_mib', float('nan')):.0f} MiB", flush=True)
                # every finished row is on disk: a long run stopped by hand keeps what it measured
                out.write_text(json.dumps({"n": args.n, "d": args.d, "design": args.design,
                                           "n_jobs": args.n_jobs, "rows": rows,
                                           "when": time.strftime("%Y-%m-%d %H:%M")}, indent=1))
    print(f"written {out}")


if __name__ == "__main__":
    main()

"""Evidence for ``n_centers="auto"``: test error against m / d_eff, and the capped rule's λ'.

Part 1, real data (CCPP, CASP from ``../shared/data``; 80/20 split by the seed, X standardised):
``NystromKRR`` (Matérn ν = 3/2 at ``--length-scale``, λ = ``--reg``, intercept) with
m = factor × d_eff(λ) for each ``--factors``, d_eff the spectral estimate; the test RMSE of each.

Part 2, the regime where the cap binds (the validation suite's 3-D bimodal design with known f*,
λ = n^{-3/4}, Matérn(0.5, 3/2), m ≪ d_eff): the in-sample risk ‖f̂ − f*‖²/n of m centres drawn by
spectral scores at λ, by scores at the λ' with d_eff(λ') = m (what ``auto`` does when capped)
and uniformly; medians over seeds::

    python benchmarks/auto_centres.py --datasets ccpp casp --n 100000 --m 100 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
from sklearn.gaussian_process.kernels import Matern
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from spectral_leverage import NystromKRR, SpectralLeverage
from spectral_leverage.krr.centers import auto_centers
from spectral_leverage.validation.tradeoff import regression_problem

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def real_data(name: str, seed: int, kernel, reg: float, factors) -> None:
    table = np.loadtxt(DATA / f"{name}.csv", delimiter=",", skiprows=1)
    X_train, X_test, y_train, y_test = train_test_split(table[:, :-1], table[:, -1], test_size=0.2,
                                                        random_state=seed)
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    d_eff = SpectralLeverage(kernel, reg, random_state=seed).fit(X_train).effective_dimension_
    for factor in factors:
        m = max(1, int(np.ceil(factor * d_eff)))
        model = NystromKRR(kernel, reg, m, random_state=seed).fit(X_train, y_train)
        rmse = np.sqrt(np.mean((model.predict(X_test) - y_test) ** 2))
        print(f"{name:5} seed {seed} n {X_train.shape[0]:6d} d_eff {d_eff:8.1f} m/d_eff {factor:5.2f} "
              f"m {m:5d} unique {model.center_indices_.size:5d} test RMSE {rmse:.4f}", flush=True)


def capped(n: int, m: int, seeds) -> None:
    kernel, reg = Matern(0.5, nu=1.5), n ** -0.75
    risks: dict[str, list] = {"spectral at λ": [], "spectral at λ' (auto, capped)": [], "uniform": []}
    for seed in seeds:
        X, f, y = regression_problem(n, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, at_prime, reg_prime = auto_centers(X, "spectral", kernel=kernel, reg=reg,
                                                  memory_budget=32 * m**2,
                                                  rng=np.random.default_rng(seed))
        d_eff = SpectralLeverage(kernel, reg, random_state=seed).fit(X).effective_dimension_
        for name, sampler in (("spectral at λ", "spectral"),
                              ("spectral at λ' (auto, capped)", at_prime), ("uniform", "uniform")):
            pred = NystromKRR(kernel, reg, m, sampler=sampler, fit_intercept=False,
                              random_state=seed).fit(X, y).predict(X)
            risks[name].append(float(np.mean((pred - f) ** 2)))
        print(f"seed {seed}: d_eff(λ={reg:.2e}) = {d_eff:.0f}, λ' = {reg_prime:.2e} "
              f"(d_eff {at_prime.effective_dimension_:.0f}); risks "
              + ", ".join(f"{k}: {v[-1]:.5f}" for k, v in risks.items()), flush=True)
    print(f"n = {n}, m = {m}, medians over {len(seeds)} seeds: "
          + ", ".join(f"{k}: {np.median(v):.5f}" for k, v in risks.items()))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=["ccpp", "casp"])
    parser.add_argument("--factors", nargs="+", type=float, default=[0.25, 0.5, 1.0, 2.0, 4.0])
    parser.add_argument("--length-scale", type=float, default=0.6)
    parser.add_argument("--reg", type=float, default=1e-4)
    parser.add_argument("--n", type=int, default=100_000, help="part 2 (0 skips it)")
    parser.add_argument("--m", type=int, default=100)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads")
    args = parser.parse_args(argv)
    kernel = Matern(args.length_scale, nu=1.5)
    with threadpool_limits(args.threads):
        for name in args.datasets:
            real_data(name, args.seeds[0], kernel, args.reg, args.factors)
        if args.n:
            capped(args.n, args.m, args.seeds)


if __name__ == "__main__":
    main()

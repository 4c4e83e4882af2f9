"""Evidence for ``n_centers="auto"``: test error against m / d_eff, and the rule when the cap binds.

Part 1, real data (CCPP, CASP from ``../shared/data``; 80/20 split by the seed, X standardised):
``NystromKRR`` (Matérn ν = 3/2 at ``--length-scale``, λ = ``--reg``, intercept) with
m = factor × d_eff(λ) for each ``--factors``, d_eff the spectral estimate; the test RMSE of each.

Part 2, the regime where the cap binds (m ≪ d_eff), on ``--capped`` data sets: CCPP and CASP as
in part 1 (test RMSE), and the validation suite's 3-D bimodal design with known f* (``--n`` rows,
λ = n^{-3/4}, Matérn(0.5, 3/2); in-sample risk ‖f̂ − f*‖²/n). m centres are drawn ``--draws``
times by the spectral scores at λ, by the capped rule of ``n_centers="auto"`` (probabilities
½ p_i + ½/n) and uniformly, all from the same fitted scores; the mean error of each and its ratio
to uniform's on the same draw::

    python benchmarks/auto_centres.py --datasets ccpp --factors 0.5 1 2 4 --reg 4e-5 --capped
    python benchmarks/auto_centres.py --datasets --capped ccpp casp bimodal --m 100 --draws 30 --seeds 0 1
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from sklearn.gaussian_process.kernels import Matern
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from spectral_leverage import NystromKRR, SpectralLeverage
from spectral_leverage.krr.centers import CAPPED_UNIFORM_SHARE, draw_centers
from spectral_leverage.krr.reg_path import nystrom_path
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


def capped(name: str, n: int, m: int, seed: int, draws: int, reg: float, length_scale: float) -> None:
    """m ≪ d_eff: centres drawn by the spectral scores at λ, by ``n_centers="auto"``'s capped rule
    (probabilities ½ p_i + ½/n) and uniformly, ``draws`` times each from the same scores
    (``draw_centers``, generators 100 + seed), solved by ``nystrom_path``; on real data the test
    RMSE (80/20 split by the seed, intercept), on "bimodal" the in-sample risk ‖f̂ − f*‖²/n."""
    if name == "bimodal":
        kernel, reg = Matern(0.5, nu=1.5), n ** -0.75
        X, f, y = regression_problem(n, seed)
        X_test = None
    else:
        kernel = Matern(length_scale, nu=1.5)
        table = np.loadtxt(DATA / f"{name}.csv", delimiter=",", skiprows=1)
        X, X_test, y, y_test = train_test_split(table[:, :-1], table[:, -1], test_size=0.2,
                                                random_state=seed)
        scaler = StandardScaler().fit(X)
        X, X_test = scaler.transform(X), scaler.transform(X_test)
    scores = SpectralLeverage(kernel, reg, random_state=seed).fit(X)
    rng = np.random.default_rng(100 + seed)
    rules = {"spectral at λ": 0.0, "auto, capped": CAPPED_UNIFORM_SHARE, "uniform": 1.0}
    errors: dict[str, list] = {rule: [] for rule in rules}
    for _ in range(draws):
        for rule, share in rules.items():
            centers = X[draw_centers(X, m, scores, kernel=kernel, reg=reg, rng=rng, uniform_share=share)]
            path = nystrom_path(X, y[:, None], kernel, centers, np.array([reg]),
                                fit_intercept=X_test is not None, criterion=None)
            coef, intercept = path["coef"][0, :, 0], path["intercept"][0, 0]
            if X_test is None:
                errors[rule].append(float(np.mean((kernel(X, centers) @ coef + intercept - f) ** 2)))
            else:
                pred = kernel(X_test, centers) @ coef + intercept
                errors[rule].append(float(np.sqrt(np.mean((pred - y_test) ** 2))))
    base = np.array(errors["uniform"])
    print(f"{name} seed {seed}: n {X.shape[0]}, m {m}, λ {reg:.2e}, d_eff "
          f"{scores.effective_dimension_:.0f}, {draws} draws; {'risk' if X_test is None else 'test RMSE'}"
          " mean ± s.e., and its ratio to uniform's on the same draw (mean ± s.e., median)")
    for rule, values in errors.items():
        values = np.array(values)
        ratio = values / base
        print(f"  {rule:14s} {values.mean():.5g} ± {values.std(ddof=1) / np.sqrt(draws):.2g}   ratio "
              f"{ratio.mean():.3f} ± {ratio.std(ddof=1) / np.sqrt(draws):.3f}, median {np.median(ratio):.3f}",
              flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=["ccpp", "casp"])
    parser.add_argument("--factors", nargs="+", type=float, default=[0.25, 0.5, 1.0, 2.0, 4.0])
    parser.add_argument("--length-scale", type=float, default=0.6)
    parser.add_argument("--reg", type=float, default=1e-4)
    parser.add_argument("--capped", nargs="*", default=["ccpp", "casp", "bimodal"],
                        help="part 2's data sets (none skips it)")
    parser.add_argument("--n", type=int, default=100_000, help="rows of part 2's bimodal design")
    parser.add_argument("--m", type=int, default=100)
    parser.add_argument("--draws", type=int, default=30)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads")
    args = parser.parse_args(argv)
    kernel = Matern(args.length_scale, nu=1.5)
    with threadpool_limits(args.threads):
        for name in args.datasets:
            real_data(name, args.seeds[0], kernel, args.reg, args.factors)
        for name in args.capped:
            for seed in args.seeds:
                capped(name, args.n, args.m, seed, args.draws, args.reg, args.length_scale)


if __name__ == "__main__":
    main()

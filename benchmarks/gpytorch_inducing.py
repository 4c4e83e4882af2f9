"""GPyTorch's SGPR on CCPP with inducing points from leverage, uniform and k-means selection.

    python benchmarks/gpytorch_inducing.py [--m 50 200] [--seeds 0 1 2] [--steps 0 100]

For each seed: CCPP split 7568/2000 at random by the seed; X and y standardised on the training
part. The hyper-parameters (ARD RBF length scales, output scale c, noise σ²) come from an exact GP
fitted by GPyTorch on 600 training rows (the same for every method of a seed). Then, for each M
and method, GPyTorch's ``SGPR`` (an ``ExactGP`` over ``InducingPointKernel``) on all training rows
with M inducing points:

* ``leverage``: ``sample_centers(X, M, kernel=c·RBF(ℓ), reg=σ²/n, replace=False)`` through
  :func:`spectral_leverage.interop.to_gpytorch` (its kernel and noise are the GP's);
* ``mixture``: M distinct rows drawn by ½ leverage + ½ uniform probabilities, the rule of
  ``n_centers="auto"`` under a binding memory budget (``--methods`` to ask for it);
* ``uniform``: M distinct training rows uniformly at random;
* ``k-means``: scikit-learn's ``KMeans(M)`` centres.

``--steps 0`` evaluates at those hyper-parameters and inducing points (the selections alone);
``--steps T`` first trains hyper-parameters and inducing points jointly, T Adam steps of the SGPR
marginal likelihood (lr 0.05), as GPyTorch's SGPR example does. Test RMSE (MW) and test NLL (per
point, of standardised y) are printed per run and as means over seeds. One thread
(``torch.set_num_threads(1)``) keeps it fair on a shared machine. tests/interop/test_gpytorch_inducing.py
runs :func:`run` with ``steps=0``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import gpytorch
import numpy as np
import torch
from sklearn.cluster import KMeans
from sklearn.gaussian_process.kernels import RBF, ConstantKernel

from spectral_leverage import SpectralLeverage
from spectral_leverage.interop import gpytorch_kernel, to_gpytorch

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ccpp.csv"
METHODS = ("leverage", "uniform", "k-means")


def load_ccpp(seed: int, n_test: int = 2000):
    """(X_train, y_train, X_test, y_test, y_scale): a random split, standardised on the training part."""
    table = np.loadtxt(DATA, delimiter=",", skiprows=1)
    order = np.random.default_rng(seed).permutation(table.shape[0])
    train, test = table[order[n_test:]], table[order[:n_test]]
    mean, std = train.mean(axis=0), train.std(axis=0)
    train, test = (train - mean) / std, (test - mean) / std
    return train[:, :-1], train[:, -1], test[:, :-1], test[:, -1], float(std[-1])


class _GP(gpytorch.models.ExactGP):
    """Constant mean, and the given covariance module (a kernel, or SGPR's InducingPointKernel)."""

    def __init__(self, X, y, likelihood, covar):
        super().__init__(X, y, likelihood)
        self.mean_module = gpytorch.means.ConstantMean()
        self.covar_module = covar

    def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))


def _train(model, likelihood, X, y, steps: int, lr: float) -> None:
    model.train()
    likelihood.train()
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
    for _ in range(steps):
        optimiser.zero_grad()
        loss = -mll(model(X), y)
        loss.backward()
        optimiser.step()


def hyperparameters(X: np.ndarray, y: np.ndarray, seed: int, n_fit: int = 600, steps: int = 80):
    """(sklearn kernel c·RBF(ℓ) with ARD ℓ, noise σ²) of an exact GP fitted on n_fit rows (by
    Cholesky: GPyTorch's iterative solver beyond 800 rows is slower at these sizes)."""
    rows = np.random.default_rng(seed).choice(X.shape[0], size=min(n_fit, X.shape[0]), replace=False)
    Xs, ys = torch.as_tensor(X[rows]), torch.as_tensor(y[rows])
    likelihood = gpytorch.likelihoods.GaussianLikelihood().double()
    kernel = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel(ard_num_dims=X.shape[1])).double()
    model = _GP(Xs, ys, likelihood, kernel).double()
    with gpytorch.settings.max_cholesky_size(n_fit):
        _train(model, likelihood, Xs, ys, steps, lr=0.1)
    ell = kernel.base_kernel.lengthscale.detach().numpy().ravel()
    c = float(kernel.outputscale.detach())
    return ConstantKernel(c) * RBF(ell), float(likelihood.noise.detach())


def inducing_points(method: str, X: np.ndarray, m: int, kernel, noise: float, seed: int) -> np.ndarray:
    """(m, d) inducing points of one method."""
    if method == "leverage":
        sampler = SpectralLeverage(kernel, noise / X.shape[0], random_state=seed).fit(X)
        return to_gpytorch(sampler, X, m, random_state=seed).inducing_points.numpy()
    if method == "mixture":
        p = SpectralLeverage(kernel, noise / X.shape[0], random_state=seed).fit(X).probabilities_
        rows = np.random.default_rng(seed).choice(X.shape[0], size=m, replace=False, p=0.5 * p + 0.5 / p.size)
        return X[np.sort(rows)]
    if method == "uniform":
        return X[np.random.default_rng(seed).choice(X.shape[0], size=m, replace=False)]
    if method == "k-means":
        return KMeans(m, n_init=1, random_state=seed).fit(X).cluster_centers_
    raise ValueError(f"method must be one of {(*METHODS, 'mixture')}, got {method!r}.")


def sgpr(X, y, Xte, yte, inducing: np.ndarray, kernel, noise: float, steps: int) -> tuple[float, float]:
    """(test RMSE, mean test NLL) in standardised units of GPyTorch's SGPR."""
    Xt, yt = torch.as_tensor(X), torch.as_tensor(y)
    likelihood = gpytorch.likelihoods.GaussianLikelihood().double()
    likelihood.noise = noise
    covar = gpytorch.kernels.InducingPointKernel(gpytorch_kernel(kernel, X.shape[1], dtype=torch.float64),
                                                 inducing_points=torch.as_tensor(inducing),
                                                 likelihood=likelihood)
    model = _GP(Xt, yt, likelihood, covar).double()
    _train(model, likelihood, Xt, yt, steps, lr=0.05)
    model.eval()
    likelihood.eval()
    with torch.no_grad(), gpytorch.settings.fast_pred_var(False):
        predictive = likelihood(model(torch.as_tensor(Xte)))
        mean, var = predictive.mean.numpy(), predictive.variance.numpy()
    rmse = float(np.sqrt(np.mean((mean - yte) ** 2)))
    nll = float(np.mean(0.5 * np.log(2 * np.pi * var) + 0.5 * (yte - mean) ** 2 / var))
    return rmse, nll


def run(ms=(50, 200), seeds=(0, 1, 2), steps: int = 0, methods=METHODS, hyper: str = "gp") -> list[dict]:
    """One row per (seed, M, method): test RMSE in MW, test NLL, seconds to select the points.
    ``hyper="gp"``: :func:`hyperparameters`; ``"krr-cv"``: RBF ℓ = 0.62, c = 1, σ² = nλ with
    λ = 1.9e-5, the kernel and λ NystromKRRCV chose on CCPP (docs/notes/krr-cv.md)."""
    torch.set_num_threads(1)
    rows = []
    for seed in seeds:
        X, y, Xte, yte, scale = load_ccpp(seed)
        kernel, noise = (hyperparameters(X, y, seed) if hyper == "gp"
                         else (ConstantKernel(1.0) * RBF(0.62), 1.9e-5 * X.shape[0]))
        for m in ms:
            for method in methods:
                start = time.perf_counter()
                points = inducing_points(method, X, m, kernel, noise, seed)
                seconds = time.perf_counter() - start
                rmse, nll = sgpr(X, y, Xte, yte, points, kernel, noise, steps)
                rows.append(dict(seed=seed, m=m, method=method, steps=steps, hyper=hyper,
                                 rmse=rmse * scale, nll=nll, select_seconds=seconds))
    return rows


def summary(rows: list[dict]) -> list[dict]:
    """Means over seeds per (hyper-parameters, steps, M, method)."""
    keys = sorted({(r["hyper"], r["steps"], r["m"], r["method"]) for r in rows},
                  key=lambda k: (k[0], k[1], k[2], (*METHODS, "mixture").index(k[3])))
    out = []
    for hyper, steps, m, method in keys:
        key = (hyper, steps, m, method)
        group = [r for r in rows if (r["hyper"], r["steps"], r["m"], r["method"]) == key]
        out.append(dict(hyper=hyper, steps=steps, m=m, method=method, seeds=len(group),
                        rmse=float(np.mean([r["rmse"] for r in group])),
                        nll=float(np.mean([r["nll"] for r in group])),
                        select_seconds=float(np.median([r["select_seconds"] for r in group]))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, nargs="+", default=[0, 50])
    parser.add_argument("--hyper", nargs="+", default=["gp"], choices=["gp", "krr-cv"])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=[*METHODS, "mixture"])
    args = parser.parse_args()
    rows = [row for hyper in args.hyper for steps in args.steps
            for row in run(args.m, args.seeds, steps, methods=args.methods, hyper=hyper)]
    print("| hyper | steps | seed | M | method | test RMSE (MW) | test NLL | select s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['hyper']} | {r['steps']} | {r['seed']} | {r['m']} | {r['method']} | {r['rmse']:.3f} "
              f"| {r['nll']:.4f} | {r['select_seconds']:.2f} |")
    print("\nMeans over seeds (selection seconds: median)\n")
    print("| hyper | steps | M | method | seeds | test RMSE (MW) | test NLL | select s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in summary(rows):
        print(f"| {r['hyper']} | {r['steps']} | {r['m']} | {r['method']} | {r['seeds']} | {r['rmse']:.3f} "
              f"| {r['nll']:.4f} | {r['select_seconds']:.2f} |")


if __name__ == "__main__":
    main()

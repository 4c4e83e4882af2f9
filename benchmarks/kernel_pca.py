"""NystromKernelPCA: captured variance against exact kernel PCA, speed against scikit-learn, scale.

    python benchmarks/kernel_pca.py table [--n 5000] [--seeds 5]
    python benchmarks/kernel_pca.py speed [--n 20000] [--seeds 5] [--sklearn-repeats 3]
    python benchmarks/kernel_pca.py scale [--n 1000000] [--d 8]

``table``: the kernel PCA issue's table. CCPP and CASP (../shared/data), one uniform subsample of
n rows, standardised features, ℓ = 1, RBF and Matérn 1.5, k ∈ {5, 20}, m = 50 landmarks. Captured
variance trace(U_kᵀ K_c U_k) / (λ_1 + … + λ_k) of the exact centred kernel K_c (top-k eigenvalues by
``eigsh``), U_k = ``eigenvectors_``; mean (and minimum) over seeds for the landmark rules: uniform,
spectral leverage at the regression λ = n^-3/4 (the issue's column), spectral leverage at the λ
whose spectral d_eff is k, randomly pivoted Cholesky, converged k-means centres (scikit-learn's
``KMeans``, one k-means++ start), random Fourier features of width m, and the default (k-means, ten
Lloyd iterations) at m = 50, at m = 200 and at ``n_landmarks="auto"`` (m = 100 for k = 5, 200 for
k = 20).

``speed``: CASP, n rows, RBF ℓ = 1, k = 20: median seconds of ``fit_transform`` for the default
estimator and for scikit-learn's ``KernelPCA(eigen_solver="randomized")`` in the same run, and the
captured variance of both. The reference eigenvalues come from ``eigsh`` on the dense centred kernel
matrix, formed once after the timings (8·n² bytes: the reference only).

``scale``: synthetic Gaussian inputs (n × d, standardised), RBF ℓ = 1, k = 20, default estimator:
``fit_transform`` time and the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
from scipy.sparse.linalg import eigsh
from sklearn.cluster import KMeans
from sklearn.decomposition import KernelPCA
from sklearn.gaussian_process.kernels import RBF, Matern

from spectral_leverage import NystromKernelPCA, SpectralLeverage

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
KERNELS = {"RBF": RBF(1.0), "Matérn 1.5": Matern(1.0, nu=1.5)}
COLUMNS = ["uniform", "spectral n^-3/4", "spectral d_eff=k", "rp-cholesky", "k-means", "fourier",
           "default", "default m=200", "default auto-m"]


def load(name: str, n: int | None, seed: int = 0) -> np.ndarray:
    """Standardised features of ../shared/data/<name>.csv, a uniform subsample of n rows."""
    X = np.loadtxt(DATA / f"{name}.csv", delimiter=",", skiprows=1)[:, :-1]
    if n is not None and n < X.shape[0]:
        X = X[np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))]
    return (X - X.mean(axis=0)) / X.std(axis=0)


def centred(K: np.ndarray) -> np.ndarray:
    """H K H in place (H = I − 11ᵀ/n)."""
    row = K.mean(axis=0)
    K -= row
    K -= row[:, None]
    K += row.mean()
    return K


def reference(Kc: np.ndarray, k: int) -> np.ndarray:
    """The exact top-k eigenvalues of the centred kernel matrix, decreasing."""
    return np.sort(eigsh(Kc, k=k, which="LA", return_eigenvectors=False, tol=1e-10))[::-1]


def captured(Kc: np.ndarray, top: np.ndarray, U) -> float:
    """trace(Uᵀ K_c U) / (λ_1 + … + λ_k) for orthonormal columns U (n, k)."""
    U = np.asarray(U)
    return float(np.einsum("ij,ij->", U, Kc @ U) / top[: U.shape[1]].sum())


def matched_reg(X: np.ndarray, kernel, d_eff: float) -> float:
    """λ at which SpectralLeverage's effective dimension is ``d_eff`` (bisection in log λ)."""
    low, high = -8.0, 2.0  # log10 λ: d_eff decreases in λ
    for _ in range(20):
        mid = (low + high) / 2
        est = SpectralLeverage(kernel, reg=10**mid, random_state=0).fit(X).effective_dimension_
        low, high = (mid, high) if est > d_eff else (low, mid)
    return 10 ** ((low + high) / 2)


def estimator(column: str, kernel, k: int, m: int, seed: int, spectral=None) -> NystromKernelPCA:
    options = {"uniform": dict(sampler="uniform"), "rp-cholesky": dict(sampler="rp-cholesky"),
               "k-means": dict(sampler=KMeans(n_init=1, random_state=seed)),
               "fourier": dict(approximation="fourier"), "default": {},
               "default m=200": dict(n_landmarks=200), "default auto-m": dict(n_landmarks="auto")}
    kwargs = dict(sampler=spectral) if column.startswith("spectral") else options[column]
    kwargs.setdefault("n_landmarks", m)
    return NystromKernelPCA(k, kernel=kernel, random_state=seed, **kwargs)


def table(args) -> None:
    print(f"captured variance, n = {args.n}, m = {args.m}, mean (min) over {args.seeds} seeds; "
          f"'default auto-m' uses n_landmarks='auto'\n")
    print("| data, kernel, k | " + " | ".join(COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    for data in ("ccpp", "casp"):
        X = load(data, args.n)
        n = X.shape[0]
        for kname, kernel in KERNELS.items():
            Kc = centred(kernel(X))
            top = reference(Kc, max(args.ks))
            regression = SpectralLeverage(kernel, reg=n**-0.75, random_state=0).fit(X)
            for k in args.ks:
                matched = SpectralLeverage(kernel, reg=matched_reg(X, kernel, k),
                                           random_state=0).fit(X)
                spectral = {"spectral n^-3/4": regression, "spectral d_eff=k": matched}
                cells = []
                for column in COLUMNS:
                    values = [captured(Kc, top, estimator(column, kernel, k, args.m, seed,
                                                          spectral.get(column)).fit(X).eigenvectors_)
                              for seed in range(args.seeds)]
                    cells.append(f"{np.mean(values):.4f} ({np.min(values):.4f})")
                print(f"| {data.upper()}, {kname}, k = {k} | " + " | ".join(cells) + " |",
                      flush=True)
            del Kc


def timed(make, X: np.ndarray, seeds: int) -> tuple[float, list]:
    """Median seconds of ``make(seed).fit_transform(X)`` over seeds, and the ``eigenvectors_``."""
    times, outputs = [], []
    for seed in range(seeds):
        model = make(seed)
        start = time.perf_counter()
        model.fit_transform(X)
        times.append(time.perf_counter() - start)
        outputs.append(model.eigenvectors_)
    return float(np.median(times)), outputs


def speed(args) -> None:
    X = load("casp", args.n)
    k = 20
    ours_time, ours = timed(lambda s: NystromKernelPCA(k, kernel=RBF(1.0), random_state=s), X,
                            args.seeds)
    sk_time, theirs = timed(lambda s: KernelPCA(k, kernel="rbf", gamma=0.5,
                                                eigen_solver="randomized", random_state=s), X,
                            args.sklearn_repeats)
    Kc = centred(RBF(1.0)(X))
    top = reference(Kc, k)
    ours_cv = [captured(Kc, top, U) for U in ours]
    sk_cv = [captured(Kc, top, U) for U in theirs]
    print(f"CASP n = {X.shape[0]}, RBF ℓ = 1, k = {k}; NystromKernelPCA defaults (m = 200)\n")
    print("| estimator | median fit_transform s | captured variance mean (min) |")
    print("|---|---|---|")
    print(f"| NystromKernelPCA ({args.seeds} seeds) | {ours_time:.3f} | {np.mean(ours_cv):.5f} "
          f"({np.min(ours_cv):.5f}) |")
    print(f"| KernelPCA randomized ({args.sklearn_repeats} seeds) | {sk_time:.3f} | "
          f"{np.mean(sk_cv):.5f} ({np.min(sk_cv):.5f}) |")
    print(f"\nspeed-up (ratio of medians): {sk_time / ours_time:.1f}×")


def peak_rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def scale(args) -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((args.n, args.d))
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    before = peak_rss_mib()
    kpca = NystromKernelPCA(20, kernel=RBF(1.0), random_state=0)
    start = time.perf_counter()
    Y = kpca.fit_transform(X)
    elapsed = time.perf_counter() - start
    print(f"n = {args.n}, d = {args.d}, RBF ℓ = 1, k = 20, m = {kpca.n_landmarks_}: "
          f"fit_transform {elapsed:.1f} s; peak RSS {peak_rss_mib():.0f} MiB (after the data "
          f"{before:.0f} MiB; X is {X.nbytes / 2**20:.0f} MiB, the output {Y.nbytes / 2**20:.0f} MiB, "
          f"an n×m block would be {8 * args.n * kpca.n_landmarks_ / 2**20:.0f} MiB)")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("table")
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--m", type=int, default=50)
    p.add_argument("--ks", type=int, nargs="+", default=[5, 20])
    p.add_argument("--seeds", type=int, default=5)
    p = sub.add_parser("speed")
    p.add_argument("--n", type=int, default=20000)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--sklearn-repeats", type=int, default=3)
    p = sub.add_parser("scale")
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--d", type=int, default=8)
    args = parser.parse_args(argv)
    {"table": table, "speed": speed, "scale": scale}[args.command](args)


if __name__ == "__main__":
    main()

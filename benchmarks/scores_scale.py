"""Time SpectralLeverage on large synthetic data, split by stage, against the k-NN query floor.

    python benchmarks/scores_scale.py [--n 1000000] [--d 3] [--repeats 3] [--design bimodal]
        [--algorithm auto] [--stages all|fit|floor]

Prints one table row per stage (median of the repeats): the KDE (anchors + interpolation), the
quadrature, the whole fit, and for reference one pykdtree self-query with k = 1 and k = 32 on the
same data, then the fit's median over the k = 32 query's. Designs: "bimodal"
0.9·U[0,1]^d + 0.1·N(1.5, 0.05²·I) (the bimodal design of the tests), "uniform" U[0,1]^d,
"manifold" U[0,1]³ embedded in R^d by a random orthonormal map plus N(0, 0.01²·I) noise (the
embedded cube of the tests; d >= 3). ``--stages fit`` times only the fit, ``floor`` only the
k = 32 query (``--algorithm density`` is the density path alone, issue 22's point 3): a base and
a head commit can then be timed in turn, ``PYTHONPATH`` choosing the package.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
from pykdtree.kdtree import KDTree
from sklearn.gaussian_process.kernels import Matern

from spectral_leverage import SpectralLeverage
from spectral_leverage.datasets import make_bimodal, make_embedded
from spectral_leverage.density import TreeDensity


def timed(fn) -> tuple[float, float]:
    """(wall seconds, the process's CPU seconds) of ``fn()``: with one thread (OMP_NUM_THREADS=1
    OPENBLAS_NUM_THREADS=1) the CPU time is what a quiet machine's wall time would be."""
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - start, time.process_time() - cpu


def make_design(design: str, n: int, d: int) -> np.ndarray:
    """The ``design``'s n × d inputs (module docstring), seed 0."""
    if design == "bimodal":
        return make_bimodal(n, d, random_state=0)
    rng = np.random.default_rng(0)
    if design == "uniform":
        return rng.uniform(size=(n, d))
    return make_embedded(n, d, random_state=rng)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--design", choices=("bimodal", "uniform", "manifold"), default="bimodal")
    parser.add_argument("--algorithm", choices=("auto", "density", "full-scale"), default="auto")
    parser.add_argument("--stages", choices=("all", "fit", "floor"), default="all")
    args = parser.parse_args()
    X = make_design(args.design, args.n, args.d)
    kernel, reg = Matern(length_scale=0.5, nu=1.5), args.n**-0.75
    rows: dict[str, list[tuple[float, float]]] = {}

    def add(name: str, seconds: tuple[float, float]) -> None:
        rows.setdefault(name, []).append(seconds)

    for _ in range(args.repeats):
        if args.stages == "all":
            add("pykdtree self-query k=1 (floor)", timed(lambda: KDTree(X).query(X, k=1)))
        if args.stages != "fit":
            add("pykdtree self-query k=32", timed(lambda: KDTree(X).query(X, k=32)))
        if args.stages == "floor":
            continue
        if args.stages == "all":
            add("density (TreeDensity fit + density)",
                timed(lambda: TreeDensity(random_state=0).fit(X).density(X)))
        sl = SpectralLeverage(kernel, reg, algorithm=args.algorithm, random_state=0)
        add("SpectralLeverage.fit (total)", timed(lambda: sl.fit(X)))  # noqa: B023
        if args.stages == "all":
            density = sl.density_
            add("quadrature (h on the p-grid + interpolation)",
                timed(lambda: sl._scores_from_density(density, args.n)))  # noqa: B023
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    path = "" if args.stages == "floor" else \
        f" (d' = {sl.intrinsic_dim_:.2f}, {type(sl._model).__name__})"
    print(f"n = {args.n:,}, d = {args.d}, {args.design}, algorithm={args.algorithm!r}{path}, "
          f"Matern(0.5, 1.5), reg = n^-3/4, {args.repeats} repeats")
    print(f"{'stage':48s} {'median s':>9s} {'min s':>7s} {'max s':>7s} {'median CPU s':>13s}")
    for name, values in rows.items():
        wall, cpu = np.array(values).T
        print(f"{name:48s} {np.median(wall):9.2f} {wall.min():7.2f} {wall.max():7.2f} {np.median(cpu):13.2f}")
    if args.stages == "all":
        fit, floor = (np.median(np.array(rows[name]), axis=0) for name in
                      ("SpectralLeverage.fit (total)", "pykdtree self-query k=32"))
        print(f"fit / k=32 query: {fit[0] / floor[0]:.2f} (wall), {fit[1] / floor[1]:.2f} (CPU)")
    print(f"peak resident memory of the process: {peak_gb:.2f} GB")


if __name__ == "__main__":
    main()

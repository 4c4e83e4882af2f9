"""The near field's two routes for its blocks, timed over the blocks' rows u and the pivots m: the
downdate (u×u matrices, ``NearField._downdate``, block by block) against conditioning on every row
(an m×m precision, ``NearField._leverage_given_all``, in batches), each through
``NearField.leverage`` as the fit calls it, with their products in float32 (where n λ allows it,
``full_scale.SINGLE_GAMMA``) or float64. ``_conditional.GIVEN_ALL_RATIO`` is read off this table:
the route given every row is taken where m < ratio · u.

    OPENBLAS_NUM_THREADS=1 python benchmarks/near_block_routes.py

Standard normal rows in 8-D (20 000), RBF at ℓ = 1, λ = 1/n; m pivots drawn uniformly, the far
field summed over all rows as the fit sums it; each block is a random row's u nearest rows, its
u // 24 members last (as in the fit's groups). Milliseconds a block, the median of five passes over
the same 40 blocks, one BLAS thread; the two routes' largest relative difference beside them.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from pykdtree.kdtree import KDTree
from scipy import linalg
from sklearn.gaussian_process.kernels import RBF

from spectral_leverage._blocks import MAX_BLOCK_BYTES, limit_threads
from spectral_leverage.kernels import parse_kernel
from spectral_leverage.pivoted_cholesky import inverse_sqrt
from spectral_leverage.spectral import _conditional
from spectral_leverage.spectral._conditional import Factor, NearField, far_field

ROWS, DIM, BLOCKS, PASSES = 20_000, 8, 40, 5


def near_field(X: np.ndarray, m: int, rng: np.random.Generator, single: bool) -> NearField:
    """The fit's NearField for m uniformly drawn pivots of X (RBF, ℓ = 1, γ = nλ = 1), its products
    in float32 if ``single``."""
    kernel = RBF(1.0)
    pivot_rows = X[rng.choice(len(X), m, replace=False)]
    factor = Factor(kernel, pivot_rows, inverse_sqrt(kernel(pivot_rows)))
    precision, _ = far_field(X, factor, 1.0, 8.0 * (m + factor.rank), 2.0**28, False, None,
                             (np.eye(factor.rank), 0.0))
    values, vectors = linalg.eigh(precision)
    return NearField(parse_kernel(kernel), factor.rotated(vectors), 1.0 / np.sqrt(values), 1.0, None,
                     single=single)


def blocks(X: np.ndarray, field: NearField, u: int, rng: np.random.Generator) -> tuple:
    """BLOCKS blocks of u rows, as :meth:`NearField.leverage` takes them: (the rows, their factor
    rows, each block's ids into them, each block's members)."""
    _, near = KDTree(X).query(X[rng.choice(len(X), BLOCKS, replace=False)], k=u)
    points = X[near[:, ::-1].ravel()]  # each block's nearest rows last: its members
    return (points, field.factor_rows(points, None, 2.0**26), list(np.arange(BLOCKS * u).reshape(BLOCKS, u)),
            [max(1, u // 24)] * BLOCKS)


def timed(field: NearField, case: tuple, ratio: float) -> tuple[float, list]:
    """(median ms a block over PASSES passes, the last pass's answers), each block taking the route
    given every row where its rows times ``ratio`` exceed the pivots."""
    times = []
    _conditional.GIVEN_ALL_RATIO = ratio
    for _ in range(PASSES):
        start = time.perf_counter()
        answers = field.leverage(*case, MAX_BLOCK_BYTES)
        times.append((time.perf_counter() - start) / BLOCKS * 1e3)
    return float(np.median(times)), answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--u", default="33,66,132,198,264", help="block rows, comma separated")
    parser.add_argument("--m", default="32,64,96,128,192,256,512", help="pivots, comma separated")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((ROWS, DIM))
    print("| products | u | m | m / u | downdate ms | given every row ms | ratio | largest difference |")
    print("|---|---|---|---|---|---|---|---|")
    with limit_threads(1):
        for single in (True, False):
            for m in map(int, args.m.split(",")):
                field = near_field(X, m, rng, single)
                for u in map(int, args.u.split(",")):
                    case = blocks(X, field, u, rng)
                    down, a = timed(field, case, 0.0)
                    given, b = timed(field, case, np.inf)
                    gap = max(np.max(np.abs(x - y) / y) for x, y in zip(a, b, strict=True))
                    print(f"| {'float32' if single else 'float64'} | {u} | {m} | {m / u:.2f} | {down:.3f} "
                          f"| {given:.3f} | {given / down:.2f} | {gap:.1e} |", flush=True)


if __name__ == "__main__":
    main()

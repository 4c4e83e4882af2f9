"""The near field's neighbour search: the exact k-d tree against faiss's inverted lists
(``NeighbourIndex``), k + 1 = 33 nearest rows of every row, in the near field's order (rows sorted by
their nearest of n / 512 anchors, queried in blocks of 4096).

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/neighbours.py --n 100000,1000000 --d 6,7,8 \\
        --out benchmarks/results_neighbours.jsonl        # and --n 100000 --d 4,16

Process CPU seconds, one thread (the index is built and queried under ``limit_threads(1)``). Recall:
the share of the exact 33 neighbours found, over 5000 rows drawn at random. The exact query of all
rows is timed up to ``--exact-rows`` rows (default 2·10^5); beyond, on 50 000 rows of the same
order, scaled to n (marked "~"). Standard normal rows, or ``--design bimodal`` (two unit Gaussians
four apart along the first axis). Rows are appended to ``--out`` as they finish; ``--summarise FILE``
prints the table.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _rows import append_row, parse_run_args, read_rows
from pykdtree.kdtree import KDTree

from spectral_leverage._blocks import limit_threads, openmp_at_most
from spectral_leverage.backends._neighbours import NeighbourIndex, faiss_module
from spectral_leverage.metrics import neighbour_recall

K = 33
BLOCK = 4096
PROBE = 5000
TIMED_ROWS = 50_000


def design(name: str, n: int, d: int) -> np.ndarray:
    X = np.random.default_rng(0).standard_normal((n, d))
    if name == "bimodal":
        X[: n // 2, 0] += 4.0
    return X


def near_field_order(X: np.ndarray) -> np.ndarray:
    """The rows sorted by their nearest anchor (n / 512 rows drawn at random), as the near field
    hands them over."""
    anchors = X[np.random.default_rng(1).choice(len(X), max(1, len(X) // 512), replace=False)]
    _, label = KDTree(anchors).query(X, k=1)
    return np.argsort(label.ravel(), kind="stable")


def timed_queries(index: NeighbourIndex, X: np.ndarray, rows: np.ndarray) -> tuple[float, np.ndarray]:
    start = time.process_time()
    found = np.concatenate([index.query(X[rows[i:i + BLOCK]], K) for i in range(0, len(rows), BLOCK)])
    return time.process_time() - start, found


def measure(name: str, n: int, d: int, exact_rows: int) -> dict:
    X = design(name, n, d)
    order = near_field_order(X)
    probe = np.sort(np.random.default_rng(2).choice(n, PROBE, replace=False))
    row = {"design": name, "n": n, "d": d, "k": K}
    start = time.process_time()
    exact = NeighbourIndex(X, approximate=False)
    row["exact_build"] = time.process_time() - start
    timed = order if n <= exact_rows else order[:: -(-n // TIMED_ROWS)]
    seconds, _ = timed_queries(exact, X, timed)
    row["exact_query"], row["exact_scaled"] = seconds * n / len(timed), n > exact_rows
    truth = exact.query(X[probe], K)
    del exact
    start = time.process_time()
    approximate = NeighbourIndex(X, approximate=True, rng=np.random.default_rng(0))
    row["approximate_build"] = time.process_time() - start
    row["approximate_query"], found = timed_queries(approximate, X, order)
    found[order] = found.copy()
    row["recall"] = neighbour_recall(found[probe], truth)
    return row


def summarise(rows: list[dict]) -> None:
    print("| design | n | d | exact: build + query, CPU s | approximate: build + query | exact / approximate "
          "| recall@33 |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        exact = r["exact_build"] + r["exact_query"]
        approximate = r["approximate_build"] + r["approximate_query"]
        mark = "~" if r["exact_scaled"] else ""
        print(f"| {r['design']} | {r['n']:,} | {r['d']} | {mark}{exact:.1f} ({r['exact_build']:.1f} + "
              f"{mark}{r['exact_query']:.1f}) | {approximate:.1f} ({r['approximate_build']:.1f} + "
              f"{r['approximate_query']:.1f}) | {mark}{exact / approximate:.1f} | {r['recall']:.4f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="100000", help="comma-separated row counts")
    parser.add_argument("--d", default="8", help="comma-separated dimensions")
    parser.add_argument("--design", default="normal", choices=["normal", "bimodal"])
    parser.add_argument("--exact-rows", type=int, default=200_000)
    args = parse_run_args(parser, summarise)
    if args is None:
        return
    done = {(r["design"], r["n"], r["d"]) for r in read_rows(args.out)}
    if faiss_module() is None:  # loaded first, so that its OpenMP runtime is held to one thread too
        raise SystemExit('faiss is not installed: pip install ".[ann]"')
    with limit_threads(1), openmp_at_most(1):
        for n in (int(v) for v in args.n.split(",")):
            for d in (int(v) for v in args.d.split(",")):
                if (args.design, n, d) not in done:
                    append_row(args.out, measure(args.design, n, d, args.exact_rows))
    if args.out is not None:
        summarise(read_rows(args.out))


if __name__ == "__main__":
    main()

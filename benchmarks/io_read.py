"""Time spectral_leverage.io.read_table on a CSV of n rows and d columns (median of repeats).

    python benchmarks/io_read.py [--n 1000000] [--d 3] [--repeats 5]
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from spectral_leverage.io import read_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--d", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    n = int(args.n)
    X = np.random.default_rng(0).normal(size=(n, args.d))
    with tempfile.TemporaryDirectory() as folder:
        print(f"{'file':>14s} {'n':>9s} {'d':>3s} {'median s':>9s} {'min s':>7s}")
        for name, header in (("header.csv", "a,b,c"), ("plain.csv", None), ("header.csv.gz", "a,b,c")):
            path = Path(folder) / name
            np.savetxt(path, X, delimiter=",", fmt="%.10g", comments="",
                       header=",".join(f"x{j}" for j in range(args.d)) if header else "")
            if header is None:  # savetxt writes an empty first line for header=""
                path.write_text(path.read_text().lstrip("\n"))
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                read_table(str(path))
                times.append(time.perf_counter() - start)
            print(f"{name:>14s} {n:9d} {args.d:3d} {statistics.median(times):9.3f} {min(times):7.3f}")


if __name__ == "__main__":
    main()

"""``validate``: the validation suite (report.md, figures, results.json)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from ..io import InputError
from ._common import check_positive, show_progress

__all__ = ["add_parser"]


def _validate(args: argparse.Namespace) -> int:
    from tqdm.contrib.logging import logging_redirect_tqdm

    from ..validation import run_validation

    for option, value in (("--nu", args.nu), ("--length-scale", args.length_scale), ("--reg", args.reg)):
        check_positive(option, value)
    if args.blas_threads < 0:
        raise InputError(f"--blas-threads must be >= 0, got {args.blas_threads}")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {args.out} exists and is not a directory")
    logging.getLogger("spectral_leverage").setLevel(logging.WARNING)  # no per-fit timings
    level = logging.WARNING if args.quiet else logging.INFO
    logging.getLogger("spectral_leverage.validation").setLevel(level)
    logging.getLogger("matplotlib").setLevel(logging.WARNING)
    try:
        with logging_redirect_tqdm():
            results = run_validation(out, quick=args.quick, data=args.data, random_state=args.seed,
                                     nu=args.nu, length_scale=args.length_scale, reg=args.reg,
                                     blas_threads=args.blas_threads or None, progress=show_progress(args))
    except ImportError as err:
        raise InputError(str(err)) from None
    print(f"wrote {out / 'report.md'}, {out / 'results.json'} and {len(results['figures'])} figures "
          f"in {results['meta']['wall_seconds']:.0f} s")
    return 0


def add_parser(sub) -> None:
    validate = sub.add_parser("validate", help="the validation suite: report.md, figures, results.json")
    validate.add_argument("--quick", action="store_true", help="small sizes: under 3 minutes on 2 cores")
    validate.add_argument("--data", action="append", default=[], metavar="FILE.csv",
                          help="CSV data set (header row, numeric columns, target last); repeatable "
                               "(default: ../shared/data/*.csv beside the project, if present)")
    validate.add_argument("--out", default="report", help="output directory (default report)")
    validate.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    validate.add_argument("--nu", type=float, default=1.5, help="Matérn smoothness (default 1.5)")
    validate.add_argument("--length-scale", type=float, default=None,
                          help="kernel length scale (default 0.5 on synthetic, 1 on standardised data)")
    validate.add_argument("--reg", type=float, default=None, help="regulariser λ > 0 (default n^-3/4)")
    validate.add_argument("--blas-threads", type=int, default=1,
                          help="BLAS/OpenMP threads during the run (default 1: reproducible timings, and "
                               "far faster on a busy shared machine); 0 leaves the library default")
    validate.add_argument("--quiet", action="store_true", help="no progress bars or log messages")
    validate.set_defaults(run=_validate)

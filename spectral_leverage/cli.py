"""The ``spectral-leverage`` command: ridge leverage scores of the rows of a data file.

Sub-commands
------------
``scores DATA -o OUT``
    Rescaled leverage scores, leverage and sampling probabilities of the rows of DATA.
``sample DATA -m M -o OUT``
    M distinct row indices drawn by leverage (one per line, or an .npy array).
``demo``
    Spectral vs exact scores on built-in synthetic data (no download).
``validate [--quick] [--data FILE.csv ...] [--out DIR]``
    The validation suite (:func:`spectral_leverage.validation.run_validation`): report.md, PNG
    figures and results.json in DIR (needs matplotlib: ``pip install "spectral_leverage[validate]"``).

DATA and OUT are tables (:mod:`spectral_leverage.io`): CSV, TSV or text (compressed or not),
Parquet or .npy by extension, ``-`` for standard input or output. Errors in the input or the
options end the command with exit code 2 and a one-line message on stderr, before any data are
read where they can be. An output file is written whole or not at all: a write that fails (a full
disk) is a one-line message and exit code 1, Ctrl-C is exit code 130, and either leaves a previous
output as it was.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
import time
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np
from sklearn.gaussian_process.kernels import RBF, Matern
from sklearn.linear_model import LinearRegression

from ._validation import warn_constant_features
from .datasets import make_bimodal
from .io import (
    FORMATS,
    InputError,
    OutputError,
    check_delimiter,
    check_writable,
    is_standard_output,
    read_table,
    write_table,
)
from .metrics import score_accuracy
from .samplers import SAMPLERS, make_sampler
from .samplers.exact import exact_leverage
from .spectral import SpectralLeverage

__all__ = ["main"]

logger = logging.getLogger(__name__)

#: a last column predicted this well (R²) by a linear fit on the others looks like a target
TARGET_R2 = 0.9

DESCRIPTION = """\
Ridge leverage scores of the rows of a data file, in near-linear time (the spectral method of
Chen & Yang, 2021), or by any method of the literature for comparison.

examples:
  spectral-leverage scores data.csv --standardize --drop-target --reg 1e-3 -o scores.csv
  spectral-leverage sample data.parquet -m 500 --reg 1e-3 -o centres.txt
  zcat data.csv.gz | spectral-leverage scores - --reg 1e-3 -o - | head
  spectral-leverage demo
  spectral-leverage validate --quick --out report/
"""


#: the library's own warning of constant columns, which the command gives with the columns' numbers
CONSTANT_FEATURES = r"features \[.*\] are constant"


def _positive(option: str, value: float | None) -> None:
    """``InputError`` unless ``value`` (of ``option``) is None or a finite number > 0."""
    if value is not None and not (value > 0 and math.isfinite(value)):
        raise InputError(f"{option} must be a finite number > 0, got {value}")


def _kernel(args: argparse.Namespace):
    _positive("--length-scale", args.length_scale)
    _positive("--nu", args.nu)
    if args.kernel == "rbf":
        return RBF(length_scale=args.length_scale)
    return Matern(length_scale=args.length_scale, nu=args.nu)


def _check_options(args: argparse.Namespace) -> None:
    """Every option of ``scores`` and ``sample``, and the output path, checked before any data are
    read (only -m against the number of rows waits for them)."""
    _positive("--reg", args.reg)
    _kernel(args)
    args.delimiter = check_delimiter(args.delimiter)
    if getattr(args, "m", 1) < 1:
        raise InputError(f"-m must be at least 1, got {args.m}")
    if args.seed < 0:
        raise InputError(f"--seed must be >= 0, got {args.seed}")
    check_writable(args.output)


def _load(args: argparse.Namespace) -> np.ndarray:
    _check_options(args)
    X = read_table(args.data, drop_target=args.drop_target, header=args.header,
                   delimiter=args.delimiter)
    if X.shape[0] < 2:
        raise InputError(f"{args.data}: need at least 2 rows, got {X.shape[0]}")
    scale = X.std(axis=0)
    warn_constant_features(scale, [f"column {j + 1}" for j in range(X.shape[1])])
    if not args.drop_target:
        _warn_if_target(X)
    if args.standardize:
        X = (X - X.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
    elif np.any(scale > 0) and scale.max() > 100 * scale[scale > 0].min():
        logger.warning("the columns' standard deviations differ by %.0fx, so the kernel sees mostly the "
                       "widest ones: pass --standardize (and --drop-target if the last column is a "
                       "target)", scale.max() / scale[scale > 0].min())
    return X


def _warn_if_target(X: np.ndarray) -> None:
    """A last column that is nearly a linear function of the others is likely a target (CCPP's
    power output: R² 0.93); scores of inputs and target together mean little."""
    if X.shape[1] < 2 or X.shape[0] <= X.shape[1] or np.ptp(X[:, -1]) == 0:
        return
    r2 = LinearRegression().fit(X[:, :-1], X[:, -1]).score(X[:, :-1], X[:, -1])
    if r2 > TARGET_R2:
        logger.warning("the last column is nearly a linear function of the others (R² = %.2f), as a "
                       "target is: pass --drop-target if it is one", r2)


def _progress(args: argparse.Namespace) -> bool:
    """Progress bars where tqdm would show them by itself: on a terminal, unless --quiet."""
    return not args.quiet and sys.stderr.isatty()


def _log_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """The library's warnings as one-line log records (no source line), like the command's own;
    advice to standardise X or drop a target column names the options that do it."""
    hint = (" (here: --standardize, and --drop-target if the last column is a target)"
            if "standardise X" in str(message) else "")
    logging.getLogger("spectral_leverage").warning("%s%s", message, hint)


def _report(args: argparse.Namespace, message: str) -> None:
    """A one-line summary: on stdout, unless the table itself goes there."""
    print(message, file=sys.stderr if is_standard_output(args.output) else sys.stdout)


def _fitted_sampler(args: argparse.Namespace, X: np.ndarray):
    """The chosen method fitted on X (the options were checked by :func:`_load`); the library's
    warning of constant columns is left out, :func:`_load` gave it with the columns' numbers."""
    sampler = make_sampler(args.method, kernel=_kernel(args), reg=args.reg, random_state=args.seed)
    if "verbose" in sampler.get_params():
        sampler.set_params(verbose=_progress(args))
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", CONSTANT_FEATURES, UserWarning)
        sampler.fit(X)
    logging.getLogger(__name__).info("%s scores for %d rows in %.2f s", args.method, X.shape[0],
                                     time.perf_counter() - start)
    return sampler


def _scores(args: argparse.Namespace) -> int:
    sampler = _fitted_sampler(args, _load(args))
    table = np.column_stack([sampler.scores_, sampler.leverage_, sampler.probabilities_])
    write_table(args.output, table, ["score", "leverage", "probability"], "%.10g")
    _report(args, f"wrote {table.shape[0]} rows to {args.output} "
                  f"(effective dimension {sampler.effective_dimension_:.4g})")
    return 0


def _sample(args: argparse.Namespace) -> int:
    X = _load(args)
    if args.m > X.shape[0]:
        raise InputError(f"-m must be at most the {X.shape[0]} rows of {args.data}, got {args.m}")
    sampler = _fitted_sampler(args, X)
    indices = np.sort(sampler.sample(args.m, replace=False, random_state=args.seed))
    if Path(args.output).suffix == ".npy":
        write_table(args.output, indices, [], "%d")
    else:
        write_table(args.output, indices[:, None], ["index"], "%d")
    _report(args, f"wrote {indices.size} indices to {args.output}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    if args.n < 2:
        raise InputError(f"--n must be at least 2, got {args.n}")
    rng = np.random.default_rng(args.seed)
    n, kernel = args.n, Matern(length_scale=0.5, nu=1.5)
    reg = n**-0.75
    print(f"Spectral vs exact ridge leverage: Matern(nu=1.5, length_scale=0.5), reg = n^-3/4, n = {n}")
    print(f"{'design':14s} {'spectral s':>10s} {'exact s':>8s} {'mean R-ACC':>10s} {'5th':>6s} "
          f"{'95th':>6s} {'Spearman':>8s} {'d_eff ratio':>11s}")
    for d in (1, 3):
        X = make_bimodal(n, d, random_state=rng)
        start = time.perf_counter()
        approx = SpectralLeverage(kernel, reg, random_state=args.seed).fit(X).scores_
        t_spectral = time.perf_counter() - start
        start = time.perf_counter()
        exact = n * exact_leverage(X, kernel, reg)
        t_exact = time.perf_counter() - start
        acc = score_accuracy(approx, exact)
        print(f"{f'bimodal {d}-D':14s} {t_spectral:10.2f} {t_exact:8.2f} {acc['mean']:10.3f} "
              f"{acc['p05']:6.3f} {acc['p95']:6.3f} {acc['spearman']:8.3f} {acc['scale']:11.3f}")
    print("R-ACC = (spectral probability) / (exact probability) per point; 1 is perfect.")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from tqdm.contrib.logging import logging_redirect_tqdm

    from .validation import run_validation

    for option, value in (("--nu", args.nu), ("--length-scale", args.length_scale), ("--reg", args.reg)):
        _positive(option, value)
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
                                     blas_threads=args.blas_threads or None, progress=_progress(args))
    except ImportError as err:
        raise InputError(str(err)) from None
    print(f"wrote {out / 'report.md'}, {out / 'results.json'} and {len(results['figures'])} figures "
          f"in {results['meta']['wall_seconds']:.0f} s")
    return 0


def _add_score_options(parser: argparse.ArgumentParser) -> None:
    formats = ", ".join(FORMATS)
    parser.add_argument("data", help=f"data table ({formats}; text may be .gz, .bz2, .xz or .zst), "
                                     "or - for standard input (CSV)")
    parser.add_argument("-o", "--output", required=True,
                        help=f"output table, format from the extension ({formats}), or - for standard "
                             "output (CSV)")
    parser.add_argument("--header", action=argparse.BooleanOptionalAction, default=None,
                        help="whether the data start with a header row (default: detected; a first row "
                             "of numbers only is data)")
    parser.add_argument("--delimiter", default=None,
                        help="field delimiter of text data (default: tab for .tsv, else comma)")
    parser.add_argument("--kernel", choices=("matern", "rbf"), default="matern",
                        help="Matérn (with --nu) or Gaussian (RBF) kernel (default matern)")
    parser.add_argument("--nu", type=float, default=1.5, help="Matérn smoothness (default 1.5)")
    parser.add_argument("--length-scale", type=float, default=1.0,
                        help="kernel length scale, in the data's units (default 1; see --standardize)")
    parser.add_argument("--reg", type=float, required=True, help="regulariser λ > 0 (K(K + nλI)^-1)")
    parser.add_argument("--method", choices=sorted(SAMPLERS), default="spectral",
                        help="leverage method (default spectral)")
    parser.add_argument("--standardize", action="store_true",
                        help="standardise each column first (recommended: one length scale for all)")
    parser.add_argument("--drop-target", action="store_true", help="ignore the last column (a target)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bars or timings (progress shows only on a terminal anyway)")


class _Parser(argparse.ArgumentParser):
    """Option errors in one line (no usage block), exit code 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="spectral-leverage", description=DESCRIPTION,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('spectral_leverage')}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    scores = sub.add_parser("scores", help="leverage scores of the rows of a data file")
    _add_score_options(scores)
    scores.set_defaults(run=_scores)
    sample = sub.add_parser("sample", help="draw distinct row indices by leverage")
    _add_score_options(sample)
    sample.add_argument("-m", type=int, required=True, help="number of distinct indices")
    sample.set_defaults(run=_sample)
    demo = sub.add_parser("demo", help="spectral vs exact scores on built-in synthetic data")
    demo.add_argument("--n", type=int, default=4000, help="points per design (default 4000)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.set_defaults(run=_demo, quiet=False)
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
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``spectral-leverage`` command; returns the exit code."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    warnings.showwarning = _log_warning
    try:
        return args.run(args)
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:  # Ctrl-C: a partly written output was removed on the way here
        print(f"spectral-leverage {args.command}: interrupted", file=sys.stderr)
        return 130  # 128 + SIGINT, as the shell reports it
    except OutputError as err:  # the work was done but could not be written: not a usage error
        _error(args, err.strerror)
        return 1
    except (InputError, ValueError, TypeError) as err:
        _error(args, str(err))
        return 2


def _error(args: argparse.Namespace, message: str) -> None:
    """``message`` on stderr in one line, after the command's name."""
    print(f"spectral-leverage {args.command}: error: {' '.join(message.split())}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())

"""``scores`` and ``sample``: leverage scores of the rows of a data file, or rows drawn by them."""

from __future__ import annotations

import argparse
import logging
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LinearRegression

from .._validation import warn_constant_features
from ..io import FORMATS, InputError, check_delimiter, check_writable, read_table, write_table
from ..samplers import SAMPLERS, make_sampler
from ._common import add_kernel_options, check_positive, kernel_of, report, show_progress

__all__ = ["add_parsers"]

logger = logging.getLogger(__name__)

#: a last column predicted this well (R²) by a linear fit on the others looks like a target
TARGET_R2 = 0.9

#: the library's own warning of constant columns, which the command gives with the columns' numbers
CONSTANT_FEATURES = r"features \[.*\] are constant"


def _check_options(args: argparse.Namespace) -> None:
    """Every option of ``scores`` and ``sample``, and the output path, checked before any data are
    read (only -m against the number of rows waits for them)."""
    check_positive("--reg", args.reg)
    kernel_of(args)
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


def _fitted_sampler(args: argparse.Namespace, X: np.ndarray):
    """The chosen method fitted on X (the options were checked by :func:`_load`); the library's
    warning of constant columns is left out, :func:`_load` gave it with the columns' numbers."""
    sampler = make_sampler(args.method, kernel=kernel_of(args), reg=args.reg, random_state=args.seed)
    if "verbose" in sampler.get_params():
        sampler.set_params(verbose=show_progress(args))
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", CONSTANT_FEATURES, UserWarning)
        sampler.fit(X)
    logger.info("%s scores for %d rows in %.2f s", args.method, X.shape[0], time.perf_counter() - start)
    return sampler


def _scores(args: argparse.Namespace) -> int:
    sampler = _fitted_sampler(args, _load(args))
    table = np.column_stack([sampler.scores_, sampler.leverage_, sampler.probabilities_])
    write_table(args.output, table, ["score", "leverage", "probability"], "%.10g")
    report(args, f"wrote {table.shape[0]} rows to {args.output} "
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
    report(args, f"wrote {indices.size} indices to {args.output}")
    return 0


def add_table_options(parser: argparse.ArgumentParser) -> None:
    """How a data table is read: ``--header``, ``--delimiter``."""
    parser.add_argument("--header", action=argparse.BooleanOptionalAction, default=None,
                        help="whether the data start with a header row (default: detected; a first row "
                             "of numbers only is data)")
    parser.add_argument("--delimiter", default=None,
                        help="field delimiter of text data (default: tab for .tsv, else comma)")


def _add_score_options(parser: argparse.ArgumentParser) -> None:
    formats = ", ".join(FORMATS)
    parser.add_argument("data", help=f"data table ({formats}; text may be .gz, .bz2, .xz or .zst), "
                                     "or - for standard input (CSV)")
    parser.add_argument("-o", "--output", required=True,
                        help=f"output table, format from the extension ({formats}), or - for standard "
                             "output (CSV)")
    add_table_options(parser)
    add_kernel_options(parser)
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


def add_parsers(sub) -> None:
    """The ``scores`` and ``sample`` sub-commands."""
    scores = sub.add_parser("scores", help="leverage scores of the rows of a data file")
    _add_score_options(scores)
    scores.set_defaults(run=_scores)
    sample = sub.add_parser("sample", help="draw distinct row indices by leverage")
    _add_score_options(sample)
    sample.add_argument("-m", type=int, required=True, help="number of distinct indices")
    sample.set_defaults(run=_sample)

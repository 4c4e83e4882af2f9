"""``regress``: a kernel regressor fitted to a data file with ``NystromKRRCV``'s defaults.

The last column of TRAIN is the target, the others the features, standardised on TRAIN (the
default length scales assume standardised features). The kernel (``--kernel auto``: Matérn 3/2 or
RBF), λ, ℓ and the number of centres are chosen by cross-validation
(:class:`~spectral_leverage.krr.cv.NystromKRRCV`); ``--test`` predicts the rows of another table
with TRAIN's features (and reports the test RMSE when it also has TRAIN's target column).
"""

from __future__ import annotations

import argparse
import logging
import time

import numpy as np
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from .._blocks import DEFAULT_MEMORY_BUDGET
from ..io import FORMATS, InputError, check_delimiter, check_writable, read_table, write_table
from ..kernels import parse_kernel
from ..krr import NystromKRRCV
from ..krr.center_curve import TIME_BUDGET
from ._common import add_kernel_options, check_positive, kernel_of, report, show_progress
from .scores import add_table_options

__all__ = ["add_parser", "seconds_or_none"]

logger = logging.getLogger(__name__)


def _count(option: str, value: str, low: int, words: tuple[str, ...]):
    """``value`` of ``option``: one of ``words``, or an integer >= ``low``."""
    if value in words:
        return value
    try:
        number = int(value)
    except ValueError:
        number = low - 1
    if number < low:
        raise InputError(f"{option} must be {' or '.join(words)} or an integer >= {low}, got {value!r}")
    return number


def seconds_or_none(value: str) -> float | None:
    """``--time-budget``: a number of seconds (checked with the other options), or none."""
    if value.lower() == "none":
        return None
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of seconds or none, got {value!r}") from None


def _check_options(args: argparse.Namespace) -> dict:
    """NystromKRRCV's parameters from the options, all checked before any data are read."""
    for option, value in (("--time-budget", args.time_budget), ("--memory-budget", args.memory_budget)):
        check_positive(option, value)
    if not 0 <= args.tol < 1:
        raise InputError(f"--tol must be in [0, 1), got {args.tol}")
    if args.seed < 0:
        raise InputError(f"--seed must be >= 0, got {args.seed}")
    if args.n_jobs == 0:
        raise InputError("--n-jobs must be a number of threads >= 1, or -1 for every core (-2 all but "
                         "one, as in joblib), not 0")
    if args.output is not None and args.test is None:
        raise InputError("-o/--output writes the predictions of --test TABLE: give --test")
    args.delimiter = check_delimiter(args.delimiter)
    if args.test is not None:
        args.output = "-" if args.output is None else args.output
        check_writable(args.output)
    return dict(kernel=kernel_of(args), cv=_count("--cv", args.cv, 2, ("loo", "gcv")),
                n_centers=_count("--n-centers", args.n_centers, 1, ("auto",)), tol=args.tol,
                time_budget=args.time_budget, memory_budget=args.memory_budget, random_state=args.seed,
                verbose=show_progress(args), n_jobs=args.n_jobs)


def _table(args: argparse.Namespace, path: str) -> np.ndarray:
    return read_table(path, drop_target=False, header=args.header, delimiter=args.delimiter)


def _regress(args: argparse.Namespace) -> int:
    params = _check_options(args)
    train = _table(args, args.data)
    if train.shape[1] < 2 or train.shape[0] < 2:
        raise InputError(f"{args.data}: need at least 2 rows and 2 columns (features, then the target), "
                         f"got {train.shape[0]} x {train.shape[1]}")
    X, y = train[:, :-1], train[:, -1]
    test = None
    if args.test is not None:  # read and checked before the fit, which can take minutes
        if args.test == "-" and args.data == "-":
            raise InputError("TRAIN and --test cannot both be - (standard input is read once)")
        test = _table(args, args.test)
        if test.shape[1] not in (X.shape[1], X.shape[1] + 1):
            raise InputError(f"{args.test}: has {test.shape[1]} columns; give {X.shape[1]} (TRAIN's "
                             f"features) or {X.shape[1] + 1} (and the target)")
    start = time.perf_counter()
    model = make_pipeline(StandardScaler(), NystromKRRCV(**params)).fit(X, y)
    cv = model[-1]
    parsed = parse_kernel(cv.kernel_)
    family = "RBF" if parsed.family == "rbf" else f"Matérn ν={parsed.nu:g}"
    summary = (f"{family} kernel, length scale {cv.length_scale_:.4g} (standardised features), "
               f"reg {cv.reg_:.3g}, {cv.n_centers_} centres: {args.cv} RMSE {np.sqrt(-cv.best_score_):.6g} "
               f"on {X.shape[0]} rows in {time.perf_counter() - start:.1f} s")
    if test is not None:
        prediction = model.predict(test[:, :X.shape[1]])
        if test.shape[1] > X.shape[1]:
            summary += f"; test RMSE {np.sqrt(np.mean((prediction - test[:, -1]) ** 2)):.6g}"
        write_table(args.output, prediction[:, None], ["prediction"], "%.10g")
        summary += f"; wrote {prediction.size} predictions to {args.output}"
    report(args, summary)
    return 0


def add_parser(sub) -> None:
    formats = ", ".join(FORMATS)
    regress = sub.add_parser("regress", help="kernel ridge regression with λ, ℓ and the centres chosen "
                                             "by cross-validation (NystromKRRCV)")
    regress.add_argument("data", help=f"training table ({formats}), target in the last column, or - "
                                      "for standard input (CSV)")
    regress.add_argument("--test", default=None,
                         help="table to predict: TRAIN's feature columns, optionally its target last")
    regress.add_argument("-o", "--output", default=None,
                         help="where the predictions of --test go (default -: standard output)")
    add_table_options(regress)
    add_kernel_options(regress, auto="Matérn 3/2 and RBF, the better by CV")
    regress.add_argument("--cv", default="loo", help="loo (default), gcv or a number of folds")
    regress.add_argument("--n-centers", default="auto",
                         help="auto (default: from the error curve) or a number of centres")
    regress.add_argument("--tol", type=float, default=0.01,
                         help="stop doubling the centres below this gain in CV RMSE (default 0.01)")
    regress.add_argument("--time-budget", type=seconds_or_none, default=TIME_BUDGET,
                         help=f"seconds for the centres' error curve, or none (default {TIME_BUDGET:g})")
    regress.add_argument("--memory-budget", type=int, default=DEFAULT_MEMORY_BUDGET,
                         help="bytes for the row blocks and the centres' matrices (default "
                              f"{DEFAULT_MEMORY_BUDGET}: 5792 centres at most)")
    regress.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    regress.add_argument("--n-jobs", type=int, default=-1,
                         help="threads, BLAS's included (default -1: every core; joblib's meaning)")
    regress.add_argument("--quiet", action="store_true",
                         help="no progress bars or timings (progress shows only on a terminal anyway)")
    regress.set_defaults(run=_regress)

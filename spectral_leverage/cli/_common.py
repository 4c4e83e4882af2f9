"""What the sub-commands share: option checks, the kernel, progress bars and one-line reports."""

from __future__ import annotations

import argparse
import logging
import math
import sys

from sklearn.gaussian_process.kernels import RBF, Matern

from ..io import InputError, is_standard_output


def check_positive(option: str, value: float | None) -> None:
    """``InputError`` unless ``value`` (of ``option``) is None or a finite number > 0."""
    if value is not None and not (value > 0 and math.isfinite(value)):
        raise InputError(f"{option} must be a finite number > 0, got {value}")


def kernel_of(args: argparse.Namespace):
    """The kernel of ``--kernel``, ``--nu`` and ``--length-scale`` (1 where the command has none);
    None for ``auto``, the estimator's default (``regress``: Matérn 3/2 and RBF raced)."""
    length_scale = getattr(args, "length_scale", 1.0)
    check_positive("--length-scale", length_scale)
    check_positive("--nu", args.nu)
    if args.kernel == "auto":
        return None
    if args.kernel == "rbf":
        return RBF(length_scale=length_scale)
    return Matern(length_scale=length_scale, nu=args.nu)


def add_kernel_options(parser: argparse.ArgumentParser, auto: str | None = None) -> None:
    """``--kernel`` and ``--nu``; with ``auto`` (what it means, for the help) ``--kernel auto`` is
    offered and is the default."""
    choices, default = ("matern", "rbf"), "matern"
    described = "Matérn (with --nu) or Gaussian (RBF) kernel"
    if auto is not None:
        choices, default, described = ("auto", *choices), "auto", f"auto ({auto}), {described}"
    parser.add_argument("--kernel", choices=choices, default=default, help=f"{described} (default {default})")
    parser.add_argument("--nu", type=float, default=1.5, help="Matérn smoothness (default 1.5)")


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars where tqdm would show them by itself: on a terminal, unless --quiet."""
    return not args.quiet and sys.stderr.isatty()


def log_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """The library's warnings as one-line log records (no source line), like the command's own;
    advice to standardise X or drop a target column names the options that do it."""
    hint = (" (here: --standardize, and --drop-target if the last column is a target)"
            if "standardise X" in str(message) else "")
    logging.getLogger("spectral_leverage").warning("%s%s", message, hint)


def report(args: argparse.Namespace, message: str) -> None:
    """A one-line summary: on stdout, unless the table itself goes there."""
    output = getattr(args, "output", None)
    print(message, file=sys.stderr if output is not None and is_standard_output(output) else sys.stdout)

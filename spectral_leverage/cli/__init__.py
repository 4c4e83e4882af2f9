"""The ``spectral-leverage`` command: ridge leverage scores of the rows of a data file, and a kernel
regressor fitted to one.

Sub-commands
------------
``scores DATA -o OUT``
    Rescaled leverage scores, leverage and sampling probabilities of the rows of DATA.
``sample DATA -m M -o OUT``
    M distinct row indices drawn by leverage (one per line, or an .npy array).
``regress TRAIN [--test TEST] [-o OUT]``
    ``NystromKRRCV`` fitted to TRAIN (target last, features standardised), the predictions of TEST's
    rows written to OUT (:mod:`~spectral_leverage.cli.regress`).
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
import os
import sys
import warnings
from importlib.metadata import version

from ..io import InputError, OutputError
from . import demo, regress, scores, validate
from ._common import log_warning

__all__ = ["build_parser", "main"]

DESCRIPTION = """\
Ridge leverage scores of the rows of a data file, in near-linear time (the spectral method of
Chen & Yang, 2021), or by any method of the literature for comparison; kernel ridge regression
with its parameters chosen by cross-validation.

examples:
  spectral-leverage scores data.csv --standardize --drop-target --reg 1e-3 -o scores.csv
  spectral-leverage sample data.parquet -m 500 --reg 1e-3 -o centres.txt
  zcat data.csv.gz | spectral-leverage scores - --reg 1e-3 -o - | head
  spectral-leverage regress train.csv --test test.csv -o predictions.csv
  spectral-leverage demo
  spectral-leverage validate --quick --out report/
"""


class _Parser(argparse.ArgumentParser):
    """Option errors in one line (no usage block), exit code 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="spectral-leverage", description=DESCRIPTION,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('spectral_leverage')}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    scores.add_parsers(sub)
    regress.add_parser(sub)
    demo.add_parser(sub)
    validate.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``spectral-leverage`` command; returns the exit code."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    warnings.showwarning = log_warning
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

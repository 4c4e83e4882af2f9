"""Reading and writing tables: what the command line and the validation suite read and write.

A table is a delimited text file (CSV, TSV; gzip, bz2, xz or zstd compressed by its extension), a
Parquet file, or an .npy array of shape (n, d); ``-`` is standard input or output (delimited
text). The format follows the file's extension, and an unknown extension is refused rather than
guessed. A header row is detected (the first row is a header unless every field of it is a
number) or stated. Problems with a file are an :class:`InputError` whose one-line message names
the file, the line and the column.

Delimited text is parsed by pandas' C reader, for speed on large files.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["FORMATS", "InputError", "check_writable", "is_standard_output", "read_table", "write_table"]

#: file formats by extension, each optionally followed by a compression extension
FORMATS = (".csv", ".tsv", ".txt", ".npy", ".parquet")
_COMPRESSIONS = (".gz", ".bz2", ".xz", ".zst")


class InputError(ValueError):
    """A problem with the user's files or options: the command line reports it in one line and
    exits with code 2."""


#: names of the standard streams, read and written as ``-``
_STANDARD_STREAMS = ("/dev/stdin", "/dev/stdout")


def _stream(path: str) -> str:
    """``path``, with the standard streams' file names as ``-``."""
    return "-" if path in _STANDARD_STREAMS else path


def is_standard_output(out: str) -> bool:
    """Whether a table written to ``out`` goes to standard output (``-`` or ``/dev/stdout``)."""
    return _stream(out) == "-"


def _format(path: str) -> tuple[str, str | None]:
    """(format extension, compression extension or None) of ``path``; ``-`` is CSV."""
    if path == "-":
        return ".csv", None
    suffixes = [s.lower() for s in Path(path).suffixes]
    compression = suffixes.pop() if suffixes and suffixes[-1] in _COMPRESSIONS else None
    fmt = suffixes[-1] if suffixes else ""
    if fmt not in FORMATS or (compression and fmt in (".npy", ".parquet")):
        raise InputError(f"{path}: unknown table format {fmt + (compression or '') or '(no extension)'}; "
                         f"use one of {', '.join(FORMATS)} (text formats may end in .gz, .bz2, .xz "
                         "or .zst)")
    return fmt, compression


def _parquet_engine() -> str:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise InputError('Parquet needs pyarrow: pip install "spectral_leverage[parquet]"') from None
    return "pyarrow"


def _is_number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


def read_table(path: str, *, drop_target: bool = False, header: bool | None = None,
               delimiter: str | None = None) -> np.ndarray:
    """The numeric matrix in ``path``, shape (n, d), every value finite.

    Parameters
    ----------
    path : str
        A file (the format from its extension, see :data:`FORMATS`), or ``-`` or ``/dev/stdin``
        for standard input.
    drop_target : bool, default=False
        Drop the last column (a target).
    header : bool or None, default=None
        Whether delimited text starts with a header row; None detects it (a first row of numbers
        only is data). True with a first row of numbers is refused: the row would be lost.
    delimiter : str or None, default=None
        Field delimiter of delimited text; None is a tab for .tsv, else a comma.

    Returns
    -------
    ndarray of shape (n, d)

    Raises
    ------
    InputError
        A missing or unreadable file, an unknown format, a non-numeric or missing value, a row of
        the wrong length, or a NaN or infinite value: one line naming the place.
    """
    path = _stream(path)
    fmt, _ = _format(path)
    if path != "-" and not Path(path).is_file():
        raise InputError(f"no such file: {path}")
    if fmt == ".npy":
        X, names = _read_npy(path)
    elif fmt == ".parquet":
        X, names = _numeric(pd.read_parquet(path, engine=_parquet_engine()), path, first_line=None)
    else:
        source = io.BytesIO(sys.stdin.buffer.read()) if path == "-" else path
        X, names = _read_text(source, path, delimiter or ("\t" if fmt == ".tsv" else ","), header)
    if drop_target:
        if X.shape[1] < 2:
            raise InputError(f"{path}: --drop-target needs at least two columns")
        X, names = X[:, :-1], names[:-1]
    return X


def _read_npy(path: str) -> tuple[np.ndarray, list[str]]:
    try:
        X = np.load(path, allow_pickle=False)
    except ValueError as err:
        raise InputError(f"{path} is not a readable .npy array ({err})") from err
    if X.ndim != 2 or not np.issubdtype(X.dtype, np.number):
        raise InputError(f"{path} must hold a 2-D numeric array, got shape {X.shape}, dtype {X.dtype}")
    X = X.astype(float)
    names = [f"column {j + 1}" for j in range(X.shape[1])]
    _check_finite(X, names, path, first_line=None)
    return X, names


def _read_text(source, path: str, delimiter: str, header: bool | None) -> tuple[np.ndarray, list[str]]:
    """Delimited text through pandas' C reader; the header row detected unless ``header`` says."""
    options = dict(sep=delimiter, compression="infer", skip_blank_lines=True, engine="c")
    try:
        first = pd.read_csv(source, header=None, nrows=1, dtype=str, keep_default_na=False, **options)
    except pd.errors.EmptyDataError:
        raise InputError(f"{path} is empty: it needs at least one data row") from None
    except (UnicodeDecodeError, OSError) as err:
        raise InputError(f"{path} is not readable text ({err})") from None
    if hasattr(source, "seek"):
        source.seek(0)
    numeric_first = all(_is_number(field) for field in first.iloc[0])
    if header is None:
        header = not numeric_first
    elif header and numeric_first:
        raise InputError(f"{path}: the first row holds only numbers, so it is data, not a header; "
                         "read it with --no-header (header=False)")
    try:
        frame = pd.read_csv(source, header=0 if header else None, dtype=np.float64, **options)
    except ValueError as err:  # a field that is not a number (or a row with too many fields)
        if hasattr(source, "seek"):
            source.seek(0)
        frame = _read_or_locate(source, path, header, options, err)
    if not isinstance(frame.index, pd.RangeIndex):  # pandas took a first row longer than the header
        raise InputError(f"{path}, line 2: more fields than the header's {frame.shape[1]}")
    if frame.shape[0] == 0:
        raise InputError(f"{path} needs a header row and at least one data row" if header
                         else f"{path} has no data rows")
    if not header:
        frame.columns = [f"column {j + 1}" for j in range(frame.shape[1])]
    return _numeric(frame, path, first_line=2 if header else 1)


def _read_or_locate(source, path: str, header: bool, options: dict, err: Exception) -> pd.DataFrame:
    """Called when the float parse failed: the place of the first field that is not a number."""
    try:
        frame = pd.read_csv(source, header=0 if header else None, dtype=str, keep_default_na=False,
                            **options)
    except pd.errors.ParserError as parse:  # "Expected 2 fields in line 3, saw 3"
        raise InputError(f"{path}: {' '.join(str(parse).split())}") from None
    values = frame.to_numpy()
    bad = np.argwhere(~np.vectorize(lambda f: f == "" or _is_number(f), otypes=[bool])(values))
    if not bad.size:
        raise InputError(f"{path}: {err}") from None
    i, j = bad[0]
    name = frame.columns[j] if header else f"column {j + 1}"
    raise InputError(f"{path}, line {i + 1 + int(header)}, column '{name}': {values[i, j]!r} is not a number")


def _numeric(frame: pd.DataFrame, path: str, first_line: int | None) -> tuple[np.ndarray, list[str]]:
    names = [str(c) for c in frame.columns]
    try:
        X = frame.to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        bad = [name for name, dtype in zip(names, frame.dtypes, strict=True) if dtype.kind not in "biuf"]
        raise InputError(f"{path}: non-numeric columns {bad}") from None
    _check_finite(X, names, path, first_line)
    return X, names


def _check_finite(X: np.ndarray, names: list[str], path: str, first_line: int | None) -> None:
    bad = ~np.isfinite(X)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        where = f"line {i + first_line}" if first_line is not None else f"row {i + 1}"
        raise InputError(f"{path}, {where}, column '{names[j]}': {X[i, j]} (a missing, NaN or infinite "
                         "value; remove or impute it)")


def check_writable(out: str) -> str:
    """The format extension of ``out`` if a table can be written there (a known format, an existing
    directory), else ``InputError``: for a command to check before its work rather than after."""
    out = _stream(out)
    kind, _ = _format(out)
    if out != "-" and not Path(out).parent.is_dir():
        raise InputError(f"cannot write {out}: no such directory {Path(out).parent}")
    return kind


def write_table(out: str, array: np.ndarray, header: list[str], fmt: str) -> None:
    """Write ``array`` (1-D or 2-D) to ``out``, the format from its extension (see :data:`FORMATS`;
    ``-`` is standard output): delimited text with a header row and ``fmt`` per value, an .npy
    array, or Parquet with ``header`` as column names (``/dev/stdout`` is ``-`` too)."""
    kind, out = check_writable(out), _stream(out)
    if kind == ".npy":
        np.save(out, array)
        return
    table = array.reshape(array.shape[0], -1)
    if kind == ".parquet":
        pd.DataFrame(table, columns=header).to_parquet(out, index=False, engine=_parquet_engine())
        return
    frame = pd.DataFrame(table, columns=header)
    frame.to_csv(sys.stdout if out == "-" else out, sep="\t" if kind == ".tsv" else ",", index=False,
                 float_format=fmt if table.dtype.kind == "f" else None, compression="infer")

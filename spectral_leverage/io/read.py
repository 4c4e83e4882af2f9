"""Reading tables: the numeric matrix in a file or on standard input, every value finite.

A header row is detected (the first row is a header unless every field of it is a number) or
stated. Problems with a file are an :class:`InputError` whose one-line
message names the file, the line and the column. Delimited text is parsed by pandas' C reader, for
speed on large files.
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path
from typing import NoReturn

import numpy as np
import pandas as pd

from ._decoding import (
    check_text,
    decompression_errors,
    ends_inside_a_frame,
    locate_utf8_error,
    open_bytes,
    unreadable,
)
from ._formats import InputError, parquet_engine, stream_name, table_format

__all__ = ["check_delimiter", "read_table"]


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
        A missing or unreadable file, an unknown format, binary data or text that is not UTF-8 in
        a text format, a delimiter pandas cannot split on, a non-numeric or missing value, a row
        of the wrong length, or a NaN or infinite value: one line naming the place.
    """
    path = stream_name(path)
    fmt, compression = table_format(path)
    delimiter = check_delimiter(delimiter)
    if path != "-" and not Path(path).is_file():
        raise InputError(f"no such file: {path}")
    if fmt == ".npy":
        X, names = _read_npy(path)
    elif fmt == ".parquet":
        X, names = _numeric(pd.read_parquet(path, engine=parquet_engine()), path, first_line=None)
    else:
        source = io.BytesIO(sys.stdin.buffer.read()) if path == "-" else path
        X, names = _read_text(source, path, delimiter or ("\t" if fmt == ".tsv" else ","), header,
                              compression)
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


def check_delimiter(delimiter: str | None) -> str | None:
    """``delimiter`` if pandas' C reader can split fields on it (one character, not a line break or
    the quote character; ``\\t`` typed literally is a tab), else ``InputError``; None stays None.

    Parameters
    ----------
    delimiter : str or None
        The field delimiter asked for.

    Returns
    -------
    str or None
    """
    if delimiter is None:
        return None
    if delimiter == "\\t":
        return "\t"
    if len(delimiter) != 1 or delimiter in "\r\n\"":
        raise InputError(f"--delimiter must be one character other than a line break or a double quote, "
                         f"got {delimiter!r} (for a tab: --delimiter $'\\t' or '\\t')")
    return delimiter


def _read_text(source, path: str, delimiter: str, header: bool | None,
               compression: str | None) -> tuple[np.ndarray, list[str]]:
    """Delimited text through pandas' C reader; the header row detected unless ``header`` says.
    Anything pandas cannot parse into finite numbers is located by :func:`_locate`."""
    check_text(source, path, compression)
    options = dict(sep=delimiter, compression="infer", skip_blank_lines=True, engine="c")
    try:
        first = pd.read_csv(source, header=None, nrows=1, dtype=str, keep_default_na=False, **options)
        if hasattr(source, "seek"):
            source.seek(0)
        numeric_first = all(_is_number(field) for field in first.iloc[0])
        if header is None:
            header = not numeric_first
        elif header and numeric_first:
            raise InputError(f"{path}: the first row holds only numbers, so it is data, not a header; "
                             "read it with --no-header (header=False)")
        frame = pd.read_csv(source, header=0 if header else None, dtype=np.float64, **options)
    except pd.errors.EmptyDataError:
        raise InputError(f"{path} is empty: it needs at least one data row") from None
    except UnicodeDecodeError:
        locate_utf8_error(source, path, compression)
    except InputError:
        raise
    except ValueError as err:  # a field that is not a number, or a row with too many fields
        _locate(source, path, delimiter, header, compression, str(err))
    except decompression_errors(compression) as err:  # corrupt past the bytes check_text read
        raise unreadable(path, compression, err) from None
    if compression == ".zst" and isinstance(source, str) and ends_inside_a_frame(source):
        raise unreadable(path, compression, EOFError("the file ends inside a zstd frame: it is cut short"))
    if (not isinstance(frame.index, pd.RangeIndex)  # a first row longer than the header
            or not np.isfinite(frame.to_numpy()).all()):  # a missing or non-finite value, a short row
        _locate(source, path, delimiter, header, compression, "")
    if frame.shape[0] == 0:
        raise InputError(f"{path} needs a header row and at least one data row" if header
                         else f"{path} has no data rows")
    if not header:
        frame.columns = [f"column {j + 1}" for j in range(frame.shape[1])]
    return _numeric(frame, path, first_line=2 if header else 1)


def _locate(source, path: str, delimiter: str, header: bool, compression: str | None,
            error: str) -> NoReturn:
    """Called when pandas could not read finite numbers: the line (counted in the file, blank lines
    included) and column of the first field that is not one, or of the first row with another
    number of fields than the first row."""
    with open_bytes(source, path, compression) as stream:
        text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
        try:
            reader = csv.reader(text, delimiter=delimiter)
            names = None
            for row in reader:
                if not row:
                    continue
                if names is None:
                    names = row if header else [f"column {j + 1}" for j in range(len(row))]
                    first = "the header" if header else "the first row"
                    if header:
                        continue
                if len(row) != len(names):
                    raise InputError(f"{path}, line {reader.line_num}: {len(row)} field"
                                     f"{'s' * (len(row) != 1)} where {first} has {len(names)} (a "
                                     "ragged row: give every row the same number of fields)")
                for name, field in zip(names, row, strict=True):
                    _check_field(field, path, reader.line_num, name)
        finally:
            text.detach()
    raise InputError(f"{path}: {' '.join(error.split()) or 'not a table of numbers'}")


def _check_field(field: str, path: str, line: int, name: str) -> None:
    where = f"{path}, line {line}, column '{name}'"
    if not field.strip():
        raise InputError(f"{where}: an empty field (a missing value; remove or impute it)")
    if not _is_number(field):
        raise InputError(f"{where}: {field!r} is not a number")
    if not np.isfinite(float(field)):
        raise InputError(f"{where}: {float(field)} (a missing, NaN or infinite value; remove or impute it)")


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

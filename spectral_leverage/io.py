"""Reading and writing tables: what the command line and the validation suite read and write.

A table is a delimited text file (CSV, TSV; gzip, bz2, xz or zstd compressed by its extension), a
Parquet file, or an .npy array of shape (n, d); ``-`` is standard input or output (delimited
text). The format follows the file's extension, and an unknown extension is refused rather than
guessed. A header row is detected (the first row is a header unless every field of it is a
number) or stated. Problems with a file are an :class:`InputError` whose one-line message names
the file, the line and the column.

Delimited text is parsed by pandas' C reader, for speed on large files. Files are written
whole or not at all: to a temporary file beside the target, renamed over it once complete, so an
interruption or a full disk leaves a previous output as it was (an :class:`OutputError`).
"""

from __future__ import annotations

import bz2
import contextlib
import csv
import gzip
import io
import lzma
import os
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NoReturn

import numpy as np
import pandas as pd

from ._atomic import OutputError, file_target, temporary_beside, write_atomically

__all__ = ["FORMATS", "InputError", "OutputError", "check_delimiter", "check_writable", "is_standard_output",
           "read_table", "write_table"]

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
        A missing or unreadable file, an unknown format, binary data or text that is not UTF-8 in
        a text format, a delimiter pandas cannot split on, a non-numeric or missing value, a row
        of the wrong length, or a NaN or infinite value: one line naming the place.
    """
    path = _stream(path)
    fmt, compression = _format(path)
    delimiter = check_delimiter(delimiter)
    if path != "-" and not Path(path).is_file():
        raise InputError(f"no such file: {path}")
    if fmt == ".npy":
        X, names = _read_npy(path)
    elif fmt == ".parquet":
        X, names = _numeric(pd.read_parquet(path, engine=_parquet_engine()), path, first_line=None)
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


#: the first bytes of files that are not text, and the extension that reads each
_MAGIC = ((b"\x1f\x8b", "a gzip-compressed file", ".gz"), (b"BZh", "a bzip2-compressed file", ".bz2"),
          (b"\xfd7zXZ\x00", "an xz-compressed file", ".xz"),
          (b"\x28\xb5\x2f\xfd", "a zstd-compressed file", ".zst"),
          (b"PAR1", "a Parquet file", ".parquet"), (b"\x93NUMPY", "an .npy array", ".npy"),
          (b"PK\x03\x04", "a zip archive", None))


@contextlib.contextmanager
def _open_bytes(source, path: str, compression: str | None) -> Iterator[BinaryIO]:
    """The bytes of a text table, decompressed: ``source`` is a file name or an in-memory buffer
    (standard input), left open and rewound."""
    if not isinstance(source, str):
        source.seek(0)
        yield source
        source.seek(0)
        return
    if compression == ".zst":
        try:
            import zstandard
        except ImportError:
            raise InputError(f"{path}: reading .zst needs zstandard: pip install zstandard") from None
        with open(source, "rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as stream:
            yield stream
        return
    opener = {None: open, ".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}[compression]
    with opener(source, "rb") as stream:
        yield stream


def _decompression_errors(compression: str | None) -> tuple[type[BaseException], ...]:
    """What a corrupt compressed file raises: OSError (gzip's BadGzipFile), EOFError (a cut
    stream), lzma.LZMAError and zlib.error, which are not OSErrors, and zstandard's ZstdError."""
    errors = (OSError, EOFError, lzma.LZMAError, zlib.error)
    if compression == ".zst":
        try:
            import zstandard
        except ImportError:  # _open_bytes has said so
            return errors
        errors += (zstandard.ZstdError,)
    return errors


def _ends_inside_a_frame(source: str) -> bool:
    """Whether the .zst file ``source`` is cut short: zstandard's stream reader, and pandas through
    it, return the bytes before the cut without an error, where gzip, bz2 and xz raise EOFError."""
    import zstandard

    decompressor, ended = zstandard.ZstdDecompressor(), True
    frame = decompressor.decompressobj()
    with open(source, "rb") as raw:
        for chunk in iter(lambda: raw.read(1 << 16), b""):
            while chunk:
                frame.decompress(chunk)
                ended, chunk = frame.eof, frame.unused_data if frame.eof else b""
                if ended:  # the next bytes, if any, start another frame
                    frame = decompressor.decompressobj()
    return not ended


def _unreadable(path: str, compression: str | None, err: BaseException) -> InputError:
    kind = f"{compression[1:]}-compressed " if compression else ""
    return InputError(f"{path} is not readable {kind}text ({err})")


def _check_text(source, path: str, compression: str | None) -> None:
    """``InputError`` for a text table whose first 64 KiB are binary (a NUL byte, or bytes that
    are not UTF-8, named by the signature of a compressed or binary format where there is one)
    or not valid UTF-8."""
    try:
        with _open_bytes(source, path, compression) as stream:
            head = stream.read(1 << 16)
    except _decompression_errors(compression) as err:
        raise _unreadable(path, compression, err) from None
    nul, bad = head.find(b"\0"), _utf8_error(head, final=len(head) < 1 << 16)
    if nul < 0 and bad is None:
        return
    for magic, kind, extension in _MAGIC:
        if head.startswith(magic):
            fix = (f": name it with the {extension} extension" if extension and compression is None
                   else "")
            raise InputError(f"{path} is not delimited text: it looks like {kind}{fix}")
    if nul >= 0:
        raise InputError(f"{path} is not delimited text: a NUL byte at byte {nul} (binary data, or "
                         "UTF-16 text: save it as UTF-8)")
    _not_utf8(path, head, bad)


def _utf8_error(data: bytes, final: bool) -> int | None:
    """The offset of the first byte of ``data`` that is not UTF-8, or None; unless ``final``, a
    character cut at the end is not an error."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as err:
        if final or err.reason != "unexpected end of data":
            return err.start
    return None


def _not_utf8(path: str, data: bytes, offset: int, base: int = 0, lines: int = 0) -> NoReturn:
    """``InputError`` for the byte at ``offset`` of ``data``, which starts at byte ``base`` of the
    file after ``lines`` line breaks."""
    line = lines + data.count(b"\n", 0, offset) + 1
    raise InputError(f"{path} is not UTF-8 text at byte {base + offset} (line {line}: "
                     f"{data[offset:offset + 4]!r}): save it as UTF-8")


def _locate_utf8_error(source, path: str, compression: str | None) -> NoReturn:
    """Called when pandas met bytes that are not UTF-8: the offset and line of the first."""
    base, lines, pending = 0, 0, b""
    with _open_bytes(source, path, compression) as stream:
        while True:
            chunk = stream.read(1 << 20)
            data = pending + chunk
            bad = _utf8_error(data, final=not chunk)
            if bad is not None:
                _not_utf8(path, data, bad, base, lines)
            if not chunk:
                break
            try:
                data.decode("utf-8")
                pending = b""
            except UnicodeDecodeError as err:  # a character cut at the chunk's end
                data, pending = data[:err.start], data[err.start:]
            lines += data.count(b"\n")
            base += len(data)
    raise InputError(f"{path} is not UTF-8 text")


def _read_text(source, path: str, delimiter: str, header: bool | None,
               compression: str | None) -> tuple[np.ndarray, list[str]]:
    """Delimited text through pandas' C reader; the header row detected unless ``header`` says.
    Anything pandas cannot parse into finite numbers is located by :func:`_locate`."""
    _check_text(source, path, compression)
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
        _locate_utf8_error(source, path, compression)
    except InputError:
        raise
    except ValueError as err:  # a field that is not a number, or a row with too many fields
        _locate(source, path, delimiter, header, compression, str(err))
    except _decompression_errors(compression) as err:  # corrupt past the bytes _check_text read
        raise _unreadable(path, compression, err) from None
    if compression == ".zst" and isinstance(source, str) and _ends_inside_a_frame(source):
        raise _unreadable(path, compression, EOFError("the file ends inside a zstd frame: it is cut short"))
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
    with _open_bytes(source, path, compression) as stream:
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


def check_writable(out: str) -> str:
    """The format extension of ``out`` if a table can be written there, else ``InputError``: for a
    command to check before its work rather than after.

    Writable means a known format, an existing folder in which a file can be created (a probe file
    is created and removed), and no directory or read-only file of that name.

    Parameters
    ----------
    out : str
        The output path, or ``-`` or ``/dev/stdout`` for standard output.

    Returns
    -------
    str
        The format extension, one of :data:`FORMATS`.
    """
    out = _stream(out)
    kind, _ = _format(out)
    if out == "-":
        return kind
    target, folder = file_target(out)
    if not folder.exists():
        raise InputError(f"cannot write {out}: no such directory {folder}")
    if not folder.is_dir():
        raise InputError(f"cannot write {out}: {folder} is not a directory")
    if target.is_dir():
        raise InputError(f"cannot write {out}: it is a directory; name a file in it")
    if target.exists() and not os.access(target, os.W_OK):
        raise InputError(f"cannot write {out}: the file is read-only; make it writable or name another")
    try:
        fd, probe = temporary_beside(target)
    except OSError as err:
        raise InputError(f"cannot write {out}: cannot create a file in {folder} ({err.strerror})") from None
    os.close(fd)
    os.unlink(probe)
    return kind


#: pandas' names of the compressions, by extension
_PANDAS_COMPRESSION = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd", None: None}


def write_table(out: str, array: np.ndarray, header: list[str], fmt: str) -> None:
    """Write ``array`` (1-D or 2-D) to ``out``, the format from its extension.

    A file is written whole or not at all (see :func:`~spectral_leverage._atomic.write_atomically`);
    standard output is streamed.

    Parameters
    ----------
    out : str
        The output path (the format from its extension, see :data:`FORMATS`), or ``-`` or
        ``/dev/stdout`` for standard output (CSV).
    array : ndarray of shape (n,) or (n, k)
        The values; an .npy file holds ``array`` as it is.
    header : list of str
        The column names of delimited text and Parquet.
    fmt : str
        The format of each float value in delimited text, e.g. ``"%.10g"``.

    Raises
    ------
    InputError
        ``out`` cannot be written (see :func:`check_writable`).
    OutputError
        The write failed (a full disk, a file-size limit); a previous ``out`` is left as it was.
    """
    kind, out = check_writable(out), _stream(out)
    _, compression = _format(out)
    table = array.reshape(array.shape[0], -1)
    if kind == ".npy":
        def write(file):
            np.save(file, array)
    elif kind == ".parquet":
        engine = _parquet_engine()

        def write(file):
            pd.DataFrame(table, columns=header).to_parquet(file, index=False, engine=engine)
    else:
        def write(file):
            pd.DataFrame(table, columns=header).to_csv(
                file, sep="\t" if kind == ".tsv" else ",", index=False,
                float_format=fmt if table.dtype.kind == "f" else None,
                compression=_PANDAS_COMPRESSION[compression])
    if out == "-":
        sys.stdout.flush()
        write(sys.stdout.buffer)
        sys.stdout.buffer.flush()
    else:
        write_atomically(out, write)

"""What reading and writing share: the formats, the standard streams and :class:`InputError`.

The format follows the file's extension, and an unknown extension is refused rather than guessed.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["FORMATS", "InputError", "is_standard_output", "parquet_engine", "stream_name", "table_format"]

#: file formats by extension, each optionally followed by a compression extension
FORMATS = (".csv", ".tsv", ".txt", ".npy", ".parquet")
_COMPRESSIONS = (".gz", ".bz2", ".xz", ".zst")


class InputError(ValueError):
    """A problem with the user's files or options: the command line reports it in one line and
    exits with code 2."""


#: names of the standard streams, read and written as ``-``
_STANDARD_STREAMS = ("/dev/stdin", "/dev/stdout")


def stream_name(path: str) -> str:
    """``path``, with the standard streams' file names as ``-``."""
    return "-" if path in _STANDARD_STREAMS else path


def is_standard_output(out: str) -> bool:
    """Whether a table written to ``out`` goes to standard output (``-`` or ``/dev/stdout``)."""
    return stream_name(out) == "-"


def table_format(path: str) -> tuple[str, str | None]:
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


def parquet_engine() -> str:
    """pandas' Parquet engine, pyarrow, or ``InputError`` with the line that installs it."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise InputError('Parquet needs pyarrow: pip install "spectral_leverage[parquet]"') from None
    return "pyarrow"

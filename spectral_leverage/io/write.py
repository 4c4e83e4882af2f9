"""Writing tables: :func:`check_writable` refuses an output before the work rather than after,
:func:`write_table` writes it.

A file goes to a temporary file beside the target, renamed over it once complete, so an
interruption or a full disk leaves a previous output as it was (an
:class:`~spectral_leverage.io.OutputError`).
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pandas as pd

from .._atomic import file_target, temporary_beside, write_atomically
from ._formats import InputError, parquet_engine, stream_name, table_format

__all__ = ["check_writable", "write_table"]


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
    out = stream_name(out)
    kind, _ = table_format(out)
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
    kind, out = check_writable(out), stream_name(out)
    _, compression = table_format(out)
    table = array.reshape(array.shape[0], -1)
    if kind == ".npy":
        def write(file):
            np.save(file, array)
    elif kind == ".parquet":
        engine = parquet_engine()

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

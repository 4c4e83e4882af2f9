"""Reading and writing tables: what the command line and the validation suite read and write.

A table is a delimited text file (CSV, TSV; gzip, bz2, xz or zstd compressed by its extension), a
Parquet file, or an .npy array of shape (n, d); ``-`` is standard input or output (delimited
text). Import every name from here; reading is in ``read``, writing in ``write``, and
what both share (the formats, the standard streams, :class:`InputError`) in ``_formats``.
"""

from .._atomic import OutputError
from ._formats import FORMATS, InputError, is_standard_output
from .read import check_delimiter, read_table
from .write import check_writable, write_table

__all__ = ["FORMATS", "InputError", "OutputError", "check_delimiter", "check_writable", "is_standard_output",
           "read_table", "write_table"]

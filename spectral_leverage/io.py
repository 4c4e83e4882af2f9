"""Reading and writing tables: what the command line and the validation suite read and write.

A table is a CSV file with one header row and numeric columns, or an .npy array of shape (n, d).
Problems with a file are an :class:`InputError` with a one-line message naming the file, the line
and the column.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

__all__ = ["InputError", "read_table", "write_table"]


class InputError(ValueError):
    """A problem with the user's files or options: the command line reports it in one line and
    exits with code 2."""


def read_table(path: str, *, drop_target: bool = False) -> np.ndarray:
    """Numeric matrix from a CSV file (header row) or an .npy file; ``InputError`` otherwise."""
    file = Path(path)
    if not file.is_file():
        raise InputError(f"no such file: {path}")
    if file.suffix == ".npy":
        try:
            X = np.load(file, allow_pickle=False)
        except ValueError as err:
            raise InputError(f"{path} is not a readable .npy array ({err})") from err
        if X.ndim != 2 or not np.issubdtype(X.dtype, np.number):
            raise InputError(f"{path} must hold a 2-D numeric array, got shape {X.shape}, dtype {X.dtype}")
        X = X.astype(float)
        header = [f"column {j + 1}" for j in range(X.shape[1])]
    else:
        with file.open(newline="") as handle:
            rows = list(csv.reader(handle))
        if len(rows) < 2:
            raise InputError(f"{path} needs a header row and at least one data row")
        header, body = rows[0], rows[1:]
        X = np.empty((len(body), len(header)))
        for i, row in enumerate(body, start=2):
            if len(row) != len(header):
                raise InputError(f"{path}, line {i}: {len(row)} fields, the header has {len(header)}")
            for j, field in enumerate(row):
                try:
                    X[i - 2, j] = float(field)
                except ValueError:
                    raise InputError(
                        f"{path}, line {i}, column '{header[j]}': {field!r} is not a number"
                    ) from None
    if drop_target:
        if X.shape[1] < 2:
            raise InputError(f"{path}: --drop-target needs at least two columns")
        X, header = X[:, :-1], header[:-1]
    bad = ~np.isfinite(X)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InputError(f"{path}: row {i + 1}, column '{header[j]}' is {X[i, j]} (NaN or infinite values "
                         "are not allowed; remove or impute them)")
    return X


def write_table(out: str, array: np.ndarray, header: list[str], fmt: str) -> None:
    """Write ``array`` to ``out``: an .npy array, or CSV with a header row (``fmt`` per value)."""
    path = Path(out)
    if not path.parent.is_dir():
        raise InputError(f"cannot write {out}: no such directory {path.parent}")
    if path.suffix == ".npy":
        np.save(path, array)
    else:
        np.savetxt(path, array, delimiter=",", header=",".join(header), comments="", fmt=fmt)

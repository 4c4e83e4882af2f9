"""Files written whole or not at all: to a temporary file beside the target, flushed to disk and
renamed over it, so that an interruption, a full disk or a file-size limit leaves a previous file as
it was (the CLI's outputs, :func:`spectral_leverage.io.write_table`)."""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["OutputError", "file_target", "temporary_beside", "write_atomically"]


class OutputError(OSError):
    """A table that could not be written once the work was done (a full disk, a file-size limit):
    the target is left as it was, and the command line reports it in one line and exits with
    code 1."""


def file_target(out: str) -> tuple[Path, Path]:
    """The file a write to ``out`` replaces (a symbolic link's target) and its folder."""
    target = Path(os.path.realpath(out)) if os.path.islink(out) else Path(out)
    return target, target.parent


def temporary_beside(target: Path) -> tuple[int, str]:
    """A new empty file beside ``target`` (descriptor and path), hidden, named after it."""
    return tempfile.mkstemp(dir=target.parent, prefix=f".{target.name[:64]}.", suffix=".tmp")


def _umask() -> int:
    """The process's umask, without changing it where Linux tells (``os.umask`` sets it)."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        with open("/proc/self/status") as status:
            return int(next(line for line in status if line.startswith("Umask:")).split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: what an OS error during a write means for the user, by errno
_WRITE_FIXES = {errno.ENOSPC: "free some space or write elsewhere",
                errno.EDQUOT: "free some space or write elsewhere",
                errno.EFBIG: "the file-size limit (ulimit -f) or the file system is too small for it"}


def write_atomically(out: str, write: Callable[[BinaryIO], None]) -> None:
    """``write(file)`` into a temporary file beside ``out``, flushed to disk and renamed over
    ``out``; on any exception (an interrupt too) the temporary file is removed and ``out`` left as
    it was. The file keeps the mode of the one it replaces, or gets the usual one (0666 less the
    umask)."""
    target, folder = file_target(out)
    if target.exists() and not target.is_file():  # a named pipe or a device: written in place
        with open(target, "wb") as file:
            write(file)
        return
    mode = (target.stat().st_mode & 0o7777) if target.exists() else 0o666 & ~_umask()
    fd, temporary = temporary_beside(target)
    try:
        with os.fdopen(fd, "wb") as file:
            os.fchmod(file.fileno(), mode)
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(err, OSError):
            fix = _WRITE_FIXES.get(err.errno, "")
            kept = f"{out} is unchanged" if target.exists() else f"{out} was not written"
            raise OutputError(err.errno, f"cannot write {out}: {err.strerror or err}; {kept}"
                                         f"{'; ' + fix if fix else ''}") from err
        raise
    with contextlib.suppress(OSError):  # the rename itself to disk
        directory = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)

"""The bytes of a delimited text table: decompressed by the file's extension (gzip, bz2, xz or
zstd), and checked to be UTF-8 text, a binary file named by its signature where it has one."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import zlib
from collections.abc import Iterator
from typing import BinaryIO, NoReturn

from ._formats import InputError

__all__ = ["check_text", "decompression_errors", "ends_inside_a_frame", "locate_utf8_error", "open_bytes",
           "unreadable"]

#: the first bytes of files that are not text, and the extension that reads each
_MAGIC = ((b"\x1f\x8b", "a gzip-compressed file", ".gz"), (b"BZh", "a bzip2-compressed file", ".bz2"),
          (b"\xfd7zXZ\x00", "an xz-compressed file", ".xz"),
          (b"\x28\xb5\x2f\xfd", "a zstd-compressed file", ".zst"),
          (b"PAR1", "a Parquet file", ".parquet"), (b"\x93NUMPY", "an .npy array", ".npy"),
          (b"PK\x03\x04", "a zip archive", None))


@contextlib.contextmanager
def open_bytes(source, path: str, compression: str | None) -> Iterator[BinaryIO]:
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


def decompression_errors(compression: str | None) -> tuple[type[BaseException], ...]:
    """What a corrupt compressed file raises: OSError (gzip's BadGzipFile), EOFError (a cut
    stream), lzma.LZMAError and zlib.error, which are not OSErrors, and zstandard's ZstdError."""
    errors = (OSError, EOFError, lzma.LZMAError, zlib.error)
    if compression == ".zst":
        try:
            import zstandard
        except ImportError:  # open_bytes has said so
            return errors
        errors += (zstandard.ZstdError,)
    return errors


def ends_inside_a_frame(source: str) -> bool:
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


def unreadable(path: str, compression: str | None, err: BaseException) -> InputError:
    """The ``InputError`` for a text table that cannot be read (or decompressed), with ``err``."""
    kind = f"{compression[1:]}-compressed " if compression else ""
    return InputError(f"{path} is not readable {kind}text ({err})")


def check_text(source, path: str, compression: str | None) -> None:
    """``InputError`` for a text table whose first 64 KiB are binary (a NUL byte, or bytes that
    are not UTF-8, named by the signature of a compressed or binary format where there is one)
    or not valid UTF-8."""
    try:
        with open_bytes(source, path, compression) as stream:
            head = stream.read(1 << 16)
    except decompression_errors(compression) as err:
        raise unreadable(path, compression, err) from None
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


def locate_utf8_error(source, path: str, compression: str | None) -> NoReturn:
    """Called when pandas met bytes that are not UTF-8: the offset and line of the first."""
    base, lines, pending = 0, 0, b""
    with open_bytes(source, path, compression) as stream:
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

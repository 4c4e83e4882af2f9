"""The bytes of delimited text (spectral_leverage.io._decoding): binary, non-UTF-8 and corrupt or cut
compressed inputs each refused in one line naming the file."""
import bz2
import gzip
import lzma

import numpy as np
import pytest

from spectral_leverage.io import (
    InputError,
    read_table,
)


def test_binary_input_is_not_delimited_text(tmp_path):
    noise = tmp_path / "noise.csv"
    noise.write_bytes(np.random.default_rng(0).bytes(10_000))
    with pytest.raises(InputError, match=r"noise.csv is not delimited text"):
        read_table(str(noise))
    zipped = tmp_path / "zipped.csv"
    zipped.write_bytes(gzip.compress(b"a,b\n1,2\n" * 100))
    with pytest.raises(InputError, match=r"zipped.csv is not delimited text: .*gzip.*\.gz"):
        read_table(str(zipped))


def test_non_utf8_file_names_the_file_and_the_byte(tmp_path):
    path = tmp_path / "latin1.csv"
    data = b"a,b\n" + b"1,2\n" * 100_000 + "3,4\xe9\n".encode("latin-1")  # beyond the first 64 KiB
    path.write_bytes(data)
    message = rf"latin1\.csv is not UTF-8 text at byte {len(data) - 2} \(line 100002"
    with pytest.raises(InputError, match=message):
        read_table(str(path))
    path.write_bytes("a,b\n1,\xe9\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"latin1\.csv is not UTF-8 text at byte 6 "):
        read_table(str(path))


@pytest.mark.parametrize("extension", [".csv.gz", ".csv.bz2", ".csv.xz", ".csv.zst"])
def test_a_corrupt_compressed_file_is_one_line(tmp_path, extension):
    """A corrupt .xz raised lzma.LZMAError, which is not an OSError, past the reader's handler
    (and a corrupt .zst zstandard's ZstdError)."""
    path = tmp_path / f"corrupt{extension}"
    path.write_bytes({".csv.gz": b"\x1f\x8b\x08\x00garbage", ".csv.bz2": b"BZh9garbage",
                      ".csv.xz": b"\xfd7zXZ\x00garbage",
                      ".csv.zst": b"\x28\xb5\x2f\xfd\x00garbage"}[extension] * 10)
    with pytest.raises(InputError, match=r"is not readable .*-compressed text"):
        read_table(str(path))


@pytest.mark.parametrize("extension", [".csv.gz", ".csv.bz2", ".csv.xz", ".csv.zst"])
def test_a_compressed_file_cut_past_its_first_bytes_is_one_line(tmp_path, extension):
    """Bytes past the 64 KiB the text check reads are decompressed by pandas: a cut stream raised
    EOFError (or zstandard's error), neither an OSError, past the reader's handler."""
    rows = "".join(f"{i},{i / 7:.12f},{i % 13}\n" for i in range(40_000)).encode()
    whole = tmp_path / f"whole{extension}"
    compress = {".csv.gz": gzip.compress, ".csv.bz2": bz2.compress, ".csv.xz": lzma.compress,
                ".csv.zst": lambda data: pytest.importorskip("zstandard").ZstdCompressor().compress(data)}
    data = compress[extension](rows)
    whole.write_bytes(data)
    assert read_table(str(whole)).shape == (40_000, 3)
    cut = tmp_path / f"cut{extension}"
    cut.write_bytes(data[: int(len(data) * 0.8)])
    with pytest.raises(InputError, match=r"is not readable .*-compressed text"):
        read_table(str(cut))

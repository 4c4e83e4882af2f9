"""Tables in and out: CSV with a header row and .npy arrays, one-line errors naming the place."""

import bz2
import errno
import gzip
import lzma
import os

import numpy as np
import pandas as pd
import pytest

from spectral_leverage.io import (
    InputError,
    OutputError,
    check_delimiter,
    check_writable,
    read_table,
    write_table,
)


@pytest.mark.parametrize("suffix", [".csv", ".npy"])
def test_round_trip(tmp_path, suffix):
    X = np.random.default_rng(0).normal(size=(7, 3))
    path = tmp_path / f"table{suffix}"
    write_table(str(path), X, ["a", "b", "c"], "%.17g")
    np.testing.assert_array_equal(read_table(str(path)), X)
    np.testing.assert_array_equal(read_table(str(path), drop_target=True), X[:, :2])


@pytest.mark.parametrize(("text", "message"), [
    ("a,b\n1,x\n", r"line 2, column 'b': 'x' is not a number"),
    ("a,b\n1,2,3\n", "line 2: 3 fields where the header has 2"),
    ("a,b\n1,2\n4,5,6\n", "line 3: 3 fields where the header has 2"),
    ("a,b\n1,\n", "line 2, column 'b': an empty field"),
    ("a,b\n1,2\n\n3,inf\n", "line 4, column 'b': inf"),
    ("a,b\n", "needs a header row and at least one data row"),
    ("a,b\n1,nan\n", "line 2, column 'b': nan"),
    ("", "is empty"),
])
def test_errors_name_the_place(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        read_table(str(path))


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_table(str(tmp_path / "absent.csv"))
    with pytest.raises(InputError, match="no such directory"):
        write_table(str(tmp_path / "absent" / "out.csv"), np.ones((2, 1)), ["a"], "%g")
    write_table(str(tmp_path / "one.csv"), np.ones((2, 1)), ["a"], "%g")
    with pytest.raises(InputError, match="at least two columns"):
        read_table(str(tmp_path / "one.csv"), drop_target=True)


def test_header_is_detected_and_a_headerless_file_keeps_every_row(tmp_path):
    X = np.random.default_rng(1).normal(size=(50, 3))
    path = tmp_path / "plain.csv"
    np.savetxt(path, X, delimiter=",")
    np.testing.assert_allclose(read_table(str(path)), X, rtol=1e-15)
    np.testing.assert_allclose(read_table(str(path), header=False), X, rtol=1e-15)
    with pytest.raises(InputError, match="first row holds only numbers"):
        read_table(str(path), header=True)
    named = tmp_path / "named.csv"
    np.savetxt(named, X, delimiter=",", header="a,b,c", comments="")
    np.testing.assert_allclose(read_table(str(named)), X, rtol=1e-15)


@pytest.mark.parametrize("name", ["t.csv.gz", "t.tsv", "t.tsv.bz2", "t.parquet", "t.txt.xz", "t.npy"])
def test_formats_round_trip(tmp_path, name):
    X = np.random.default_rng(2).normal(size=(40, 3))
    path = str(tmp_path / name)
    write_table(path, X, ["a", "b", "c"], "%.17g")
    np.testing.assert_array_equal(read_table(path), X)


def test_delimiter_option(tmp_path):
    path = tmp_path / "semicolon.csv"
    path.write_text("a;b\n1;2\n3;4\n")
    np.testing.assert_array_equal(read_table(str(path), delimiter=";"), [[1, 2], [3, 4]])


@pytest.mark.parametrize("name", ["x.json", "x", "x.npy.gz", "x.csv.zip"])
def test_unknown_formats_are_refused_in_one_line(tmp_path, name):
    with pytest.raises(InputError, match="unknown table format"):
        write_table(str(tmp_path / name), np.ones((2, 2)), ["a", "b"], "%g")
    (tmp_path / name).write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="unknown table format"):
        read_table(str(tmp_path / name))


def test_ragged_row_is_reported_with_its_field_counts(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("a,b\n1,2\n\n3\n4,5\n")  # line 4 is short; the blank line 3 counts
    with pytest.raises(InputError, match=r"ragged\.csv, line 4: 1 field where the header has 2 \(a ragged"):
        read_table(str(path))
    path.write_text("1,2\n3\n")
    with pytest.raises(InputError, match="line 2: 1 field where the first row has 2"):
        read_table(str(path))
    gz = tmp_path / "ragged.csv.gz"
    gz.write_bytes(gzip.compress(b"a,b,c\n1,2,3\n4,5\n"))
    with pytest.raises(InputError, match="line 3: 2 fields where the header has 3"):
        read_table(str(gz))


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


@pytest.mark.parametrize("delimiter", ["", ";;", "\n", '"'])
def test_bad_delimiters_are_refused(tmp_path, delimiter):
    with pytest.raises(InputError, match="--delimiter must be one character"):
        check_delimiter(delimiter)
    path = tmp_path / "t.csv"
    path.write_text("a;b\n1;2\n")
    with pytest.raises(InputError, match="--delimiter"):
        read_table(str(path), delimiter=delimiter)
    assert check_delimiter("\\t") == "\t"


def _interrupting(exception):
    """A writer that writes a first part, then fails with ``exception`` (as on a full disk or a
    Ctrl-C in the middle of a write)."""
    def write(self, file, *args, **kwargs):
        file.write(b"partial,output\n1.2")
        raise exception
    return write


WRITERS = {".csv": (pd.DataFrame, "to_csv"), ".csv.gz": (pd.DataFrame, "to_csv"), ".npy": (np, "save"),
           ".parquet": (pd.DataFrame, "to_parquet")}


@pytest.mark.parametrize("suffix", list(WRITERS))
@pytest.mark.parametrize("exception", [KeyboardInterrupt(), OSError(errno.ENOSPC, "No space left on device")])
def test_sigint_or_full_disk_during_write_keeps_previous_output(tmp_path, monkeypatch, suffix, exception):
    out = tmp_path / f"out{suffix}"
    write_table(str(out), np.arange(6.0).reshape(3, 2), ["a", "b"], "%g")
    before = out.read_bytes()
    owner, name = WRITERS[suffix]
    if owner is np:
        monkeypatch.setattr(np, "save", lambda file, array: _interrupting(exception)(None, file))
    else:
        monkeypatch.setattr(owner, name, _interrupting(exception))
    expected = KeyboardInterrupt if isinstance(exception, KeyboardInterrupt) else OutputError
    with pytest.raises(expected) as raised:
        write_table(str(out), np.ones((1000, 2)), ["a", "b"], "%g")
    assert out.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == [out.name]  # no temporary file left
    if expected is OutputError:
        assert raised.value.errno == errno.ENOSPC
        assert f"cannot write {out}: No space left on device; {out} is unchanged; free some space" in \
            raised.value.strerror


def test_written_files_get_the_usual_mode_and_keep_theirs(tmp_path):
    mask = os.umask(0o027)
    try:
        write_table(str(tmp_path / "new.csv"), np.ones((2, 1)), ["a"], "%g")
    finally:
        os.umask(mask)
    assert (tmp_path / "new.csv").stat().st_mode & 0o777 == 0o640
    (tmp_path / "old.csv").write_text("x\n")
    (tmp_path / "old.csv").chmod(0o604)
    write_table(str(tmp_path / "old.csv"), np.ones((2, 1)), ["a"], "%g")
    assert (tmp_path / "old.csv").stat().st_mode & 0o777 == 0o604
    assert (tmp_path / "old.csv").read_text() == "a\n1\n1\n"


def test_unwritable_outputs_are_input_errors(tmp_path):
    (tmp_path / "x.csv").mkdir()
    with pytest.raises(InputError, match=r"x\.csv: it is a directory"):
        check_writable(str(tmp_path / "x.csv"))
    (tmp_path / "somefile").write_text("")
    with pytest.raises(InputError, match="somefile is not a directory"):
        check_writable(str(tmp_path / "somefile" / "out.csv"))
    assert sorted(os.listdir(tmp_path)) == ["somefile", "x.csv"]  # the probe file removed
    if os.geteuid() == 0:
        pytest.skip("as root, permission bits do not stop writes")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(InputError, match="cannot create a file in"):
        check_writable(str(locked / "out.csv"))


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

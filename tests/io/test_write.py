"""Tables out (spectral_leverage.io.write): every format round-trips through read_table, a write is whole or
not at all, and an unwritable output is one line naming it."""
import errno
import os

import numpy as np
import pandas as pd
import pytest

from spectral_leverage.io import (
    InputError,
    OutputError,
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


@pytest.mark.parametrize("name", ["t.csv.gz", "t.tsv", "t.tsv.bz2", "t.parquet", "t.txt.xz", "t.npy"])
def test_formats_round_trip(tmp_path, name):
    X = np.random.default_rng(2).normal(size=(40, 3))
    path = str(tmp_path / name)
    write_table(path, X, ["a", "b", "c"], "%.17g")
    np.testing.assert_array_equal(read_table(path), X)


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

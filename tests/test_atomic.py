"""Files written whole or not at all (issue 38: the CLI's -o was written in place)."""

import errno
import os
import stat

import pytest

from spectral_leverage._atomic import OutputError, write_atomically


def test_a_failed_write_leaves_the_previous_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.csv"
    target.write_bytes(b"previous, complete\n")

    def half_then_full(file):
        file.write(b"new, cut")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OutputError, match=r"No space left on device; .*out.csv is unchanged; free some"):
        write_atomically(str(target), half_then_full)
    assert target.read_bytes() == b"previous, complete\n"
    assert os.listdir(tmp_path) == ["out.csv"]


def test_an_interrupt_leaves_the_previous_file(tmp_path):
    target = tmp_path / "out.csv"
    target.write_bytes(b"previous\n")

    def interrupted(file):
        file.write(b"new")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomically(str(target), interrupted)
    assert target.read_bytes() == b"previous\n" and os.listdir(tmp_path) == ["out.csv"]


def test_a_complete_write_replaces_the_file_and_keeps_its_mode(tmp_path):
    target = tmp_path / "out.csv"
    target.write_bytes(b"old\n")
    target.chmod(0o640)
    write_atomically(str(target), lambda file: file.write(b"new\n"))
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    fresh = tmp_path / "fresh.csv"
    write_atomically(str(fresh), lambda file: file.write(b"x\n"))
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~mask

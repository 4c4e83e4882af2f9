"""Tables in and out: CSV with a header row and .npy arrays, one-line errors naming the place."""

import numpy as np
import pytest

from spectral_leverage.io import InputError, read_table, write_table


@pytest.mark.parametrize("suffix", [".csv", ".npy"])
def test_round_trip(tmp_path, suffix):
    X = np.random.default_rng(0).normal(size=(7, 3))
    path = tmp_path / f"table{suffix}"
    write_table(str(path), X, ["a", "b", "c"], "%.17g")
    np.testing.assert_array_equal(read_table(str(path)), X)
    np.testing.assert_array_equal(read_table(str(path), drop_target=True), X[:, :2])


@pytest.mark.parametrize(("text", "message"), [
    ("a,b\n1,x\n", r"line 2, column 'b': 'x' is not a number"),
    ("a,b\n1,2,3\n", "line 2: more fields than the header's 2"),
    ("a,b\n1,2\n4,5,6\n", "Expected 2 fields in line 3, saw 3"),
    ("a,b\n1,2\n3\n", "line 3, column 'b': nan"),
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

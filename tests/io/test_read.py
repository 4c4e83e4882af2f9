"""Tables in (spectral_leverage.io.read): CSV with a header row and .npy arrays, one-line errors naming the
place."""
import gzip

import numpy as np
import pytest

from spectral_leverage.io import (
    InputError,
    check_delimiter,
    read_table,
    write_table,
)


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


@pytest.mark.parametrize("delimiter", ["", ";;", "\n", '"'])
def test_bad_delimiters_are_refused(tmp_path, delimiter):
    with pytest.raises(InputError, match="--delimiter must be one character"):
        check_delimiter(delimiter)
    path = tmp_path / "t.csv"
    path.write_text("a;b\n1;2\n")
    with pytest.raises(InputError, match="--delimiter"):
        read_table(str(path), delimiter=delimiter)
    assert check_delimiter("\\t") == "\t"

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
    ("a,b\n1,2,3\n", "line 2: 3 fields, the header has 2"),
    ("a,b\n", "needs a header row and at least one data row"),
    ("a,b\n1,nan\n", r"row 1, column 'b' is nan"),
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

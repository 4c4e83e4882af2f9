"""spectral-leverage regress, run as a user would: NystromKRRCV on a table, predictions of another."""

import argparse
import subprocess
import sys

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from spectral_leverage import NystromKRRCV
from spectral_leverage.cli.regress import _check_options, add_parser
from spectral_leverage.krr.center_curve import TIME_BUDGET

COMMAND = [sys.executable, "-m", "spectral_leverage.cli", "regress"]


def run(*args):
    return subprocess.run([*COMMAND, *map(str, args)], capture_output=True, text=True, timeout=300)


@pytest.fixture
def tables(tmp_path):
    """(train.csv, test.csv with the target, test features only, X, y, X_test, y_test)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2)) * [1.0, 50.0]  # unequal units: the command standardises
    y = np.sin(2 * X[:, 0]) + X[:, 1] / 50 + 0.1 * rng.normal(size=400)
    paths = [tmp_path / name for name in ("train.csv", "test.csv", "features.csv")]
    np.savetxt(paths[0], np.column_stack([X[:300], y[:300]]), delimiter=",", header="a,b,y", comments="")
    np.savetxt(paths[1], np.column_stack([X[300:], y[300:]]), delimiter=",", header="a,b,y", comments="")
    np.savetxt(paths[2], X[300:], delimiter=",", header="a,b", comments="")
    return (*paths, X[:300], y[:300], X[300:], y[300:])


def test_predictions_are_those_of_nystromkrrcv_on_standardised_features(tables, tmp_path):
    train, test, features, X, y, X_test, y_test = tables
    out = tmp_path / "pred.csv"
    result = run(train, "--test", test, "-o", out, "--n-centers", "60", "--seed", "3", "--n-jobs", "2",
                 "--quiet")
    assert result.returncode == 0, result.stderr
    model = make_pipeline(StandardScaler(), NystromKRRCV(n_centers=60, random_state=3)).fit(X, y)
    expected = model.predict(X_test)
    written = np.loadtxt(out, delimiter=",", skiprows=1)
    np.testing.assert_allclose(written, expected, rtol=1e-8, atol=1e-10)
    rmse = np.sqrt(np.mean((expected - y_test) ** 2))
    assert f"test RMSE {rmse:.6g}" in result.stdout and "wrote 100 predictions" in result.stdout
    assert f"{model[-1].n_centers_} centres" in result.stdout
    family = "RBF" if type(model[-1].kernel_).__name__ == "RBF" else "Matérn ν=1.5"
    assert result.stdout.startswith(f"{family} kernel, length scale {model[-1].length_scale_:.4g}")
    # features only: the same predictions, no test RMSE; to standard output by default
    result = run(train, "--test", features, "--n-centers", "60", "--seed", "3", "--quiet")
    assert result.returncode == 0 and "test RMSE" not in result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "prediction"
    np.testing.assert_allclose(np.array(lines[1:], dtype=float), expected, rtol=1e-8, atol=1e-10)


def test_without_a_test_table_it_reports_the_fit(tables):
    result = run(tables[0], "--n-centers", "40", "--cv", "3", "--quiet")
    assert result.returncode == 0, result.stderr
    assert "3 RMSE" in result.stdout and "on 300 rows" in result.stdout and "40 centres" in result.stdout


@pytest.mark.parametrize("option, value", [("--cv", "1"), ("--cv", "kfold"), ("--n-centers", "0"),
                                           ("--n-centers", "many"), ("--tol", "1"), ("--tol", "-0.1"),
                                           ("--time-budget", "0"), ("--time-budget", "soon"),
                                           ("--memory-budget", "0"),
                                           ("--nu", "nan"), ("--seed", "-1"), ("-o", "p.csv"),
                                           ("--n-jobs", "0")])
def test_every_option_is_checked_before_the_data_are_read(tmp_path, option, value):
    result = run(tmp_path / "absent.csv", option, value)
    assert result.returncode == 2 and "no such file" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and option.split("/")[0] in lines[0] and "Traceback" not in result.stderr


@pytest.mark.parametrize("given, expected", [((), TIME_BUDGET), (("--time-budget", "none"), None),
                                             (("--time-budget", "NONE"), None),
                                             (("--time-budget", "30"), 30.0)])
def test_the_time_budget_is_the_estimators_unless_given(given, expected):
    # the command's default is NystromKRRCV's own (a fit past about 1e5 rows ends in ten minutes);
    # "none" lifts it, for a result that does not depend on the machine's speed
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    args = parser.parse_args(["regress", "train.csv", *given])
    assert _check_options(args)["time_budget"] == expected
    assert NystromKRRCV().time_budget == TIME_BUDGET


def test_a_bad_test_table_fails_before_the_fit(tables, tmp_path):
    # the fit can take minutes: a missing --test file, or standard input twice, is found first
    result = run(tables[0], "--test", tmp_path / "absent.csv", "--n-centers", "20", "--quiet")
    assert result.returncode == 2 and "absent.csv" in result.stderr and result.stdout == ""
    result = subprocess.run([*COMMAND, "-", "--test", "-", "--quiet"], input="a,y\n1,2\n3,4\n",
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "cannot both be -" in result.stderr


def test_bad_tables_are_one_line_errors(tables, tmp_path):
    train = tables[0]
    one_column = tmp_path / "one.csv"
    np.savetxt(one_column, np.arange(10.0)[:, None], delimiter=",")
    wrong = tmp_path / "wrong.csv"
    np.savetxt(wrong, np.ones((5, 4)), delimiter=",")
    for args, words in (((one_column,), "need at least 2 rows and 2 columns"),
                        ((train, "--test", wrong), "has 4 columns; give 2")):
        result = run(*args, "--n-centers", "20", "--quiet")
        assert result.returncode == 2 and words in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1

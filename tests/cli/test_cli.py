"""The spectral-leverage command, run as a user would (subprocess)."""

import errno
import os
import resource
import signal
import subprocess
import sys

import numpy as np
import pytest
from conftest import DATA_DIR

COMMAND = [sys.executable, "-m", "spectral_leverage.cli"]


def run(*args, cwd=None):
    return subprocess.run([*COMMAND, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.fixture
def data_csv(tmp_path):
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(size=(300, 2)), rng.normal(size=300)])
    path = tmp_path / "data.csv"
    np.savetxt(path, X, delimiter=",", header="a,b,target", comments="")
    return path


def one_line_error(result, *words):
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0]


def test_scores_csv_and_npy(data_csv, tmp_path):
    out = tmp_path / "scores.csv"
    result = run("scores", data_csv, "--drop-target", "--reg", "1e-3", "--length-scale", "0.3", "-o", out,
                 "--quiet")
    assert result.returncode == 0, result.stderr
    table = np.loadtxt(out, delimiter=",", skiprows=1)
    assert table.shape == (300, 3)
    np.testing.assert_allclose(table[:, 2].sum(), 1.0, rtol=1e-8)
    np.testing.assert_allclose(table[:, 0] / 300, table[:, 1], rtol=1e-8)
    np.save(tmp_path / "X.npy", np.loadtxt(data_csv, delimiter=",", skiprows=1)[:, :2])
    result = run("scores", tmp_path / "X.npy", "--reg", "1e-3", "--length-scale", "0.3", "-o",
                 tmp_path / "s.npy", "--quiet")
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(np.load(tmp_path / "s.npy"), table, rtol=1e-8)


def test_sample_writes_distinct_indices(data_csv, tmp_path):
    out = tmp_path / "idx.txt"
    result = run("sample", data_csv, "--drop-target", "-m", 40, "--reg", "1e-3", "-o", out, "--quiet")
    assert result.returncode == 0, result.stderr
    indices = np.loadtxt(out, skiprows=1, dtype=int)
    assert indices.size == 40 and np.unique(indices).size == 40 and indices.max() < 300


def test_exact_method_matches_library(data_csv, tmp_path):
    from sklearn.gaussian_process.kernels import Matern

    from spectral_leverage import exact_leverage

    out = tmp_path / "exact.csv"
    assert run("scores", data_csv, "--drop-target", "--method", "exact", "--reg", "1e-2", "-o", out,
               "--quiet").returncode == 0
    X = np.loadtxt(data_csv, delimiter=",", skiprows=1)[:, :2]
    np.testing.assert_allclose(np.loadtxt(out, delimiter=",", skiprows=1)[:, 1],
                               exact_leverage(X, Matern(1.0, nu=1.5), 1e-2), rtol=1e-8)


def test_missing_file(tmp_path):
    one_line_error(run("scores", tmp_path / "absent.csv", "--reg", "1", "-o", tmp_path / "o.csv"),
                   "no such file")


def test_non_numeric_column(tmp_path):
    path = tmp_path / "words.csv"
    path.write_text("a,b\n1,2\n3,four\n")
    one_line_error(run("scores", path, "--reg", "1", "-o", tmp_path / "o.csv"), "line 3", "'b'", "four")


def test_nan_value(tmp_path):
    path = tmp_path / "nan.csv"
    path.write_text("a,b\n1,2\n3,nan\n4,5\n")
    one_line_error(run("scores", path, "--reg", "1", "-o", tmp_path / "o.csv"), "NaN", "'b'")


def test_unknown_kernel(data_csv, tmp_path):
    one_line_error(run("scores", data_csv, "--kernel", "periodic", "--reg", "1", "-o", tmp_path / "o.csv"),
                   "--kernel", "periodic")


@pytest.mark.parametrize("reg", ["0", "-1"])
def test_non_positive_reg(data_csv, tmp_path, reg):
    one_line_error(run("scores", data_csv, f"--reg={reg}", "-o", tmp_path / "o.csv"), "--reg")


def test_ragged_rows_and_bad_m(data_csv, tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("a,b\n1,2\n3\n")
    one_line_error(run("scores", path, "--reg", "1", "-o", tmp_path / "o.csv"), "line 3",
                   "1 field where the header has 2")
    one_line_error(run("sample", data_csv, "-m", "0", "--reg", "1", "-o", tmp_path / "i.txt"), "-m")
    one_line_error(run("sample", data_csv, "-m", "1000", "--reg", "1", "-o", tmp_path / "i.txt"), "1000")


def test_validate_bad_data_files(tmp_path):
    out = tmp_path / "report"
    one_line_error(run("validate", "--quick", "--data", tmp_path / "absent.csv", "--out", out),
                   "validate", "no such file", "absent.csv")
    path = tmp_path / "words.csv"
    path.write_text("a,b,y\n1,2,0\n3,four,1\n5,6,0\n")
    result = run("validate", "--quick", "--data", path, "--out", out)
    one_line_error(result, "validate", "line 3", "'b'", "four")
    assert result.returncode == 2 and not out.exists()


@pytest.mark.parametrize("option", [("--reg", "0"), ("--nu", "-1"), ("--length-scale", "0"),
                                    ("--blas-threads", "-1")])
def test_validate_bad_options(tmp_path, option):
    result = run("validate", "--quick", *option, "--out", tmp_path / "report")
    one_line_error(result, option[0])
    assert result.returncode == 2


def test_validate_without_matplotlib(tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None; from spectral_leverage.cli import main; "
            f"sys.exit(main(['validate', '--quick', '--out', {str(tmp_path / 'report')!r}]))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    one_line_error(result, 'pip install "spectral_leverage[validate]"')
    assert result.returncode == 2 and not (tmp_path / "report").exists()


def test_help_for_each_command():
    for command in ("scores", "sample", "regress", "demo", "validate"):
        result = run(command, "--help")
        assert result.returncode == 0 and "usage" in result.stdout


def test_headerless_csv_scores_every_row(tmp_path):
    X = np.random.default_rng(3).normal(size=(200, 2))
    path = tmp_path / "plain.csv"
    np.savetxt(path, X, delimiter=",")
    out = tmp_path / "s.csv"
    result = run("scores", path, "--reg", "1e-3", "-o", out, "--quiet")
    assert result.returncode == 0, result.stderr
    assert np.loadtxt(out, delimiter=",", skiprows=1).shape == (200, 3)
    one_line_error(run("scores", path, "--header", "--reg", "1e-3", "-o", out), "--no-header")


def test_standard_input_and_output_through_a_closed_pipe(tmp_path):
    X = np.random.default_rng(4).normal(size=(5000, 2))
    path = tmp_path / "plain.csv"
    np.savetxt(path, X, delimiter=",")
    command = " ".join([*COMMAND, "scores", "-", "--reg", "1e-3", "-o", "-", "--quiet"])
    result = subprocess.run(f"{command} < {path} | head -2; exit ${{PIPESTATUS[0]}}", shell=True,
                            executable="/bin/bash", capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "score,leverage,probability"
    assert len(result.stdout.splitlines()) == 2
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr


def test_compressed_and_parquet_tables(data_csv, tmp_path):
    X = np.loadtxt(data_csv, delimiter=",", skiprows=1)
    np.savetxt(tmp_path / "data.csv.gz", X, delimiter=",", header="a,b,c", comments="")
    result = run("scores", tmp_path / "data.csv.gz", "--drop-target", "--reg", "1e-3", "-o",
                 tmp_path / "s.parquet", "--quiet")
    assert result.returncode == 0, result.stderr
    pandas = pytest.importorskip("pandas")
    assert list(pandas.read_parquet(tmp_path / "s.parquet").columns) == ["score", "leverage", "probability"]


def test_unknown_output_format_is_a_one_line_error(data_csv, tmp_path):
    one_line_error(run("scores", data_csv, "--reg", "1e-3", "-o", tmp_path / "s.json"),
                   "unknown table format", ".json")


def test_unstandardised_data_with_a_target_warn_and_name_the_fix(tmp_path):
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.normal(20, 7, 1000), rng.normal(1000, 6, 1000), rng.normal(450, 17, 1000)])
    path = tmp_path / "raw.csv"
    np.savetxt(path, X, delimiter=",", header="a,b,target", comments="")
    result = run("scores", path, "--reg", "1e-3", "-o", tmp_path / "s.csv", "--quiet")
    assert result.returncode == 0
    assert "--standardize" in result.stderr and "--drop-target" in result.stderr
    result = run("scores", path, "--standardize", "--drop-target", "--reg", "1e-3", "-o",
                 tmp_path / "s.csv", "--quiet")
    assert "WARNING" not in result.stderr


def test_version():
    result = run("--version")
    assert result.returncode == 0 and result.stdout.startswith("spectral-leverage ")


def test_trailing_blank_lines_and_a_missing_output_folder(data_csv, tmp_path):
    blank = tmp_path / "blank.csv"
    blank.write_text(data_csv.read_text() + "\n\n")
    result = run("scores", blank, "--reg", "1e-3", "-o", tmp_path / "s.csv", "--quiet")
    assert result.returncode == 0, result.stderr
    assert np.loadtxt(tmp_path / "s.csv", delimiter=",", skiprows=1).shape == (300, 3)
    one_line_error(run("scores", data_csv, "--reg", "1e-3", "-o", tmp_path / "no" / "s.csv"),
                   "no such directory")


def test_raw_ccpp_warns_in_one_line_each_and_names_the_fix():
    path = DATA_DIR / "ccpp.csv"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    result = run("scores", path, "--reg", "1e-3", "-o", "-", "--quiet")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line and not line.startswith("wrote ")]
    assert warnings and all(line.startswith("WARNING ") for line in warnings), result.stderr
    assert any("--standardize" in line and "--drop-target" in line for line in warnings)
    assert any("R² = 0.93" in line and "--drop-target" in line for line in warnings)  # the target
    assert "\r" not in result.stderr and "it/s" not in result.stderr  # no progress bar off a terminal


def test_a_constant_column_warns(tmp_path):
    X = np.random.default_rng(6).normal(size=(300, 3))
    X[:, 1] = 4.0
    path = tmp_path / "constant.csv"
    np.savetxt(path, X, delimiter=",")
    result = run("scores", path, "--reg", "1e-3", "-o", tmp_path / "s.csv", "--quiet")
    assert result.returncode == 0, result.stderr
    assert "['column 2'] are constant (zero variance) and carry nothing: drop them" in result.stderr
    assert result.stderr.count("are constant") == 1, result.stderr  # issue 38: it printed twice


def test_dev_stdin_and_dev_stdout_are_the_standard_streams(data_csv):
    command = " ".join([*COMMAND, "scores", "/dev/stdin", "--reg", "1e-3", "-o", "/dev/stdout", "--quiet"])
    result = subprocess.run(f"{command} < {data_csv}", shell=True, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "score,leverage,probability" and len(lines) == 301  # the summary on stderr
    assert result.stderr.startswith("wrote 300 rows")


def test_help_is_a_description_with_examples_and_every_option_explained():
    from spectral_leverage.cli import build_parser

    parser = build_parser()
    text = parser.format_help()
    assert "examples:" in text and "`" not in text
    subparsers = next(a for a in parser._actions if a.choices and isinstance(a.choices, dict))
    for name, sub in subparsers.choices.items():
        for action in sub._actions:
            assert action.help, f"{name} {action.option_strings or action.dest} has no help"
        assert "`" not in sub.format_help()


def previous_output(path):
    """A complete output from an earlier run, to be kept by a failed one; its bytes."""
    path.write_bytes(b"score,leverage,probability\n1,0.5,0.5\n1,0.5,0.5\n")
    return path.read_bytes()


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_sigint_during_write_keeps_previous_output(data_csv, tmp_path, suffix):
    out = tmp_path / f"out{suffix}"
    before = previous_output(out)
    # a real SIGINT, sent by the process to itself once half the table is written (Python's own
    # handler first: a background job of a non-interactive shell starts with SIGINT ignored)
    code = ("import os, signal, time, pandas\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "def to_csv(self, file, **kwargs):\n"
            "    file.write(b'score,leverage,probability\\n0.9')\n"
            "    os.kill(os.getpid(), signal.SIGINT)\n"
            "    time.sleep(5)\n"
            "pandas.DataFrame.to_csv = to_csv\n"
            "from spectral_leverage.cli import main\n"
            f"raise SystemExit(main(['scores', {str(data_csv)!r}, '--reg', '1e-3', '-o', {str(out)!r}]))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 130
    assert result.stderr.strip().splitlines()[-1] == "spectral-leverage scores: interrupted"
    assert "Traceback" not in result.stderr
    assert out.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["data.csv", out.name]  # no temporary file left


def _limit_file_size():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_file_size_limit_keeps_previous_output(tmp_path, suffix):
    X = np.random.default_rng(7).normal(size=(2000, 2))
    data = tmp_path / "data.csv"
    np.savetxt(data, X, delimiter=",")
    out = tmp_path / f"out{suffix}"
    before = previous_output(out)
    result = subprocess.run([*COMMAND, "scores", str(data), "--reg", "1e-3", "-o", str(out), "--quiet"],
                            capture_output=True, text=True, timeout=300, preexec_fn=_limit_file_size)
    one_line_error(result, f"cannot write {out}", "File too large", "is unchanged", "ulimit -f")
    assert result.returncode == 1
    assert out.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["data.csv", out.name]


def _run_main(monkeypatch, *args):
    """The command in this process (so that a writer can be patched): exit code."""
    import warnings

    from spectral_leverage.cli import main

    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)  # main replaces it
    return main([*map(str, args)])


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_full_disk_keeps_previous_output(data_csv, tmp_path, monkeypatch, capsys, suffix):
    import pandas

    out = tmp_path / f"out{suffix}"
    before = previous_output(out)

    def to_csv(self, file, **kwargs):
        file.write(b"score,leverage,probability\n0.9")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pandas.DataFrame, "to_csv", to_csv)
    code = _run_main(monkeypatch, "scores", data_csv, "--reg", "1e-3", "-o", out, "--quiet")
    stderr = capsys.readouterr().err
    assert code == 1
    assert stderr.splitlines() == [f"spectral-leverage scores: error: cannot write {out}: No space left on "
                                   f"device; {out} is unchanged; free some space or write elsewhere"]
    assert out.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["data.csv", out.name]


def test_bad_output_paths_fail_before_the_work(tmp_path):
    absent = tmp_path / "absent.csv"  # the data are never read: their absence is not what is reported
    (tmp_path / "x.csv").mkdir()
    result = run("scores", absent, "--reg", "1e-3", "-o", tmp_path / "x.csv")
    one_line_error(result, "x.csv", "is a directory")
    assert result.returncode == 2
    (tmp_path / "somefile").write_text("")
    result = run("scores", absent, "--reg", "1e-3", "-o", tmp_path / "somefile" / "out.csv")
    one_line_error(result, "somefile is not a directory")
    assert result.returncode == 2
    if os.geteuid() != 0:  # as root, permission bits do not stop writes
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        one_line_error(run("scores", absent, "--reg", "1e-3", "-o", locked / "out.csv"), "cannot create")


@pytest.mark.parametrize("option", [("--reg", "-1"), ("--reg", "0"), ("--reg", "nan"), ("--reg", "inf"),
                                    ("-m", "0"), ("-m", "-3"), ("--delimiter", ""), ("--delimiter", ";;"),
                                    ("--length-scale", "0"), ("--length-scale", "nan"), ("--nu", "-1"),
                                    ("--nu", "inf"), ("--seed", "-1")])
def test_every_option_is_checked_before_the_data_are_read(tmp_path, option):
    options = {"--reg": "1e-3", "-m": "5", option[0]: option[1]}  # the data file does not exist
    result = run("sample", tmp_path / "absent.csv", *(f"{name}={value}" for name, value in options.items()),
                 "-o", tmp_path / "i.txt")
    one_line_error(result, option[0])
    assert result.returncode == 2 and "no such file" not in result.stderr


def test_binary_and_non_utf8_input_are_one_line_errors(tmp_path):
    noise = tmp_path / "noise.csv"
    noise.write_bytes(np.random.default_rng(1).bytes(5000))
    one_line_error(run("scores", noise, "--reg", "1", "-o", tmp_path / "o.csv"), "noise.csv",
                   "is not delimited text")
    latin = tmp_path / "latin.csv"
    latin.write_bytes("a,b\n1,2\n3,\xe9\n".encode("latin-1"))
    one_line_error(run("scores", latin, "--reg", "1", "-o", tmp_path / "o.csv"), "latin.csv",
                   "not UTF-8 text at byte 10")

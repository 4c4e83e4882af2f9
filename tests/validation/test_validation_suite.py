"""The validation suite (spectral_leverage.validation) on tiny sizes, in process."""

import json
import logging

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from spectral_leverage import NystromKRR, SpectralLeverage, exact_leverage
from spectral_leverage.datasets import make_beta
from spectral_leverage.metrics import relative_accuracy
from spectral_leverage.validation import QUICK, run_validation
from spectral_leverage.validation._util import matern
from spectral_leverage.validation.accuracy import accuracy_table
from spectral_leverage.validation.curves import leverage_curves, make_design
from spectral_leverage.validation.data import builtin_datasets, csv_dataset
from spectral_leverage.validation.report import to_json
from spectral_leverage.validation.tradeoff import regression_problem, regression_tradeoff

TINY = {"curve_sizes": (200, 300), "curve_replicates": 1, "max_exact": 300, "accuracy_replicates": 1,
        "tradeoff_sizes": (300, 400), "tradeoff_replicates": 1, "krr_max_n": 300, "centers_factor": 4.0,
        "accuracy_samplers": ("spectral", "uniform"), "tradeoff_methods": ("uniform", "spectral")}


@pytest.fixture(scope="module", autouse=True)
def one_blas_thread():
    """Tiny matrices: one BLAS thread is as fast, and far faster on a shared, oversubscribed machine."""
    with threadpool_limits(1):
        yield


@pytest.fixture(scope="module")
def table_csv(tmp_path_factory):
    """A CSV file of 500 rows (more than TINY's max_exact): 3 features on different scales + target."""
    rng = np.random.default_rng(7)
    X = np.column_stack([rng.normal(10, 5, 500), rng.uniform(size=500), rng.gamma(2.0, size=500),
                         rng.normal(size=500)])
    path = tmp_path_factory.mktemp("data") / "toy.csv"
    np.savetxt(path, X, delimiter=",", header="a,b,c,target", comments="")
    return path


@pytest.fixture(scope="module")
def curves():
    return leverage_curves(sizes=(300, 500), n_replicates=2, random_state=3)


def roundtrip(results):
    return json.loads(json.dumps(to_json(results), allow_nan=False))


# --- datasets.make_beta ---------------------------------------------------------------------------

def test_make_beta_moments_and_seed():
    X = make_beta(20_000, 2.0, 5.0, random_state=0)
    assert X.shape == (20_000, 1) and (X > 0).all() and (X < 1).all()
    assert abs(X.mean() - 2 / 7) < 0.005                      # Beta(2, 5) mean a/(a+b)
    assert abs(X.var() - 10 / (49 * 8)) < 0.002               # ab/((a+b)^2 (a+b+1))
    np.testing.assert_array_equal(X, make_beta(20_000, 2.0, 5.0, random_state=0))
    assert not np.array_equal(X, make_beta(20_000, 2.0, 5.0, random_state=1))
    with pytest.raises(ValueError, match="a"):
        make_beta(10, 0.0, 1.0)


# --- leverage curves ------------------------------------------------------------------------------

def test_curves_exact_columns_match_exact_leverage(curves):
    kernel = matern(0.5, 1.5)
    assert len(curves["curves"]) == 3 * 2 and len(curves["rows"]) == 3 * 2 * 2
    for curve in curves["curves"]:
        n = curve["n"]
        X = make_design(curve["design"], n, curve["seed"])
        exact = n * exact_leverage(X, kernel, n**-0.75)
        spectral = SpectralLeverage(kernel, n**-0.75, random_state=curve["seed"]).fit(X).scores_
        index = np.array(curve["index"])
        np.testing.assert_allclose(curve["x"], X[index, 0], rtol=0, atol=0)
        np.testing.assert_allclose(curve["exact"], exact[index], rtol=1e-12)
        np.testing.assert_allclose(curve["spectral"], spectral[index], rtol=1e-12)
        assert np.all(np.diff(curve["x"]) >= 0)
        row = next(r for r in curves["rows"] if r["design"] == curve["design"] and r["n"] == n
                   and r["replicate"] == 0)
        assert row["effective_dimension_exact"] == pytest.approx(exact.sum() / n, rel=1e-12)
        assert row["relative_error"] == pytest.approx(np.mean(np.abs(spectral - exact) / exact), rel=1e-12)


def test_curves_json_roundtrip_and_seed_dependence(curves):
    assert roundtrip(curves) == to_json(curves)
    # seeds depend on (random_state, design, n, replicate) only: a sub-run reproduces its rows
    again = leverage_curves(sizes=(300,), designs=("bimodal",), n_replicates=2, random_state=3)
    other = leverage_curves(sizes=(300,), designs=("bimodal",), n_replicates=2, random_state=4)
    mine = [r for r in curves["rows"] if r["design"] == "bimodal" and r["n"] == 300]
    errors = [r["relative_error"] for r in mine]
    assert errors == [r["relative_error"] for r in again["rows"]]
    assert {r["seed"] for r in mine}.isdisjoint({r["seed"] for r in other["rows"]})
    changed = [a != b for a, b in zip(errors, (r["relative_error"] for r in other["rows"]), strict=True)]
    assert all(changed)
    # every (design, n, replicate) has its own data
    assert len({r["seed"] for r in curves["rows"]}) == len(curves["rows"])


def test_curves_reject_unknown_design():
    with pytest.raises(ValueError, match="unknown design"):
        leverage_curves(sizes=(100,), designs=("normal",))


# --- accuracy table -------------------------------------------------------------------------------

def test_accuracy_table_against_exact_and_subsampling(table_csv, caplog):
    datasets = [builtin_datasets()[0], csv_dataset(table_csv)]
    with caplog.at_level(logging.WARNING, logger="spectral_leverage.validation.accuracy"):
        out = accuracy_table(datasets, max_n=300, samplers=("spectral", "uniform", "bless"), n_replicates=2,
                             random_state=5)
    assert "toy has 500 rows" in caplog.text and "subsample of 300 rows" in caplog.text
    assert roundtrip(out) == to_json(out)
    assert [d["n_used"] for d in out["settings"]["datasets"]] == [300, 300]
    for data in datasets:
        exact_rows = [r for r in out["exact"] if r["dataset"] == data.name]
        assert len(exact_rows) == 2
        for exact_row in exact_rows:
            X = data.draw(300, exact_row["seed"])
            kernel = matern(data.length_scale, 1.5)
            exact = exact_leverage(X, kernel, 300**-0.75)
            assert exact_row["effective_dimension"] == pytest.approx(exact.sum(), rel=1e-12)
            uniform = next(r for r in out["rows"] if r["dataset"] == data.name and r["sampler"] == "uniform"
                           and r["seed"] == exact_row["seed"])
            racc = relative_accuracy(np.ones(300), exact)
            assert uniform["mean"] == pytest.approx(racc.mean(), rel=1e-12)
            assert uniform["p05"] == pytest.approx(np.percentile(racc, 5), rel=1e-12)
            assert uniform["spearman"] is None and uniform["scale"] is None
            spectral = next(r for r in out["rows"] if r["dataset"] == data.name and r["sampler"] == "spectral"
                            and r["seed"] == exact_row["seed"])
            fitted = SpectralLeverage(kernel, 300**-0.75, random_state=exact_row["seed"]).fit(X)
            assert spectral["scale"] == pytest.approx(fitted.scores_.sum() / (300 * exact.sum()), rel=1e-10)
    other = accuracy_table(datasets, max_n=300, samplers=("uniform",), n_replicates=2, random_state=6)
    before = [r["mean"] for r in out["rows"] if r["sampler"] == "uniform"]
    after = [r["mean"] for r in other["rows"]]
    assert all(a != b for a, b in zip(before, after, strict=True))


# --- regression trade-off -------------------------------------------------------------------------

def test_tradeoff_risks_are_recomputable():
    out = regression_tradeoff(sizes=(300, 400), methods=("uniform", "spectral"), n_replicates=1,
                              centers_factor=4.0, krr_max_n=300, random_state=2)
    assert roundtrip(out) == to_json(out)
    assert [r["n"] for r in out["exact_krr"]] == [300]
    kernel = matern(0.5, 1.5)
    for row in out["rows"]:
        X, f, y = regression_problem(row["n"], row["seed"])
        model = NystromKRR(kernel, row["n"] ** -0.75, row["n_centers"], sampler=row["method"],
                           random_state=row["seed"]).fit(X, y)
        assert row["risk"] == pytest.approx(np.mean((model.predict(X) - f) ** 2), rel=1e-8)
        assert row["n_unique_centers"] == model.center_indices_.size
    other = regression_tradeoff(sizes=(300, 400), methods=("uniform", "spectral"), n_replicates=1,
                                centers_factor=4.0, krr_max_n=300, random_state=3)
    assert all(a["risk"] != b["risk"] for a, b in zip(out["rows"], other["rows"], strict=True))


# --- the whole run --------------------------------------------------------------------------------

def test_run_validation_writes_report_figures_and_results(tmp_path, table_csv):
    out = tmp_path / "report"
    results = run_validation(out, quick=True, data=[table_csv], random_state=11, config=TINY)
    assert set(TINY) == set(QUICK)
    assert [d["n_used"] for d in results["accuracy"]["settings"]["datasets"]] == [300, 300, 300]
    pngs = sorted(out.glob("*.png"))
    assert len(pngs) >= 3
    report = (out / "report.md").read_text()
    for png in pngs:
        assert f"]({png.name})" in report
        head = png.read_bytes()[:8]
        assert head == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert sorted(results["figures"].values()) == [p.name for p in pngs]
    stored = json.loads((out / "results.json").read_text())
    assert stored == to_json(results)
    meta = stored["meta"]
    assert meta["random_state"] == 11 and meta["quick"] is True and meta["config"]["max_exact"] == 300
    assert meta["blas_threads"] == 1 and "BLAS threads 1" in (out / "report.md").read_text()
    assert meta["machine"]["versions"]["numpy"] == np.__version__ and meta["wall_seconds"] > 0
    assert [d["name"] for d in stored["accuracy"]["settings"]["datasets"]] == ["bimodal-3d", "sparse-mode-3d",
                                                                               "toy"]
    assert "**Subsampled**: 300 of 500 rows" in report
    for row in stored["accuracy"]["summary"]:
        assert f"| {row['sampler']} |" in report


def test_run_validation_checks_config_and_matplotlib(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="unknown config keys"):
        run_validation(tmp_path, quick=True, config={"sizes": (10,)})
    with pytest.raises(ValueError, match="blas_threads"):
        run_validation(tmp_path, quick=True, config=TINY, blas_threads=0)
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r'pip install "spectral_leverage\[validate\]"'):
        run_validation(tmp_path / "never", quick=True, config=TINY)
    assert not (tmp_path / "never").exists()

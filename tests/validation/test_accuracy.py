"""The accuracy table (spectral_leverage.validation.accuracy) against exact scores, on tiny sizes."""

import logging

import numpy as np
import pytest
from validation_problems import one_blas_thread, roundtrip, table_csv  # noqa: F401 (fixtures are used by name)

from spectral_leverage import SpectralLeverage, exact_leverage
from spectral_leverage.metrics import relative_accuracy
from spectral_leverage.validation._util import matern
from spectral_leverage.validation.accuracy import accuracy_table
from spectral_leverage.validation.data import builtin_datasets, csv_dataset
from spectral_leverage.validation.report import to_json

pytestmark = pytest.mark.usefixtures("one_blas_thread")


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

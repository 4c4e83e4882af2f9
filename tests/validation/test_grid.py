"""The hyper-parameter grid experiment: rows against exact scores computed here, the ok rule, the
summary, the heat-map figure and bad names."""

import numpy as np
import pytest

from spectral_leverage import SpectralLeverage, exact_leverage
from spectral_leverage.metrics import score_accuracy
from spectral_leverage.validation.data import builtin_datasets
from spectral_leverage.validation.figures import plot_grid
from spectral_leverage.validation.grid import hyperparameter_grid, is_ok, make_kernel


@pytest.fixture(scope="module")
def grid():
    return hyperparameter_grid(builtin_datasets()[:1], n=300, kernels=("matern1.5", "rbf"),
                               length_scales=(0.5,), reg_exponents=(0.5, 1.0),
                               methods=("spectral", "density"), random_state=0)


def test_rows_match_a_direct_computation(grid):
    assert len(grid["rows"]) == 2 * 2 * 2
    row = next(r for r in grid["rows"] if r["kernel"] == "rbf" and r["reg_exponent"] == 1.0
               and r["method"] == "density")
    X = builtin_datasets()[0].draw(300, row["seed"])
    kernel = make_kernel("rbf", 0.5)
    exact = 300 * exact_leverage(X, kernel, 300**-1.0)
    scores = SpectralLeverage(kernel, 300**-1.0, algorithm="density", random_state=row["seed"]).fit(X).scores_
    expected = score_accuracy(scores, exact)
    assert row["effective_dimension"] == pytest.approx(exact.sum() / 300)
    for key in ("p05", "p95", "scale"):
        assert row[key] == pytest.approx(expected[key])


def test_ok_rule_and_summary(grid):
    assert is_ok({"p05": 0.86, "p95": 1.14, "scale": 1.05})
    assert not is_ok({"p05": 0.84, "p95": 1.0, "scale": 1.0})
    assert not is_ok({"p05": 0.9, "p95": 1.1, "scale": 1.12})
    for summary in grid["summary"]:
        mine = [r for r in grid["rows"] if r["method"] == summary["method"]]
        assert summary["ok_share"] == pytest.approx(np.mean([is_ok(r) for r in mine]))
        assert summary["worst_p05"] == min(r["p05"] for r in mine)


def test_heat_map_is_written(grid, tmp_path):
    pytest.importorskip("matplotlib")
    path = plot_grid(grid, tmp_path / "grid.png")
    assert path.stat().st_size > 10_000


@pytest.mark.parametrize(("kwargs", "match"), [({"methods": ("nope",)}, "method"),
                                               ({"kernels": ("laplace",)}, "kernel family")])
def test_unknown_names_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        hyperparameter_grid(builtin_datasets()[:1], n=50, **kwargs)

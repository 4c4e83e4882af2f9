"""The hyper-parameter grid experiment: rows against exact scores computed here, the ok rule, the
summary, the heat-map figure and bad names."""

import warnings

import numpy as np
import pytest
from validation_problems import one_blas_thread  # noqa: F401 (a fixture, used by name)

from spectral_leverage import SpectralLeverage, exact_leverage
from spectral_leverage.metrics import score_accuracy
from spectral_leverage.validation import QUICK
from spectral_leverage.validation.data import builtin_datasets
from spectral_leverage.validation.figures import plot_grid
from spectral_leverage.validation.grid import DEGENERATE_WARNING, hyperparameter_grid, is_ok, make_kernel


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


@pytest.mark.usefixtures("one_blas_thread")
def test_the_quick_grid_has_effective_dimensions_above_one_and_no_degenerate_warning():
    """The quick run's grid settings on the built-in designs (its n, kernels, length scales, λ and
    seed): every setting's exact effective dimension is above 1, and the density formula alone, whose
    estimates made the quick run warn four times (at RBF, ℓ = 2), no longer shows the warning, while
    its rows still record how far off those estimates are. (The other methods of the quick grid
    raised none; they are left out here for time.)"""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grid = hyperparameter_grid(builtin_datasets(), n=QUICK["grid_n"], kernels=QUICK["grid_kernels"],
                                   length_scales=QUICK["grid_length_scales"],
                                   reg_exponents=QUICK["grid_reg_exponents"], methods=("density",),
                                   random_state=0)
    assert min(row["effective_dimension"] for row in grid["rows"]) > 1
    assert not [str(w.message) for w in caught if str(w.message).startswith(DEGENERATE_WARNING)]
    warned = [r for r in grid["rows"] if r["kernel"] == "rbf" and r["length_scale"] == 2.0]
    assert warned and max(r["scale"] * r["effective_dimension"] for r in warned) <= 1  # estimates <= 1


def test_exact_scores_are_cached_per_setting_and_rows(tmp_path, monkeypatch):
    # n = 20 000 takes an n x n factorisation per setting: the cache lets a grid resume
    kwargs = dict(n=200, kernels=("matern1.5",), length_scales=(0.5,), reg_exponents=(0.5, 1.0),
                  methods=("density",), random_state=0, exact_cache=tmp_path)
    first = hyperparameter_grid(builtin_datasets()[:1], **kwargs)
    assert len(list(tmp_path.glob("*.npy"))) == 2

    def refuse(*args, **kw):
        raise AssertionError("an exact score was recomputed")

    monkeypatch.setattr("spectral_leverage.validation.grid.exact_leverage", refuse)
    again = hyperparameter_grid(builtin_datasets()[:1], **kwargs)
    for a, b in zip(first["rows"], again["rows"], strict=True):
        assert (a["p05"], a["p95"], a["scale"]) == (b["p05"], b["p95"], b["scale"])
    # other rows (another seed draws other points): not from the cache
    with pytest.raises(AssertionError, match="recomputed"):
        hyperparameter_grid(builtin_datasets()[:1], **{**kwargs, "random_state": 1})

"""Leverage curves on 1-D designs (spectral_leverage.validation.curves) and the Beta design they use."""

import numpy as np
import pytest
from validation_problems import one_blas_thread, roundtrip  # noqa: F401 (fixtures are used by name)

from spectral_leverage import SpectralLeverage, exact_leverage
from spectral_leverage.datasets import make_beta
from spectral_leverage.validation._util import matern
from spectral_leverage.validation.curves import leverage_curves, make_design
from spectral_leverage.validation.report import to_json

pytestmark = pytest.mark.usefixtures("one_blas_thread")


@pytest.fixture(scope="module")
def curves():
    return leverage_curves(sizes=(300, 500), n_replicates=2, random_state=3)


def test_make_beta_moments_and_seed():
    X = make_beta(20_000, 2.0, 5.0, random_state=0)
    assert X.shape == (20_000, 1) and (X > 0).all() and (X < 1).all()
    assert abs(X.mean() - 2 / 7) < 0.005                      # Beta(2, 5) mean a/(a+b)
    assert abs(X.var() - 10 / (49 * 8)) < 0.002               # ab/((a+b)^2 (a+b+1))
    np.testing.assert_array_equal(X, make_beta(20_000, 2.0, 5.0, random_state=0))
    assert not np.array_equal(X, make_beta(20_000, 2.0, 5.0, random_state=1))
    with pytest.raises(ValueError, match="a"):
        make_beta(10, 0.0, 1.0)


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

"""The regression trade-off (spectral_leverage.validation.tradeoff), recomputed by hand, on tiny sizes."""

import numpy as np
import pytest
from validation_problems import one_blas_thread, roundtrip  # noqa: F401 (fixtures are used by name)

from spectral_leverage import NystromKRR, make_sampler
from spectral_leverage.validation._util import matern
from spectral_leverage.validation.report import to_json
from spectral_leverage.validation.tradeoff import regression_problem, regression_tradeoff

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def test_tradeoff_risks_are_recomputable():
    methods = ("uniform", "spectral", "kmeans", "greedy-cholesky")
    out = regression_tradeoff(sizes=(300, 400), methods=methods, n_replicates=1, centers_factor=4.0,
                              krr_max_n=300, random_state=2)
    assert roundtrip(out) == to_json(out)
    assert [r["n"] for r in out["exact_krr"]] == [300]
    kernel = matern(0.5, 1.5)
    for row in out["rows"]:
        # as the experiment does: the sampler fitted with the replicate's seed (its scores depend on
        # it where the full-scale pivots are fewer than the rows), then NystromKRR with that seed
        X, f, y = regression_problem(row["n"], row["seed"])
        reg = row["n"] ** -0.75
        sampler = make_sampler(row["method"], kernel=kernel, reg=reg, random_state=row["seed"]).fit(X, y)
        model = NystromKRR(kernel, reg, row["n_centers"], sampler=sampler, fit_intercept=False,
                           random_state=row["seed"]).fit(X, y)
        assert row["risk"] == pytest.approx(np.mean((model.predict(X) - f) ** 2), rel=1e-8)
        assert row["n_unique_centers"] == model.centers_.shape[0]
    other = regression_tradeoff(sizes=(300, 400), methods=methods, n_replicates=1,
                                centers_factor=4.0, krr_max_n=300, random_state=3)
    assert all(a["risk"] != b["risk"] for a, b in zip(out["rows"], other["rows"], strict=True))

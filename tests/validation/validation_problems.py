"""What the validation-suite tests share: tiny preset sizes, one BLAS thread, a CSV table."""

import json

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from spectral_leverage.validation.report import to_json

TINY = {"curve_sizes": (200, 300), "curve_replicates": 1, "max_exact": 300, "accuracy_replicates": 1,
        "tradeoff_sizes": (300, 400), "tradeoff_replicates": 1, "krr_max_n": 300, "centers_factor": 4.0,
        "accuracy_samplers": ("spectral", "uniform"), "tradeoff_methods": ("uniform", "spectral"),
        "grid_n": 200, "grid_kernels": ("rbf",), "grid_length_scales": (1.0,), "grid_reg_exponents": (0.5,),
        "grid_methods": ("spectral", "density")}


@pytest.fixture(scope="module")
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


def roundtrip(results):
    return json.loads(json.dumps(to_json(results), allow_nan=False))

"""Shared designs (Chen & Yang 2021 style) and real-data loading for the test suite."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from spectral_leverage.datasets import make_bimodal

# Hypothesis profiles (docs/testing.md). "ci", the default: deterministic, >= 1 000 generated cases
# in tests/test_properties.py. "nightly": 20 000 cases of the main property, random seeds, a
# reproduction blob printed on failure; HYPOTHESIS_PROFILE=nightly selects it. The per-case time
# limit is the ci deadline and, in both, the suite's own 60 s alarm (nightly runs share machines,
# where a 3 s case has taken 40 s: a deadline there measures the load). Tests that state their
# own max_examples keep them.
_PROFILE = dict(deadline=timedelta(seconds=30), print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", max_examples=1000, derandomize=True, **_PROFILE)
settings.register_profile("nightly", max_examples=20_000, **{**_PROFILE, "deadline": None})
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def uniform_1d(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(size=(n, 1))


DESIGNS = {
    "uniform-1d": lambda n, rng: uniform_1d(n, rng),
    "bimodal-1d": lambda n, rng: make_bimodal(n, 1, random_state=rng),
    "bimodal-3d": lambda n, rng: make_bimodal(n, 3, random_state=rng),
}


def load_xy(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(features, target) of ../shared/data/<name> as stored (target last); skip when absent."""
    path = DATA_DIR / name
    if not path.is_file():
        pytest.skip(f"{path} not present")
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    return table[:, :-1], table[:, -1]


def load_csv(name: str) -> np.ndarray:
    """Standardised features of ../shared/data/<name> (target dropped); skip when absent."""
    X = load_xy(name)[0]
    return (X - X.mean(axis=0)) / X.std(axis=0)


@pytest.fixture(scope="session")
def exact_cache():
    """Memoised exact rescaled scores n·l_i keyed by (design, kernel repr, n, seed)."""
    return {}


def greedy_reference(K: np.ndarray, m: int, weights=None) -> list[int]:
    """Greedy conditional variance on an explicit kernel matrix: argmax of w_i (K - K_:P K_PP^-1 K_P:)_ii."""
    weights = np.ones(K.shape[0]) if weights is None else weights
    pivots: list[int] = []
    for _ in range(m):
        residual = np.diag(K).copy()
        if pivots:
            K_nP = K[:, pivots]
            residual -= np.einsum("ij,ji->i", K_nP, np.linalg.solve(K[np.ix_(pivots, pivots)], K_nP.T))
        residual[pivots] = -np.inf
        pivots.append(int(np.argmax(weights * residual)))
    return pivots


@pytest.fixture
def interpolating(monkeypatch):
    """The tree KDE interpolates every batch that outnumbers its anchors, whatever that costs
    (``TreeDensity.interpolates`` chooses the cheaper route, which on the tests' small anchor sets
    is mostly the direct one): for the tests of the interpolation itself."""
    from spectral_leverage.density import TreeDensity

    monkeypatch.setattr(TreeDensity, "interpolates",
                        lambda self, n_batch: self.max_samples is not None and n_batch > self.n_tree_)

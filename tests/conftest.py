"""Shared designs (Chen & Yang 2021 style) and real-data loading for the test suite."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from spectral_leverage.datasets import make_bimodal

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

"""The in-memory backend: every operation of :mod:`spectral_leverage.backends` on NumPy arrays.

A "block" is the whole array: the functions handed to :func:`map_rows` and :func:`sum_blocks`
bound their own temporaries by the memory budget and spread over the cores themselves.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import validate_data

from .._blocks import column_summary, max_threads, on_all_cores, progress
from .._validation import check_target
from ._inverse_cdf import locate, segment_totals, split_draws
from ._neighbours import NeighbourIndex, label_blocks, self_first

name = "numpy"
in_memory = True


def validate(estimator, X, *, reset: bool = True, min_samples: int = 2) -> np.ndarray:
    """X as a finite float64 array of shape (n, d), through scikit-learn's ``validate_data``."""
    return validate_data(estimator, X, dtype=np.float64, reset=reset,
                         ensure_min_samples=min_samples)


def validate_xy(estimator, X, y) -> tuple[np.ndarray, np.ndarray, int]:
    """(X, y as a 2-D float64 array, y's own ndim), checked together by ``validate_data``."""
    X, y = validate_data(estimator, X, check_target(y), dtype=np.float64, multi_output=True,
                         y_numeric=True, ensure_min_samples=2)
    return X, y.reshape(X.shape[0], -1), y.ndim


def summarise(X: np.ndarray, rows: np.ndarray | None) -> tuple:
    low, high, std = column_summary(X)
    return low, high, std, X if rows is None else X[rows]


def share(obj):
    return obj


def map_rows(func, A: np.ndarray, *args, columns: int | None = None) -> np.ndarray:
    return func(A, *args)


def sum_blocks(func, *arrays: np.ndarray, args: tuple = (), start: tuple | None = None) -> tuple:
    return func(*arrays, *args) if start is None else func(*arrays, *args, start)


def map_near(func, X: np.ndarray, k: int, rescale, groups, *args, bytes_per_row: float,
             memory_budget: float, approximate: bool = False, rng: np.random.Generator | None = None,
             verbose: bool = False, desc: str = "near blocks") -> np.ndarray:
    """One index over ``rescale(X)`` (:class:`~._neighbours.NeighbourIndex`: a k-d tree, or with
    ``approximate`` faiss's inverted lists, their centres drawn by ``rng``); the rows ordered by
    their label ``groups(X)`` (stable, so
    by row within a label) and handed to ``func`` in blocks of whole labels, of about
    ``bytes_per_row`` each within half of ``memory_budget`` shared by the threads (``func``'s own
    temporaries take the other half, as on Dask), and at least four blocks a thread where the rows
    allow (whole labels), so that the threads finish together."""
    Z = rescale(X)
    index = NeighbourIndex(Z, approximate, rng)
    labels = groups(X)
    budget = min(memory_budget / 2, X.shape[0] * bytes_per_row / 4) / max_threads()
    blocks = label_blocks(labels, np.arange(X.shape[0]), bytes_per_row, budget)
    out = np.empty(X.shape[0])
    bar = progress(total=len(blocks), verbose=verbose, desc=desc, unit="block")

    def fill(rows: np.ndarray) -> None:
        found = index.query(Z[rows], k + 1)
        near = np.column_stack([rows, found[self_first(found, rows, k)].reshape(len(rows), k)])
        out[rows] = func(X[near], near, labels[rows], *args)
        bar.update(1)

    with bar:
        on_all_cores(fill, blocks)
    return out


def take(X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    return X[rows]


def select_rows(func, X: np.ndarray, *args) -> np.ndarray:
    return X[func(X, *args)]


def compute(*values) -> tuple:
    return values


def persist(A: np.ndarray) -> np.ndarray:
    return A


def full(X: np.ndarray, value: float) -> np.ndarray:
    return np.full(X.shape[0], value)


def from_numpy(values: np.ndarray, X: np.ndarray) -> np.ndarray:
    return values


def summarise_scores(scores) -> tuple[np.ndarray, tuple[float, float, float], None]:
    scores = np.asarray(scores, dtype=float)
    return scores, (float(scores.min()), float(scores.max()), float(scores.sum())), None


def draw(scores: np.ndarray, state: None, u: np.ndarray) -> np.ndarray:
    segment, residual = split_draws(segment_totals(scores), u)
    return locate(scores, 0, segment, residual)


def require_in_memory(what: str, fix: str) -> None:
    """Everything is available in memory."""

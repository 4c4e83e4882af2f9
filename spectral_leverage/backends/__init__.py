"""Array backends: the handful of operations the fits need, for NumPy and Dask arrays.

Every fit of the package is written once against these operations and runs unchanged on an
in-memory NumPy array or on a Dask array (or DataFrame): :func:`backend_for` picks the backend from
the inputs. Each backend is a module exposing the same functions:

``name``, ``in_memory``
    Identification; ``in_memory`` is False for Dask.
``validate(estimator, X, *, reset, min_samples)`` / ``validate_targets(y, X)``
    The float64 2-D input (and 2-D targets with y's own ndim), ``n_features_in_`` set or checked.
``summarise(X, rows)``
    Columns' minimum, maximum and standard deviation, and the rows ``rows`` (all for None) as a
    NumPy array: one pass over the data.
``share(obj)``
    ``obj`` made ready to be passed to every block (broadcast once on a Dask cluster).
``map_rows(func, A, *args, columns=None)``
    ``func(block, *args)`` over row blocks of A: a per-row result, 1-D or ``(n, columns)``; 2-D
    arrays of A's rows among ``args`` are given their matching blocks.
``sum_blocks(func, *arrays, args=(), start=None)``
    The sum over row blocks of the tuple of arrays ``func(*blocks, *args)`` returns; with a tuple
    ``start``, ``func(*blocks, *args, start)`` adds its blocks' terms to ``start`` (the first
    block's) or to zeros (the others'), so that in memory the sum runs in the order of one loop.
``map_near(func, X, k, rescale, groups, *args, bytes_per_row, memory_budget, approximate, rng, ...)``
    ``func(points, near, labels, *args)`` over blocks of rows with their k nearest other rows of X
    (in the coordinates ``rescale(X)``; exact, or in memory with ``approximate`` from faiss's
    inverted lists, their centres drawn by ``rng``: :mod:`~spectral_leverage.backends._neighbours`;
    on Dask always exact, by cells of space): ``near`` (b, k+1) row ids, each row first,
    ``points`` (b, k+1, d) their rows, ``labels`` (b,) their group ``groups(rows)``, the rows
    sorted by label and then by row, every group whole in one block (``groups.anchors[label]``,
    a point of each group, places it on Dask); a per-row result.
``take(X, rows)``
    The rows ``rows`` (sorted indices) of X as a NumPy array.
``select_rows(func, X, *args)``
    The rows of X where ``func(block, *args)`` holds, as a NumPy array (a few rows: the binned
    KDE's far rows).
``compute(*values)``, ``persist(A)``, ``full(X, value)``, ``from_numpy(values, X)``
    Materialise values; keep an intermediate; a per-row constant or NumPy vector with X's rows.
``summarise_scores(scores)`` / ``draw(scores, state, u)``
    Minimum, maximum, total and the sampling state of a score vector; the rows drawn with
    probability proportional to the scores by the uniforms ``u`` (inverse CDF: the same rows on
    every backend).
``require_in_memory(what, fix)``
    A ``ValueError`` naming what is not available on this backend and the fix (no-op in memory).

Work inside Dask tasks runs under :func:`~spectral_leverage._blocks.limit_threads` (1): Dask
already runs one task per worker thread.
"""

from __future__ import annotations

from types import ModuleType

from .._validation import is_dask_collection

__all__ = ["backend_for"]


def backend_for(*arrays) -> ModuleType:
    """The backend of the inputs: Dask if any of them is a Dask collection, else NumPy.

    Dask is imported only here, only when a Dask collection arrives.

    Examples
    --------
    >>> import numpy as np
    >>> backend_for(np.ones((3, 2))).name
    'numpy'
    """
    if any(is_dask_collection(a) for a in arrays):
        from . import dask as backend
    else:
        from . import numpy as backend
    return backend

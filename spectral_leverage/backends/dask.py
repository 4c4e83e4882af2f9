"""The Dask backend: every operation of :mod:`spectral_leverage.backends` on Dask arrays.

Blocks are the Dask array's row chunks (one column chunk). With a ``dask.distributed`` client
active the work runs on its cluster: large shared objects (a fitted density, the centres) are
scattered to every worker once, per-block results are summed by a tree reduction, and every task
runs under :func:`~spectral_leverage._blocks.in_task`: one thread, and no progress bars (``verbose``
bars from concurrent tasks would interleave; Dask's own progress follows the tasks: wrap a fit in
``dask.diagnostics.ProgressBar()``, or watch the dashboard of a distributed client). Dask is an
optional dependency (``pip install spectral_leverage[dask]``, with bokeh for the dashboard),
imported only when a Dask collection arrives.

Per-row results are lazy Dask arrays with X's row chunks (:func:`map_near`'s persisted). Inputs
are checked for NaN and infinity inside the tasks that read them, in the same pass, so no pass over
the data is spent on checks. Passes over X, each one needing the result of the one before
(tests/backends/test_dask.py counts them): ``SpectralLeverage.fit`` reads X twice for the density
scores (column statistics with the anchor rows; the density at every row, persisted), three times
with the binned KDE (the grid counts in between; four where rows lie far outside the bulk, the
binned KDE's far rows gathered before the counts); where it takes the full-scale leverage, three
more (the pivots' subsample rows; the far field's sum; the scores by the tail integral, persisted;
four with neighbours, in place of the tail integral the two of :func:`map_near`: the rows the cells
of space are split from, then the rows split by cell for the near blocks), and one more where the
pivots' count keeps the density scores (the subsample rows); ``sample`` reads only the persisted
densities or scores; ``NystromKRR.fit`` adds two (the centre rows, from the chunks that hold one;
the normal equations, which read y once).
"""

from __future__ import annotations

import functools

import dask
import dask.array as da
import numpy as np

from .._blocks import in_task
from .._validation import check_target
from ._cells import (
    Cells,
    GroupCells,
    gather_cell,
    halo,
    in_reach,
    near_cell,
    place,
    rows_per_cell,
    sample_rows,
    split_chunk,
    split_result,
)
from ._inverse_cdf import SEGMENT, locate, segment_totals, split_draws

name = "dask"
in_memory = False


def _finite(block: np.ndarray, name: str) -> np.ndarray:
    if not np.all(np.isfinite(block)):
        raise ValueError(f"Input {name} contains NaN or infinity.")
    return block


def as_matrix(X, *, name: str = "X", min_samples: int = 2) -> da.Array:
    """``X`` as a float64 Dask array of shape (n, d) with known row chunks and one column chunk,
    checked for NaN and infinity lazily (by whatever computation reads it first).

    Parameters
    ----------
    X : dask.array.Array or dask.dataframe.DataFrame
        A 2-D numeric array, or a DataFrame whose columns are all numeric (its partition lengths
        are computed).
    name : str, default="X"
        Argument name used in error messages.
    min_samples : int, default=2

    Returns
    -------
    dask.array.Array

    Raises
    ------
    TypeError
        For something else, or non-numeric columns.
    ValueError
        For a 1-D or 3-D array, unknown row chunk sizes, or fewer than ``min_samples`` rows.

    Examples
    --------
    >>> X = as_matrix(da.ones((1000, 3), chunks=(250, 2), dtype="float32"))
    >>> X.dtype, X.chunks
    (dtype('float64'), ((250, 250, 250, 250), (3,)))
    """
    if hasattr(X, "to_dask_array") and hasattr(X, "columns"):  # a Dask DataFrame
        bad = [str(col) for col, dtype in X.dtypes.items() if getattr(dtype, "kind", "O") not in "biuf"]
        if bad:
            raise TypeError(f"{name} must have numeric columns only; non-numeric: {bad}.")
        X = X.to_dask_array(lengths=True)
    if not isinstance(X, da.Array):
        raise TypeError(f"{name} must be a Dask array or a Dask DataFrame, got {type(X).__name__}.")
    if X.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D, shape (n_samples, n_features); got {X.ndim}-D shape {X.shape}."
        )
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError(
            f"{name} has unknown chunk sizes along the rows; call {name}.compute_chunk_sizes() "
            "(or DataFrame.to_dask_array(lengths=True)) first."
        )
    if X.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {X.dtype}.")
    if X.shape[0] < min_samples or X.shape[1] < 1:
        raise ValueError(
            f"{name} has shape {X.shape}: need at least {min_samples} rows and 1 column."
        )
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    return X.astype(np.float64).map_blocks(_finite, name, dtype=np.float64)


def validate(estimator, X, *, reset: bool = True, min_samples: int = 2) -> da.Array:
    """:func:`as_matrix`, then ``n_features_in_`` set (``reset``) or checked against X."""
    X = as_matrix(X, min_samples=min_samples)
    if reset:
        estimator.n_features_in_ = X.shape[1]
    elif X.shape[1] != estimator.n_features_in_:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input."
        )
    return X


def validate_xy(estimator, X, y) -> tuple[da.Array, da.Array, int]:
    """(X, y as a 2-D float64 Dask array with X's row chunks, y's own ndim); y may be in memory."""
    X = validate(estimator, X)
    n = X.shape[0]
    y = check_target(y)
    if hasattr(y, "to_dask_array"):  # Dask Series / DataFrame
        y = y.to_dask_array(lengths=True)
    if not isinstance(y, da.Array):
        y = np.asarray(y, dtype=np.float64)
    if y.ndim not in (1, 2) or y.shape[0] != n:
        raise ValueError(f"y must have shape (n,) or (n, t) with n={n} rows; got shape {y.shape}.")
    if isinstance(y, da.Array) and any(np.isnan(c) for c in y.chunks[0]):
        raise ValueError("y has unknown chunk sizes along the rows; call y.compute_chunk_sizes().")
    ndim = y.ndim
    Y = y.reshape(n, -1) if ndim == 1 else y
    Y = Y.rechunk((X.chunks[0], -1)) if isinstance(Y, da.Array) else da.from_array(
        Y, chunks=(X.chunks[0], -1))
    return X, Y.astype(np.float64).map_blocks(_finite, "y", dtype=np.float64), ndim


def summarise(X: da.Array, rows: np.ndarray | None) -> tuple:
    low, high, std, gathered = dask.compute(X.min(axis=0), X.max(axis=0), X.std(axis=0),
                                            X if rows is None else X[rows])
    return low, high, std, gathered


def share(obj):
    """``obj`` for use inside a graph: broadcast to every worker of the distributed client the
    graph will run on (one copy per worker), otherwise one shared graph key: also with a client
    about, when a local scheduler is chosen (``dask.config.set(scheduler="threads")``), whose
    tasks could not read the client's scattered data."""
    try:
        from distributed import get_client

        client = get_client()
    except (ImportError, ValueError):
        return dask.delayed(obj, pure=True)
    if dask.base.get_scheduler() != client.get:
        return dask.delayed(obj, pure=True)
    return client.scatter(obj, broadcast=True, hash=False)


def _as_task(task):
    """``task`` run under :func:`~spectral_leverage._blocks.in_task`: one thread (Dask runs one task
    per worker thread already, so a task that fanned out over every core as well would
    oversubscribe them) and no progress bars (Dask's own progress follows the tasks)."""
    @functools.wraps(task)
    def run(*args, **kwargs):
        with in_task():
            return task(*args, **kwargs)
    return run


def map_rows(func, A: da.Array, *args, columns: int | None = None) -> da.Array:
    """``func`` over A's row chunks; Dask arrays among ``args`` with A's rows (2-D, one column
    chunk) are given their matching blocks."""
    args = tuple(a.rechunk((A.chunks[0], -1)) if isinstance(a, da.Array) else a for a in args)
    if columns is None:
        drop = {"drop_axis": 1} if A.ndim == 2 else {}
        return A.map_blocks(_as_task(func), *args, dtype=float, meta=np.empty(0), **drop)
    extra = {} if A.ndim == 2 else {"new_axis": 1}
    return A.map_blocks(_as_task(func), *args, chunks=(A.chunks[0], (columns,)), dtype=float,
                        meta=np.empty((0, 0)), **extra)


def _pairwise(parts: list, combine) -> object:
    """The delayed tree (pairwise) reduction of ``parts`` by ``combine(a, b)``."""
    while len(parts) > 1:
        parts = [dask.delayed(combine)(*parts[i:i + 2]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return parts[0]


def map_near(func, X: da.Array, k: int, rescale, groups, *args, bytes_per_row: float,
             memory_budget: float, approximate: bool = False, rng: np.random.Generator | None = None,
             verbose: bool = False, desc: str = "near blocks") -> da.Array:
    """Exact neighbours of every row over all chunks by cells of space and halo rows
    (:mod:`~spectral_leverage.backends._cells`; a group's rows in the cell of its anchor), then
    ``func`` on the near blocks of each cell, in blocks of whole groups of ``bytes_per_row`` within
    half of ``memory_budget`` (the cell's rows, halo and candidates take the other half; one task
    per cell, one thread). Two passes over X: the evenly spaced rows the cells are split from, then
    each chunk split by cell, gathered per cell and persisted (ids, rows and each row's reach:
    ``8 (d + 2)`` bytes a row on the cluster) until the cells' near blocks are done; the result goes
    back to X's row chunks. No progress bars inside the tasks (``verbose``). The neighbours are
    exact whatever ``approximate`` (a cell's rows are few; ``rng`` unused)."""
    n, d = X.shape
    target = -(-n // rows_per_cell(k, d, memory_budget))
    cells = Cells.from_sample(rescale(X[sample_rows(n, target)].compute()), target)
    where = share(GroupCells(cells, groups, rescale))
    split = dask.delayed(_as_task(split_chunk), nout=cells.count)
    gather, reaching, lend, near = (dask.delayed(_as_task(task)) for task in (
        gather_cell, in_reach, halo, near_cell))
    offsets = np.concatenate([[0], np.cumsum(X.chunks[0][:-1])]).astype(int)
    pieces = [split(block, int(offset), cells.count, where)
              for block, offset in zip(X.to_delayed().ravel(), offsets, strict=True)]
    gathered = dask.persist(*[gather(k, rescale, [p[c] for p in pieces]) for c in range(cells.count)])
    sizes = dask.compute(*[cell[3] for cell in gathered])
    held = [c for c, size in enumerate(sizes) if size[0]]
    low, high = (np.array([sizes[c][i] for c in held]) for i in (1, 2))
    others = dask.compute(*[reaching(i, gathered[c], low, high, rescale) for i, c in enumerate(held)])
    results = []
    for i, c in enumerate(held):
        halos = [lend(gathered[c], gathered[held[o]], low[o], high[o], k, rescale) for o in others[i]]
        values = near(gathered[c], halos, k, rescale, groups, (bytes_per_row, memory_budget / 2), func, *args)
        results.append(dask.delayed(split_result, nout=len(offsets))(values, offsets))
    out = [da.from_delayed(dask.delayed(place)(int(offset), size, [r[b] for r in results]),
                           shape=(size,), dtype=float, meta=np.empty(0))
           for b, (offset, size) in enumerate(zip(offsets, X.chunks[0], strict=True))]
    # persisted while the cells are held here: a distributed client releases persisted data with
    # its last reference, and a lazy result could reach the scheduler after the cells had gone
    return da.concatenate(out).persist()


def _add(a: tuple, b: tuple) -> tuple:
    return tuple(x + y for x, y in zip(a, b, strict=True))


def sum_blocks(func, *arrays: da.Array, args: tuple = (), start: tuple | None = None) -> tuple:
    """Tree (pairwise) sum over the row blocks of the tuples ``func(*blocks, *args)``; with
    ``start``, the first block's is ``func(*blocks, *args, start)``, the others' from zeros."""
    blocks = list(zip(*(A.to_delayed().ravel() for A in arrays), strict=True))
    starts = [()] * len(blocks) if start is None else \
        [(start,)] + [(tuple(np.zeros_like(v) for v in start),)] * (len(blocks) - 1)
    parts = [dask.delayed(_as_task(func))(*block, *args, *first)
             for block, first in zip(blocks, starts, strict=True)]
    return dask.compute(_pairwise(parts, _add))[0]


def take(X: da.Array, rows: np.ndarray) -> np.ndarray:
    """The rows ``rows`` (sorted) of X as a NumPy array: one pass over the chunks holding one."""
    return X[rows].compute()


def _selected(block: np.ndarray, func, *args) -> np.ndarray:
    return block[func(block, *args)]


def select_rows(func, X: da.Array, *args) -> np.ndarray:
    """The rows of X where ``func(block, *args)`` holds, in memory (one pass; few rows)."""
    parts = [dask.delayed(_as_task(_selected))(block, func, *args) for block in X.to_delayed().ravel()]
    return np.concatenate(dask.compute(*parts))


def compute(*values) -> tuple:
    return dask.compute(*values)


def persist(A: da.Array) -> da.Array:
    return A.persist()


def full(X: da.Array, value: float) -> da.Array:
    return da.full(X.shape[0], value, chunks=X.chunks[0])


def from_numpy(values: np.ndarray, X: da.Array) -> da.Array:
    return da.from_array(values, chunks=X.chunks[0])


def _aligned_chunks(chunks: tuple) -> tuple:
    """Row chunks of about the same size as ``chunks``, each a multiple of the sampling segment."""
    n = int(sum(chunks))
    size = max(1, round(float(np.median(chunks)) / SEGMENT)) * SEGMENT
    full_chunks, rest = divmod(n, size)
    return (size,) * full_chunks + ((rest,) if rest else ())


def summarise_scores(scores: da.Array) -> tuple:
    """One pass: the minimum, maximum and total, and the per-segment totals :func:`draw` needs."""
    aligned = scores.rechunk((_aligned_chunks(scores.chunks[0]),))
    segments = tuple(-(-c // SEGMENT) for c in aligned.chunks[0])
    totals = aligned.map_blocks(segment_totals, chunks=(segments,), dtype=float)
    low, high, total, totals = dask.compute(scores.min(), scores.max(), scores.sum(), totals)
    return scores, (float(low), float(high), float(total)), (aligned, np.asarray(totals))


def draw(scores: da.Array, state: tuple, u: np.ndarray) -> np.ndarray:
    """The rows of the uniforms ``u``: segments from the totals, then one task per row chunk
    holding draws; no n-vector is gathered."""
    aligned, totals = state
    segment, residual = split_draws(totals, u)
    first = np.concatenate([[0], np.cumsum(aligned.chunks[0][:-1])]) // SEGMENT
    chunk = np.searchsorted(first, segment, side="right") - 1
    blocks = aligned.to_delayed().ravel()
    masks, tasks = [], []
    for b in np.unique(chunk):
        mask = chunk == b
        masks.append((mask, int(first[b]) * SEGMENT))
        tasks.append(dask.delayed(locate)(blocks[b], int(first[b]), segment[mask], residual[mask]))
    out = np.empty(u.shape[0], dtype=np.intp)
    for (mask, offset), rows in zip(masks, dask.compute(*tasks), strict=True):
        out[mask] = rows + offset
    return out


def require_in_memory(what: str, fix: str) -> None:
    """A ``ValueError``: ``what`` needs the data in memory."""
    raise ValueError(f"{what} is not available for Dask input: {fix}.")

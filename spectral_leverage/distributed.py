r"""Leverage scores and Nyström KRR on Dask arrays: the same estimators beyond one machine.

:class:`~spectral_leverage.SpectralLeverage`, :meth:`~spectral_leverage.base.LeverageSampler.sample`
and :class:`~spectral_leverage.NystromKRR` accept a Dask array (or a Dask DataFrame of numeric
columns) wherever they accept a NumPy array and hand it to the functions of this module; with a
``dask.distributed`` client active the work runs on its cluster. Dask is an optional dependency
(``pip install spectral_leverage[dask]``) and is imported only here, only when a Dask collection
arrives.

What runs where (n rows in row chunks, d columns):

* client: the column ranges (one pass), the ``max_tree_size`` anchor rows (gathered: the same rows,
  drawn by the same generator, as the in-memory fit), the density estimator fitted on them, the
  p-grid of :math:`h(p)` and the :math:`m \times m` Nyström solve;
* workers: the density at every row, block by block (``map_blocks``, the fitted estimator
  broadcast once), the scores, the per-segment score totals used by ``sample``, and the per-block
  Nyström normal equations :math:`(T^{-\top}K_{bJ}^\top K_{bJ}T^{-1}, T^{-\top}K_{bJ}^\top y_b)`,
  summed by a tree reduction.

On a Dask input ``scores_``, ``leverage_``, ``probabilities_`` and ``density_`` are lazy Dask
arrays with X's row chunks (the per-row densities are persisted on the workers, 8 bytes per row, 16 with
the binned KDE's boundary correction);
``effective_dimension_`` is a float. ``sample`` draws by a two-level inverse CDF (segment totals,
then rows inside the drawn segments) without gathering any n-vector. ``NystromKRR.predict`` returns
a lazy Dask array.

Density estimate on Dask input: the same as in memory, per ``kde`` and ``intrinsic_dim``. The binned
KDE (:class:`~spectral_leverage.density.BinnedDensity`, the default in low dimension) bins every
block on the workers and sums the grids by a tree reduction (one grid per block in flight: at most
``memory_budget / 3`` bytes each); the grid is smoothed on the client and broadcast. The tree KDE
and the k-NN density are fitted on the gathered anchor rows and broadcast.

Equality with the in-memory path: for the same data and an integer ``random_state`` the anchors,
the densities, the p-grid, the scores (to rounding of the final sums), the sampled indices and the
Nyström centres are the same, and the coefficients agree to rounding (the per-block normal
equations are summed in a different order); the binned KDE's column statistics and grid sums are
reduced in a different order too, so its densities and scores agree to rounding (about 1e-15)
rather than bit for bit. ``intrinsic_dim="auto"`` estimates :math:`d'` from the anchor rows, the
same rows the in-memory estimate subsamples. Not available on Dask input (``ValueError`` naming
the parameter): ``density=``, ``max_tree_size=None``, ``sample(replace=False)``, ``solver="cg"``
and samplers other than ``"spectral"``.
"""

from __future__ import annotations

import functools

import numpy as np

from ._blocks import kernel_product, limit_threads
from ._validation import check_positive, check_random_state, check_samples
from .base import _SEGMENT, _locate, _segment_totals, _split_draws
from .density import BinnedDensity, KNNDensity, TreeDensity, _anchor_indices
from .kernels import parse_kernel
from .spectral.quadrature import _GridInterpolant, sa_integral

__all__ = ["as_dask_matrix", "fit_leverage", "fit_nystrom", "predict_nystrom", "sample_indices"]


def as_dask_matrix(X, *, name: str = "X", min_samples: int = 2):
    """``X`` as a float64 Dask array of shape (n, d) with known row chunks and one column chunk.

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
    >>> import dask.array as da
    >>> X = as_dask_matrix(da.ones((1000, 3), chunks=(250, 2), dtype="float32"))
    >>> X.dtype, X.chunks
    (dtype('float64'), ((250, 250, 250, 250), (3,)))
    """
    import dask.array as da

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
    return X.astype(np.float64)


def _share(obj):
    """``obj`` for use inside a graph: broadcast to every worker of an active distributed client
    (one copy per worker), otherwise one shared graph key."""
    import dask

    try:
        from distributed import get_client

        client = get_client()
    except (ImportError, ValueError):
        return dask.delayed(obj, pure=True)
    return client.scatter(obj, broadcast=True, hash=False)


# --------------------------------------------------------------------------------------------
# per-block kernels (run on the workers)
# --------------------------------------------------------------------------------------------


def _one_thread(task):
    """``task`` run under ``limit_threads(1)``: Dask runs one task per worker thread already, so a
    task that fanned out over every core as well would oversubscribe them."""
    @functools.wraps(task)
    def run(*args, **kwargs):
        with limit_threads(1):
            return task(*args, **kwargs)
    return run


def _bin_block(block, model: BinnedDensity, active):
    return (model.bin_counts(block[:, active]),)


@_one_thread
def _ambient_density(block, ambient, active, n: int):
    # as SpectralLeverage.fit: the KDE per unit length scale volume (the tree KDE told the whole
    # batch's size n), and (boundary-corrected) the density the scores are taken of
    p_unit, p_score = ambient(block[:, active], n)
    return p_unit if ambient.boundary is None else np.column_stack([p_unit, p_score])


def _knn_radius(block, model: KNNDensity, active, length, training: bool):
    return model._kth_radius(block[:, active] / length, training)


def _knn_density(radius, model: KNNDensity, floor, training: bool):
    return np.exp(model._log_density_at(radius, floor, training))


@_one_thread
def _capped_scores(p_unit, h: _GridInterpolant, cap: float):
    return np.minimum(h(p_unit), cap)


@_one_thread
def _block_normal_equations(X, Y, shared, memory_budget: float):
    from .krr.nystrom import _chunks, _normal_equations

    kernel, centers, T = shared
    m = centers.shape[0]
    chunks = _chunks(X.shape[0], m, 8.0 * (X.shape[1] + Y.shape[1] + m), memory_budget)
    return _normal_equations(kernel, X, Y, centers, T, chunks)


def _add_pair(a, b):
    return tuple(x + y for x, y in zip(a, b, strict=True))


def _tree_sum(parts: list):
    """Pairwise (tree) sum of Delayed tuples of arrays."""
    import dask

    while len(parts) > 1:
        parts = [dask.delayed(_add_pair)(*parts[i:i + 2]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return parts[0]


@_one_thread
def _predict_block(X, shared, memory_budget: float):
    kernel, centers, coef = shared
    return kernel_product(kernel, X, centers, coef, memory_budget=memory_budget)


# --------------------------------------------------------------------------------------------
# SpectralLeverage
# --------------------------------------------------------------------------------------------


def fit_leverage(estimator, X):
    """``SpectralLeverage.fit`` on a Dask array: what the estimator calls for Dask input.

    Parameters
    ----------
    estimator : SpectralLeverage
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n, d)

    Returns
    -------
    estimator
        Fitted; ``scores_``, ``leverage_``, ``probabilities_`` and ``density_`` are lazy Dask arrays
        with X's row chunks, ``effective_dimension_`` a float.

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> from spectral_leverage import SpectralLeverage
    >>> X = np.random.default_rng(0).uniform(size=(4000, 2))
    >>> sl = SpectralLeverage(Matern(0.5, nu=1.5), reg=1e-3, random_state=0)
    >>> lazy = sl.fit(da.from_array(X, chunks=(1000, 2))).scores_   # dispatches here
    >>> bool(np.allclose(lazy.compute(), sl.fit(X).scores_, rtol=1e-12))
    True
    """
    import dask
    import dask.array as da

    X = as_dask_matrix(X)
    n, d = X.shape
    spec, reg = estimator._setup(d)
    if estimator.density is not None:
        raise ValueError(
            "density must be None for Dask input: the density is estimated on the workers "
            "(a known density can be passed for in-memory data)."
        )
    if estimator.max_tree_size is None:
        raise ValueError(
            "max_tree_size=None evaluates the KDE at every point and needs the data in memory; "
            "give an int (default 16384) for Dask input."
        )
    anchors = _anchor_indices(n, estimator.max_tree_size, estimator.random_state)
    low, high, std, rows = dask.compute(X.min(axis=0), X.max(axis=0), X.std(axis=0),
                                        X if anchors is None else X[anchors])
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
        raise ValueError("Input X contains NaN or infinity.")
    estimator._model = estimator._ambient = None
    chunks = X.chunks[0]
    if not estimator._set_active(high - low):
        estimator.intrinsic_dim_ = 0.0
        estimator.density_ = da.full(n, np.inf, chunks=chunks)
        _set_scores(estimator, da.full(n, spec.amplitude / (spec.amplitude + reg), chunks=chunks))
        return estimator
    Z = estimator._unit(rows)
    estimator.intrinsic_dim_, on_manifold = estimator._choose_dimension(
        Z if estimator.intrinsic_dim is not None else None)
    active, length = estimator._active, estimator._length
    model = None if on_manifold else estimator._binned_layout(n, std[active], low[active], high[active])
    if model is None:
        model = estimator._density_model(on_manifold)
    meta = np.empty(0)
    if type(model) is BinnedDensity:
        # every row's linear-binning weights, summed over blocks by a tree reduction; the grid is
        # smoothed on the client and broadcast for the per-row interpolation
        layout = _share(model)
        parts = [dask.delayed(_bin_block)(block, layout, active) for block in X.to_delayed().ravel()]
        (counts,) = dask.compute(_tree_sum(parts))[0]
        model.smooth(counts, n)
    elif type(model) is KNNDensity:
        model.fit(Z)
        training = anchors is None  # the tree holds every row, each finds itself
        shared = _share(model)
        radius = X.map_blocks(_knn_radius, shared, active, length, training, drop_axis=1,
                              dtype=float, meta=meta).persist()
        floor = float(da.where(radius > 0, radius, np.inf).min().compute())
        p_unit = p_score = radius.map_blocks(_knn_density, shared, floor if np.isfinite(floor) else None,
                                             training, dtype=float, meta=meta)
    elif type(model) is TreeDensity:
        # C order as in memory: the anchors' standard deviations (bandwidths) depend on the
        # summation order
        model.fit(np.ascontiguousarray(rows[:, active]))
        if n > model.n_tree_:  # the workers interpolate: anchor densities and tree made here, once
            model._prepare_interpolation()
    else:  # pragma: no cover - a density estimator without a distributed path
        raise NotImplementedError(f"{type(model).__name__} has no Dask path.")
    if type(model) is not KNNDensity:
        # an ambient KDE (binned or tree): shipped to the workers with its slope grids, made once here
        estimator._ambient = estimator._ambient_for(model).prepare()
        shared = _share(estimator._ambient)
        if estimator._ambient.boundary is None:
            p_unit = p_score = X.map_blocks(_ambient_density, shared, active, n, drop_axis=1,
                                            dtype=float, meta=meta).persist()
        else:
            both = X.map_blocks(_ambient_density, shared, active, n, chunks=(chunks, (2,)),
                                dtype=float, meta=meta).persist()
            p_unit, p_score = both[:, 0], both[:, 1]
    estimator._model = model
    p_low, p_high = (float(v) for v in dask.compute(p_score.min(), p_score.max()))
    estimator.density_ = p_unit / estimator._mean_length**estimator.intrinsic_dim_
    cap = estimator._score_cap(n)
    if n <= 64:  # sa_scores integrates every value directly: do the same
        scores = da.from_array(estimator._scores_from_density(p_score.compute(), n), chunks=chunks)
    elif p_high <= p_low * (1 + 1e-12):  # constant density: h varies by < 1e-12 over the range
        h = sa_integral([p_low], spec.unit, reg, estimator.intrinsic_dim_, estimator.integral)[0]
        scores = da.full(n, min(h, cap), chunks=chunks)
    else:
        h = _GridInterpolant(p_low, p_high, spec.unit, reg, estimator.intrinsic_dim_, estimator.integral)
        scores = p_score.map_blocks(_capped_scores, _share(h), cap, dtype=float, meta=meta)
    _set_scores(estimator, scores)
    return estimator


def _aligned_chunks(chunks: tuple) -> tuple:
    """Row chunks of about the same size as ``chunks``, each a multiple of the sampling segment."""
    n = int(sum(chunks))
    size = max(1, round(float(np.median(chunks)) / _SEGMENT)) * _SEGMENT
    full, rest = divmod(n, size)
    return (size,) * full + ((rest,) if rest else ())


def _set_scores(estimator, scores) -> None:
    """``LeverageSampler._set_scores`` for a lazy score array: one pass for the checks, the total
    and the per-segment totals that ``sample`` needs."""
    import dask

    n = scores.shape[0]
    aligned = scores.rechunk((_aligned_chunks(scores.chunks[0]),))
    segments = tuple(-(-c // _SEGMENT) for c in aligned.chunks[0])
    totals = aligned.map_blocks(_segment_totals, chunks=(segments,), dtype=float)
    low, high, total, totals = dask.compute(scores.min(), scores.max(), scores.sum(), totals)
    if not (np.isfinite(high) and low >= 0 and total > 0):
        raise RuntimeError(
            f"{type(estimator).__name__} produced invalid scores (non-finite, negative or all zero); "
            "please report this with the data's shape and the kernel."
        )
    estimator.scores_ = scores
    estimator.leverage_ = scores / n
    estimator.probabilities_ = scores / total
    estimator.effective_dimension_ = float(total / n)
    estimator._dask_sampling = (aligned, np.asarray(totals))


def sample_indices(estimator, n_samples: int, *, replace: bool = True, random_state=None) -> np.ndarray:
    """``LeverageSampler.sample`` for an estimator fitted on Dask data: the same indices.

    Two-level inverse CDF: the segment of each draw from the per-segment score totals computed at
    fit time, then the row inside it, one task per row chunk holding draws.

    Parameters
    ----------
    estimator : LeverageSampler
        Fitted on a Dask array.
    n_samples : int
        Number of draws, >= 1.
    replace : bool, default=True
        Must be True on Dask input.
    random_state : int, numpy Generator or None
        None uses the estimator's own ``random_state``.

    Returns
    -------
    ndarray of int, shape (n_samples,)

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> from spectral_leverage import SpectralLeverage
    >>> X = np.random.default_rng(0).normal(size=(3000, 2))
    >>> sl = SpectralLeverage(RBF(1.0), reg=1e-3, random_state=0)
    >>> on_dask = sl.fit(da.from_array(X, chunks=(700, 2))).sample(20, random_state=1)
    >>> bool(np.array_equal(on_dask, sl.fit(X).sample(20, random_state=1)))
    True
    """
    import dask

    n_samples = check_samples(n_samples)
    if not replace:
        raise ValueError(
            "replace=False is not supported for an estimator fitted on Dask data; draw with "
            "replace=True and de-duplicate (as NystromKRR does), or fit on an in-memory array."
        )
    aligned, totals = estimator._dask_sampling
    rng = check_random_state(estimator.random_state if random_state is None else random_state)
    segment, residual = _split_draws(totals, rng.random(n_samples))
    first = np.concatenate([[0], np.cumsum(aligned.chunks[0][:-1])]) // _SEGMENT
    chunk = np.searchsorted(first, segment, side="right") - 1
    blocks = aligned.to_delayed().ravel()
    masks, tasks = [], []
    for b in np.unique(chunk):
        mask = chunk == b
        masks.append((mask, int(first[b]) * _SEGMENT))
        tasks.append(dask.delayed(_locate)(blocks[b], int(first[b]), segment[mask], residual[mask]))
    out = np.empty(n_samples, dtype=np.intp)
    for (mask, offset), rows in zip(masks, dask.compute(*tasks), strict=True):
        out[mask] = rows + offset
    return out


# --------------------------------------------------------------------------------------------
# NystromKRR
# --------------------------------------------------------------------------------------------


def _as_dask_targets(y, row_chunks: tuple, n: int):
    """y as a 2-D float64 Dask array (n, t) with the given row chunks, and y's own ndim."""
    import dask.array as da

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
    Y = da.from_array(Y, chunks=(row_chunks, -1)) if not isinstance(Y, da.Array) else Y.rechunk(
        (row_chunks, -1))
    return Y.astype(np.float64), ndim


def fit_nystrom(model, X, y):
    """``NystromKRR.fit`` on Dask data: the same centres, coefficients equal to rounding.

    The centres are drawn by the Dask path of :class:`~spectral_leverage.SpectralLeverage`
    (same seed, same draws) and gathered; every row chunk contributes its normal equations
    :math:`(T^{-\\top}K_{bJ}^\\top K_{bJ}T^{-1}, T^{-\\top}K_{bJ}^\\top y_b)`, summed by a tree
    reduction, and the :math:`m \\times m` system is solved on the client by the in-memory code.

    Parameters
    ----------
    model : NystromKRR
        With ``solver`` "auto" or "direct" and ``sampler="spectral"`` (or a SpectralLeverage).
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n, d)
    y : array_like or Dask array of shape (n,) or (n, t)

    Returns
    -------
    model

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> from spectral_leverage import NystromKRR, SpectralLeverage
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(3000, 2))
    >>> y = np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=3000)
    >>> tree = SpectralLeverage(Matern(0.5, nu=1.5), reg=1e-4, kde="tree")
    >>> krr = NystromKRR(Matern(0.5, nu=1.5), reg=1e-4, n_centers=60, sampler=tree, random_state=0)
    >>> coef = krr.fit(da.from_array(X, chunks=(1000, 2)), y).coef_
    >>> bool(np.allclose(coef, krr.fit(X, y).coef_, rtol=1e-8, atol=1e-10))
    True
    """
    import dask

    from .krr.nystrom import DIRECT_MAX_CENTERS, _draw_centers, _solve_normal_equations, _upper_cholesky
    from .spectral.leverage import SpectralLeverage

    X = as_dask_matrix(X)
    n, d = X.shape
    Y, y_ndim = _as_dask_targets(y, X.chunks[0], n)
    parse_kernel(model.kernel).check_n_features(d)
    reg = check_positive(model.reg, "reg")
    n_centers = check_samples(model.n_centers, "n_centers")
    budget = check_positive(model.memory_budget, "memory_budget")
    if model.solver not in ("auto", "direct"):
        raise ValueError(
            f"solver must be 'auto' or 'direct' for Dask input (the conjugate-gradient solver "
            f"streams the data once per iteration), got {model.solver!r}."
        )
    if not (model.sampler == "spectral" if isinstance(model.sampler, str)
            else isinstance(model.sampler, SpectralLeverage)):
        raise ValueError(
            f"sampler must be 'spectral' or a SpectralLeverage for Dask input, got {model.sampler!r}."
        )
    rng = check_random_state(model.random_state)
    idx = _draw_centers(X, n_centers, model.sampler, kernel=model.kernel, reg=reg, rng=rng)
    centers = X[idx].compute()
    m = idx.shape[0]
    if model.solver == "auto" and m > DIRECT_MAX_CENTERS:
        raise ValueError(
            f"{m} centres: solver='auto' would use conjugate gradient, not available for Dask "
            "input; pass solver='direct' (O(m^3) on the client) or fewer n_centers."
        )
    T, _ = _upper_cholesky(model.kernel(centers))
    shared = _share((model.kernel, centers, T))
    parts = [dask.delayed(_block_normal_equations)(xb, yb, shared, budget)
             for xb, yb in zip(X.to_delayed().ravel(), Y.to_delayed().ravel(), strict=True)]
    (H, c), x_finite, y_finite = dask.compute(
        _tree_sum(parts), X.map_blocks(np.isfinite, dtype=bool).all(),
        Y.map_blocks(np.isfinite, dtype=bool).all())
    if not (x_finite and y_finite):
        raise ValueError(f"Input {'y' if x_finite else 'X'} contains NaN or infinity.")
    coef = _solve_normal_equations(H, c, T, n * reg)
    model.n_features_in_ = d
    model.center_indices_ = idx
    model.centers_ = centers
    model.coef_ = coef.ravel() if y_ndim == 1 else coef
    model.solver_ = "direct"
    model.n_iter_ = 0
    return model


def predict_nystrom(model, X):
    """``NystromKRR.predict`` on a Dask array: a lazy Dask array with X's row chunks.

    Parameters
    ----------
    model : NystromKRR
        Fitted (on in-memory or Dask data).
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n_new, d)

    Returns
    -------
    dask.array.Array of shape (n_new,) or (n_new, t)

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> from spectral_leverage import NystromKRR
    >>> X = np.random.default_rng(0).uniform(size=(2000, 1))
    >>> krr = NystromKRR(RBF(0.3), reg=1e-4, n_centers=40, random_state=0).fit(X, np.cos(5 * X[:, 0]))
    >>> lazy = krr.predict(da.from_array(X, chunks=(500, 1)))
    >>> lazy.chunks, bool(np.allclose(lazy.compute(), krr.predict(X)))
    (((500, 500, 500, 500),), True)
    """
    X = as_dask_matrix(X, min_samples=1)
    if X.shape[1] != model.n_features_in_:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(model).__name__} is expecting "
            f"{model.n_features_in_} features as input."
        )
    budget = check_positive(model.memory_budget, "memory_budget")
    coef = model.coef_
    shared = _share((model.kernel, model.centers_, coef))
    if coef.ndim == 1:
        return X.map_blocks(_predict_block, shared, budget, drop_axis=1, dtype=float, meta=np.empty(0))
    return X.map_blocks(_predict_block, shared, budget, chunks=(X.chunks[0], (coef.shape[1],)),
                        dtype=float, meta=np.empty((0, 0)))

r"""Nyström KRR with λ and ℓ chosen by cross-validation: every λ from one eigendecomposition.

For a length scale ℓ the centres :math:`J` are drawn once. With :math:`B = K_{nJ}T^{-1}`
(:math:`T^\top T = K_{JJ}`), weights :math:`w` (:math:`W = \sum_i w_i`) and the intercept eliminated
(:mod:`spectral_leverage.krr._solvers`), the centred normal equations are
:math:`(H + W\lambda I)\beta = c`. One eigendecomposition :math:`H = V\Lambda V^\top` gives every λ:
:math:`\beta(\lambda) = V(\Lambda + W\lambda)^{-1}z`, :math:`z = V^\top c`, for :math:`O(m^2)` each.
The fitted values are a linear smoother :math:`\hat y = S_\lambda y` (the Nyström hat matrix) with

.. math::

    S_\lambda = \tfrac1W \mathbf 1 w^\top + \tilde B (\tilde B^\top D_w \tilde B + W\lambda I)^{-1}
    \tilde B^\top D_w, \qquad \operatorname{tr} S_\lambda = 1 + \sum_k \frac{\Lambda_k}{\Lambda_k + W\lambda},

:math:`\tilde B` the weighted-centred :math:`B` (no :math:`\mathbf 1 w^\top/W` term without an
intercept). The criteria, all a weighted mean squared error (lower is better):

* ``cv="gcv"`` (Golub, Heath & Wahba, 1979): :math:`\frac{\sum_i w_i r_i^2 / W}
  {(1 - \operatorname{tr} S_\lambda / n)^2}` (n the rows of positive weight), the residual sum
  from :math:`\Lambda` and :math:`z` alone; no second pass over the data.
* ``cv="loo"``: :math:`\frac1W\sum_i w_i \big(r_i / (1 - [S_\lambda]_{ii})\big)^2`, the exact
  leave-one-out error of this penalised least-squares problem with the centres and the penalty
  :math:`W\lambda` held fixed (as scikit-learn's ``RidgeCV``, whose ``alpha`` is not rescaled when a
  row is left out); one more pass for the diagonal :math:`[S_\lambda]_{ii}`.
* an int k (or a scikit-learn splitter): the system of each training fold, the error on its
  held-out fold. The centres are drawn from all rows' inputs (never their targets).

Multi-output targets are scored by the mean over outputs.
"""

from __future__ import annotations

from numbers import Integral
from typing import ClassVar

import numpy as np
from scipy.linalg import eigh, solve_triangular
from scipy.spatial.distance import pdist
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._blocks import DEFAULT_MEMORY_BUDGET
from .._validation import (
    KERNEL,
    MEMORY_BUDGET,
    POSITIVE_INT,
    RANDOM_STATE,
    check_random_state,
    validate_params,
)
from ..backends import backend_for
from ..kernels import parse_kernel, resolve_kernel
from ._solvers import centred_system, normal_equations, upper_cholesky, whitened_blocks
from .centers import choose_centers, positive_rows
from .nystrom import SAMPLER, NystromKRR

__all__ = ["NystromKRRCV", "default_length_scales", "default_regs", "nystrom_path"]

_N_REGS = 20
_LENGTH_FACTORS = (0.125, 0.25, 0.5, 1.0)
_MEDIAN_ROWS = 1000


def default_regs(n: int) -> np.ndarray:
    r"""The default λ grid: 20 values log-spaced from :math:`10^{-1}` down to :math:`10^{-3}/n`.

    On standardised inputs with a unit-amplitude kernel, :math:`n\lambda` is compared with the
    eigenvalues of K, which run from about n down to 0: the grid spans over-smoothing (nλ ≈ n/10)
    to interpolation of all but the smallest components (nλ = 10⁻³), below the
    :math:`n^{-1}`–:math:`n^{-1/2}` range of the minimax rates.
    """
    return np.geomspace(1e-1, 1e-3 / n, _N_REGS)


def default_length_scales(X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The default ℓ grid: the median distance between rows (of at most 1000 drawn at random; the
    "median heuristic") times 1/8, 1/4, 1/2 and 1."""
    rows = X if X.shape[0] <= _MEDIAN_ROWS else X[rng.choice(X.shape[0], _MEDIAN_ROWS, replace=False)]
    median = float(np.median(pdist(rows)))
    return median * np.asarray(_LENGTH_FACTORS) if median > 0 else np.ones(1)


def _check_grid(values, name: str) -> np.ndarray:
    try:
        grid = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        grid = np.empty(0)
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
        raise ValueError(
            f"{name} must be a non-empty 1-D sequence of finite values > 0, got {values!r}; "
            f"pass None for the default grid."
        )
    return np.unique(grid)


def _with_length_scale(kernel, length_scale: float):
    """A clone of ``kernel`` (Matérn or RBF, possibly times a constant) with another length scale."""
    key = next(k for k in kernel.get_params() if k.endswith("length_scale"))
    return clone(kernel).set_params(**{key: length_scale})


def _eigensystem(X, Y, shared, weights, fit_intercept: bool, memory_budget: float) -> dict:
    """The centred normal equations of the rows of X, diagonalised."""
    H, c, b_mean, y_mean, total = centred_system(
        normal_equations(X, Y, shared, memory_budget, weights=weights), fit_intercept)
    H = np.triu(H) + np.triu(H, 1).T
    evals, V = eigh(H, check_finite=False)
    return dict(evals=np.maximum(evals, 0.0), V=V, z=V.T @ c, b_mean=b_mean, y_mean=y_mean,
                total=total, fit_intercept=fit_intercept)


def _shrink(system: dict, regs: np.ndarray) -> np.ndarray:
    """(m, L): :math:`1/(\\Lambda_k + W\\lambda_l)`."""
    return 1.0 / (system["evals"][:, None] + system["total"] * regs[None, :])


def _combine(A: np.ndarray, z: np.ndarray, D: np.ndarray) -> np.ndarray:
    """(b, L, t): ``A @ (z[:, j] * D[:, l])`` for every λ l and output j, as one matrix product."""
    m, t = z.shape
    product = A @ (z[:, :, None] * D[:, None, :]).reshape(m, -1)
    return product.reshape(A.shape[0], t, -1).transpose(0, 2, 1)


def _held_out(X, Y, weights, shared, system: dict, regs, memory_budget: float,
              leave_one_out: bool) -> np.ndarray:
    """Σ_i w_i e_i² over the rows of X for every λ (summed over outputs), e the residual of the
    system's fit, divided by 1 − [S_λ]_ii for leave-one-out."""
    D, V, z = _shrink(system, regs), system["V"], system["z"]
    w = np.ones(X.shape[0]) if weights is None else weights
    errors = np.zeros(regs.size)
    for rows, Bt in whitened_blocks(X, shared, memory_budget, regs.size * Y.shape[1]):
        Q = (Bt.T - system["b_mean"]) @ V
        residual = Y[rows][:, None, :] - system["y_mean"] - _combine(Q, z, D)
        if leave_one_out:
            h = w[rows, None] * ((Q**2) @ D + system["fit_intercept"] / system["total"])
            residual /= (1.0 - h)[:, :, None]
        errors += np.einsum("b,blt->l", w[rows], residual**2)
    return errors


def nystrom_path(X, Y, kernel, centers, regs, *, weights=None, fit_intercept: bool = True,
                 criterion: str | None = "gcv", memory_budget: float = DEFAULT_MEMORY_BUDGET) -> dict:
    r"""Nyström KRR on fixed centres for every λ of ``regs`` from one eigendecomposition.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Y : ndarray of shape (n, t)
    kernel : sklearn kernel
    centers : ndarray of shape (m, d)
    regs : ndarray of shape (L,)
        λ values, > 0.
    weights : ndarray of shape (n,) or None
        Positive row weights.
    fit_intercept : bool, default=True
    criterion : {"gcv", "loo"} or None, default="gcv"
        The criterion of the module docstring computed for every λ (None: none).
    memory_budget : float

    Returns
    -------
    dict
        ``coef`` (L, m, t) and ``intercept`` (L, t), equal to ``NystromKRR.fit`` with these
        centres at each λ; ``df`` (L,), :math:`\operatorname{tr} S_\lambda`; ``error`` (L,), the
        criterion (absent for None).
    """
    T = upper_cholesky(kernel(centers))[0]
    shared = (kernel, centers, T)
    system = _eigensystem(X, Y, shared, weights, fit_intercept, memory_budget)
    D, V, z, evals = _shrink(system, regs), system["V"], system["z"], system["evals"]
    beta = _combine(V, z, D)  # (m, L, t)
    m, t = z.shape
    coef = solve_triangular(T, beta.reshape(m, -1), check_finite=False)
    out = dict(coef=coef.reshape(m, regs.size, t).transpose(1, 0, 2),
               intercept=system["y_mean"] - np.einsum("m,mlt->lt", system["b_mean"], beta),
               df=(evals[:, None] * D).sum(axis=0) + fit_intercept)
    w = np.ones(X.shape[0]) if weights is None else weights
    if criterion == "gcv":
        yy = float(np.sum(w[:, None] * (Y - system["y_mean"]) ** 2))
        mu = system["total"] * regs
        rss = yy - np.einsum("kt,kl->l", z**2, (evals[:, None] + 2 * mu) * D**2)
        dof = np.minimum(out["df"] / X.shape[0], 1.0)  # df = n: interpolation, GCV infinite
        with np.errstate(divide="ignore"):
            out["error"] = np.maximum(rss, 0.0) / (system["total"] * t) / (1 - dof) ** 2
    elif criterion == "loo":
        out["error"] = _held_out(X, Y, weights, shared, system, regs, memory_budget, True) / (
            system["total"] * t)
    return out


class NystromKRRCV(RegressorMixin, BaseEstimator):
    r"""Nyström kernel ridge regression with λ and ℓ chosen by GCV, leave-one-out or k-fold CV.

    For each length scale ℓ of the grid the centres are drawn once (leverage scores at the grid's
    geometric-middle λ, ``n_centers`` of them, ``"auto"`` by
    :func:`~spectral_leverage.krr.centers.auto_centers`) and every λ is solved from one
    eigendecomposition of the :math:`m \times m` system (module docstring): a grid of
    :math:`L_\ell \times L_\lambda` values costs :math:`L_\ell` passes over the data (k passes each
    for k-fold), where a grid search refits :math:`k L_\ell L_\lambda` times. With
    ``n_centers="auto"``, when the chosen λ lies below the middle one (where the rule asks for
    more centres), the chosen ℓ is scored once more on centres drawn at the chosen λ and its λ
    chosen again: too few centres make small λ look worse than they are (on CCPP, Matérn 3/2, the
    first pass stopped at twice the λ that exact KRR prefers). The chosen (λ, ℓ) is then fitted by
    :class:`NystromKRR` (``best_estimator_``, its ``n_centers`` rule applied at the chosen λ).

    Parameters
    ----------
    kernel : sklearn kernel or None, default=None
        ``Matern`` or ``RBF``, optionally times ``ConstantKernel``; None is ``Matern(nu=1.5)``. Its
        length scale is replaced by each value of ``length_scales``.
    regs : array_like of float > 0 or None, default=None
        The λ grid; None is :func:`default_regs` (20 values from 0.1 to :math:`10^{-3}/n`).
    length_scales : array_like of float > 0 or None, default=None
        The ℓ grid; None is :func:`default_length_scales` (the median distance between rows times
        1/8, 1/4, 1/2, 1: meant for standardised X).
    n_centers : int or "auto", default="auto"
        As in :class:`NystromKRR`.
    cv : {"loo", "gcv"}, int >= 2 or a scikit-learn splitter, default="loo"
        The criterion (module docstring). Leave-one-out is the default: it is exact for the
        fixed-centre problem, whereas GCV replaces every :math:`[S_\lambda]_{ii}` by their mean,
        which the centres (rows whose own kernel function is in the model) make far from uniform;
        on CCPP (RBF) GCV chose ℓ = 0.31 and a test RMSE 8 % above leave-one-out's choice, for one
        more pass over the data per ℓ (docs/notes/krr-cv.md).
    sampler : str or LeverageSampler, default="spectral"
        As in :class:`NystromKRR`.
    fit_intercept : bool, default=True
    memory_budget : int, default=1 GiB
        As in :class:`NystromKRR`; also caps ``n_centers="auto"``.
    random_state : int, numpy Generator or None, default=None
        Seeds the centres and the median heuristic's rows.

    Attributes
    ----------
    reg_ : float
        The chosen λ.
    length_scale_ : float
        The chosen ℓ.
    kernel_ : sklearn kernel
        ``kernel`` with the chosen ℓ.
    n_centers_ : int
        Unique centres of ``best_estimator_``.
    best_estimator_ : NystromKRR
        Fitted on all the data at ``reg_`` and ``kernel_``; ``predict`` delegates to it.
    best_score_ : float
        Minus the chosen criterion (a weighted mean squared error).
    cv_results_ : dict of ndarray
        One entry per (ℓ, λ), ℓ-major: ``param_length_scale``, ``param_reg``, ``mean_test_score``
        (minus the criterion), ``rank_test_score``, ``n_centers`` (the centres scored: the second
        pass's for the chosen ℓ), ``effective_degrees_of_freedom``
        (:math:`\operatorname{tr}S_\lambda`, GCV and LOO), and ``split<k>_test_score`` for k-fold.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> y = 10 + np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=2000)
    >>> model = NystromKRRCV(random_state=0).fit(X, y)
    >>> bool(model.score(X, y) > 0.95), model.cv_results_["param_reg"].shape
    (True, (80,))
    """

    _parameter_constraints: ClassVar[dict] = {
        "kernel": KERNEL,
        "regs": [None, "array-like"],
        "length_scales": [None, "array-like"],
        "n_centers": [*POSITIVE_INT, StrOptions({"auto"})],
        "cv": [StrOptions({"gcv", "loo"}), Interval(Integral, 2, None, closed="left"), "cv_object"],
        "sampler": SAMPLER,
        "fit_intercept": ["boolean"],
        "memory_budget": MEMORY_BUDGET,
        "random_state": RANDOM_STATE,
    }

    def __init__(self, kernel=None, *, regs=None, length_scales=None, n_centers="auto", cv="loo",
                 sampler="spectral", fit_intercept: bool = True,
                 memory_budget: int = DEFAULT_MEMORY_BUDGET, random_state=None):
        self.kernel = kernel
        self.regs = regs
        self.length_scales = length_scales
        self.n_centers = n_centers
        self.cv = cv
        self.sampler = sampler
        self.fit_intercept = fit_intercept
        self.memory_budget = memory_budget
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def fit(self, X, y, sample_weight=None) -> NystromKRRCV:
        """Score every (λ, ℓ) of the grids, then fit ``best_estimator_`` on all the data.

        Parameters
        ----------
        X : array_like of shape (n, d)
            Finite inputs, n >= 2 (in memory).
        y : array_like of shape (n,) or (n, t)
        sample_weight : array_like of shape (n,) or None, default=None
            As in :meth:`NystromKRR.fit`; the criteria are weighted means.

        Returns
        -------
        self
        """
        validate_params(self)
        backend_for(X, y).require_in_memory("NystromKRRCV", "compute the arrays, or fit NystromKRR")
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=True, y_numeric=True,
                             ensure_min_samples=2)
        kernel = resolve_kernel(self.kernel)
        parse_kernel(kernel).check_inputs(X)
        Xw, Y, weights = X, y.reshape(X.shape[0], -1), None
        if sample_weight is not None:
            rows, weights = positive_rows(X, sample_weight)
            Xw, Y = X[rows], Y[rows]
        rng = check_random_state(self.random_state)
        regs = default_regs(Xw.shape[0]) if self.regs is None else _check_grid(self.regs, "regs")
        scales = default_length_scales(Xw, rng) if self.length_scales is None else _check_grid(
            self.length_scales, "length_scales")
        splits = None if isinstance(self.cv, str) else list(check_cv(self.cv).split(Xw, Y))
        reference = float(np.exp(np.mean(np.log(regs))))
        seeds = rng.integers(2**31 - 1, size=scales.size)
        passes = [self._path(Xw, Y, weights, kernel, ell, reference, seed, regs, splits)
                  for ell, seed in zip(scales, seeds, strict=True)]
        best, chosen = self._best(passes, splits)
        if self.n_centers == "auto" and regs[chosen] < reference:
            again = self._path(Xw, Y, weights, kernel, scales[best], regs[chosen], seeds[best], regs,
                               splits)
            if again["n_centers"] > passes[best]["n_centers"]:
                passes[best] = again
                best, chosen = self._best(passes, splits)
        self.cv_results_ = self._results(passes, scales, regs, splits)
        self.reg_, self.length_scale_ = float(regs[chosen]), float(scales[best])
        self.kernel_ = _with_length_scale(kernel, self.length_scale_)
        self.best_score_ = float(self.cv_results_["mean_test_score"][best * regs.size + chosen])
        self.best_estimator_ = NystromKRR(
            self.kernel_, self.reg_, self.n_centers, sampler=self.sampler,
            fit_intercept=self.fit_intercept, memory_budget=self.memory_budget,
            random_state=int(seeds[best]),
        ).fit(X, y, sample_weight=sample_weight)
        self.n_centers_ = int(self.best_estimator_.center_indices_.size)
        return self

    def _path(self, X, Y, weights, kernel, ell: float, reg: float, seed, regs, splits) -> dict:
        """The criterion at every λ for one ℓ, on centres drawn at ``reg``."""
        kern = _with_length_scale(kernel, float(ell))
        idx, _ = choose_centers(X, self.n_centers, self.sampler, kernel=kern, reg=reg,
                                memory_budget=self.memory_budget, sample_weight=weights,
                                rng=np.random.default_rng(seed))
        error, df = self._score(X, Y, weights, kern, X[idx], regs, splits)
        return dict(error=error, df=df, n_centers=idx.size)

    @staticmethod
    def _best(passes: list, splits) -> tuple[int, int]:
        """(index of ℓ, index of λ) of the lowest criterion (mean over folds)."""
        error = np.stack([p["error"] if splits is None else p["error"].mean(axis=0) for p in passes])
        return np.unravel_index(int(np.argmin(error)), error.shape)

    def _score(self, X, Y, weights, kernel, centers, regs, splits) -> tuple[np.ndarray, np.ndarray]:
        """(criterion of shape (L,) or (k, L) per split, degrees of freedom (L,)) for one ℓ."""
        if splits is None:
            path = nystrom_path(X, Y, kernel, centers, regs, weights=weights,
                                fit_intercept=self.fit_intercept, criterion=self.cv,
                                memory_budget=self.memory_budget)
            return path["error"], path["df"]
        shared = (kernel, centers, upper_cholesky(kernel(centers))[0])
        errors = []
        for train, test in splits:
            w_train, w_test = (None, None) if weights is None else (weights[train], weights[test])
            system = _eigensystem(X[train], Y[train], shared, w_train, self.fit_intercept,
                                  self.memory_budget)
            total = test.size if w_test is None else float(w_test.sum())
            errors.append(_held_out(X[test], Y[test], w_test, shared, system, regs,
                                    self.memory_budget, False) / (total * Y.shape[1]))
        return np.asarray(errors), np.full(regs.size, np.nan)

    @staticmethod
    def _results(passes: list, scales: np.ndarray, regs: np.ndarray, splits) -> dict:
        L = regs.size
        results = {
            "param_length_scale": np.repeat(scales, L),
            "param_reg": np.tile(regs, scales.size),
            "n_centers": np.repeat([p["n_centers"] for p in passes], L),
            "effective_degrees_of_freedom": np.concatenate([p["df"] for p in passes]),
        }
        error = np.concatenate([p["error"] for p in passes], axis=-1)
        if splits is not None:
            for k, fold in enumerate(error):
                results[f"split{k}_test_score"] = -fold
            error = error.mean(axis=0)
        results["mean_test_score"] = -error
        results["rank_test_score"] = np.argsort(np.argsort(error, kind="stable"), kind="stable") + 1
        return results

    def predict(self, X) -> np.ndarray:
        """Predictions of ``best_estimator_``.

        Parameters
        ----------
        X : array_like of shape (n_new, d)

        Returns
        -------
        ndarray of shape (n_new,) or (n_new, t)
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(validate_data(self, X, dtype=np.float64, reset=False))

"""Nyström KRR with λ and ℓ chosen by leave-one-out, GCV or k-fold cross-validation.

For each length scale the centres are drawn once and every λ is scored along the path of
:mod:`spectral_leverage.krr.reg_path` (its docstring states the criteria); a grid search would
refit once per (λ, ℓ, fold).
"""

from __future__ import annotations

import logging
import time
from numbers import Integral
from typing import ClassVar

import numpy as np
from scipy.spatial.distance import pdist
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._blocks import DEFAULT_MEMORY_BUDGET, progress
from .._validation import (
    KERNEL,
    MEMORY_BUDGET,
    POSITIVE_INT,
    RANDOM_STATE,
    NumericInterval,
    check_random_state,
    check_target,
    validate_params,
)
from ..backends import backend_for
from ..kernels import parse_kernel, resolve_kernel
from .centers import positive_rows, regressor_sampler, select_centers
from .nystrom import REGRESSOR_SAMPLER, NystromKRR
from .reg_path import held_out_error, nystrom_path

__all__ = ["NystromKRRCV", "default_length_scales", "default_regs", "explicit_splits",
           "standardised_target"]

logger = logging.getLogger(__name__)

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


def standardised_target(Y: np.ndarray, weights: np.ndarray | None,
                        fit_intercept: bool) -> tuple[np.ndarray, float]:
    r"""(Y centred by its weighted mean when ``fit_intercept`` and divided by a scale s, s): the
    criteria are then computed on values of order one, whatever y's units. On y itself their
    squares under- or overflow (y × 1e-200 gave every criterion 0, y × 1e155 gave inf, and the
    largest λ and shortest ℓ were chosen). s is the weighted root mean square of the centred
    values (one s for every output, so the mean over outputs weighs them as before; computed
    relative to the largest :math:`|y|`, so that its squares stay in range), 1 for a constant y.
    The chosen (λ, ℓ) do not change: an intercept absorbs the shift, and the criteria scale
    by :math:`s^2`."""
    peak = float(np.max(np.abs(Y), initial=0.0))
    if peak == 0:
        return Y, 1.0
    Y = Y / peak
    if fit_intercept:
        Y = Y - np.average(Y, axis=0, weights=weights)
    spread = float(np.sqrt(np.average(np.mean(Y**2, axis=1), weights=weights)))
    if spread == 0:
        return Y, 1.0
    return Y / spread, peak * spread


def explicit_splits(splits, n: int, rows: np.ndarray | None) -> list:
    """The user's (train, test) pairs of row indices of X (n rows) as indices into ``rows``, the
    rows of positive weight (None: every row): zero-weight rows leave both sides. A ``ValueError``
    names ``cv`` for indices outside 0..n-1 and for a split left without two training rows or a
    held-out row of positive weight."""
    position = np.arange(n)
    if rows is not None:
        position = np.full(n, -1)
        position[rows] = np.arange(rows.size)
    out = []
    for k, pair in enumerate(splits):
        mapped = []
        for side, idx in zip(("train", "test"), pair, strict=True):
            idx = np.asarray(idx)
            if idx.dtype == bool and idx.shape == (n,):
                idx = np.flatnonzero(idx)
            if idx.ndim != 1 or (idx.size and (idx.dtype.kind not in "iu" or idx.min() < 0
                                               or idx.max() >= n)):
                raise ValueError(f"cv's split {k} has {side} indices that are not rows 0..{n - 1} of X: "
                                 "give (train, test) pairs of row indices of X.")
            at = position[idx.astype(np.intp)]
            mapped.append(at[at >= 0])
        if mapped[0].size < 2 or mapped[1].size == 0:
            raise ValueError(f"cv's split {k} leaves {mapped[0].size} training and {mapped[1].size} "
                             "held-out rows of positive sample_weight: give every split at least two "
                             "training rows and one held-out row of positive weight.")
        out.append(tuple(mapped))
    return out


def _with_length_scale(kernel, length_scale: float):
    """A clone of ``kernel`` (Matérn or RBF, possibly times a constant) with another length scale."""
    key = next(k for k in kernel.get_params() if k.endswith("length_scale"))
    return clone(kernel).set_params(**{key: length_scale})


class NystromKRRCV(RegressorMixin, BaseEstimator):
    r"""Nyström kernel ridge regression with λ and ℓ chosen by GCV, leave-one-out or k-fold CV.

    For each length scale ℓ of the grid the centres are drawn once (leverage scores at the grid's
    geometric-middle λ, ``n_centers`` of them, ``"auto"`` by
    :func:`~spectral_leverage.krr.centers.auto_centers`) and every λ is solved from one
    eigendecomposition of the :math:`m \times m` system (:mod:`~spectral_leverage.krr.reg_path`): a grid of
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
        The criterion (:mod:`~spectral_leverage.krr.reg_path`). Leave-one-out is the default: it
        is exact for the fixed-centre problem, whereas GCV replaces every
        :math:`[S_\lambda]_{ii}` by their mean, which the centres (rows whose own kernel function
        is in the model) make far from uniform; on CCPP (RBF) GCV chose ℓ = 0.31 and a test RMSE
        8 % above leave-one-out's choice, for one more pass over the data per ℓ
        (docs/notes/krr-cv.md). An int or a splitter splits the rows of positive
        ``sample_weight``; explicit (train, test) pairs are row indices of X, and rows of zero
        weight leave them (:func:`explicit_splits`).
    sampler : "auto", str or LeverageSampler, default="auto"
        As in :class:`NystromKRR` (``"auto"`` is ``"adaptive-cholesky"``: X is in memory). Each
        length scale's centres are chosen for its own kernel.
    fit_intercept : bool, default=True
    memory_budget : int, default=1 GiB
        As in :class:`NystromKRR`; also caps ``n_centers="auto"``.
    random_state : int, numpy Generator or None, default=None
        Seeds the centres and the median heuristic's rows.
    verbose : bool, default=False
        A progress bar (stderr) over the length scales scored, each one's centres, best λ and time
        logged (``logging``, INFO) to this module's logger, and ``best_estimator_``'s own progress.

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
        Minus the chosen criterion (a weighted mean squared error, in y's units). The criteria are
        computed on y standardised (:func:`standardised_target`), so the choice does not depend on
        y's scale.
    cv_results_ : dict of ndarray
        One entry per (ℓ, λ), ℓ-major: ``param_length_scale``, ``param_reg``, ``mean_test_score``
        (minus the criterion, in y's units), ``rank_test_score``, ``n_centers`` (the centres
        scored: the second pass's for the chosen ℓ), ``effective_degrees_of_freedom``
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

    #: scikit-learn checks this estimator fails by design (:func:`~spectral_leverage._validation.
    #: expected_failed_checks`)
    _expected_failed_checks: ClassVar[dict[str, str]] = {
        "check_sample_weight_equivalence_on_dense_data":
            "leave-one-out and GCV count a repeated row as several (leaving one copy out keeps "
            "the others), and the default length scales' median distance counts repeats, so the "
            "chosen (λ, ℓ) differ; the centres are a random draw too (with one (λ, ℓ) and every row "
            "a centre the check passes: tests/krr/test_cv.py)",
    }

    _parameter_constraints: ClassVar[dict] = {
        "kernel": KERNEL,
        "regs": [None, "array-like"],
        "length_scales": [None, "array-like"],
        "n_centers": [*POSITIVE_INT, StrOptions({"auto"})],
        "cv": [StrOptions({"gcv", "loo"}), NumericInterval(Integral, 2, None, closed="left"), "cv_object"],
        "sampler": REGRESSOR_SAMPLER,
        "fit_intercept": ["boolean"],
        "memory_budget": MEMORY_BUDGET,
        "random_state": RANDOM_STATE,
        "verbose": ["boolean"],
    }

    def __init__(self, kernel=None, *, regs=None, length_scales=None, n_centers="auto", cv="loo",
                 sampler="auto", fit_intercept: bool = True,
                 memory_budget: int = DEFAULT_MEMORY_BUDGET, random_state=None, verbose: bool = False):
        self.kernel = kernel
        self.regs = regs
        self.length_scales = length_scales
        self.n_centers = n_centers
        self.cv = cv
        self.sampler = sampler
        self.fit_intercept = fit_intercept
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose

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
        X, y = validate_data(self, X, check_target(y), dtype=np.float64, multi_output=True, y_numeric=True,
                             ensure_min_samples=2)
        kernel = resolve_kernel(self.kernel)
        parse_kernel(kernel).check_inputs(X)
        Xw, Y, rows, weights = X, y.reshape(X.shape[0], -1), None, None
        if sample_weight is not None:
            rows, weights = positive_rows(X, sample_weight)
            Xw, Y = X[rows], Y[rows]
        Y, y_scale = standardised_target(Y, weights, self.fit_intercept)
        rng = check_random_state(self.random_state)
        regs = default_regs(Xw.shape[0]) if self.regs is None else _check_grid(self.regs, "regs")
        scales = default_length_scales(Xw, rng) if self.length_scales is None else _check_grid(
            self.length_scales, "length_scales")
        splits = self._splits(Xw, Y, X.shape[0], rows)
        reference = float(np.exp(np.mean(np.log(regs))))
        seeds = rng.integers(2**31 - 1, size=scales.size)
        passes = [self._path(Xw, Y, weights, kernel, ell, reference, seed, regs, splits)
                  for ell, seed in progress(list(zip(scales, seeds, strict=True)), verbose=self.verbose,
                                            desc="NystromKRRCV length scales", unit="ℓ")]
        best, chosen = self._best(passes)
        if self.n_centers == "auto" and regs[chosen] < reference:
            again = self._path(Xw, Y, weights, kernel, scales[best], regs[chosen], seeds[best], regs,
                               splits)
            if again["n_centers"] > passes[best]["n_centers"]:
                passes[best] = again
                best, chosen = self._best(passes)
        self.cv_results_ = self._results(passes, scales, regs, y_scale)
        self.reg_, self.length_scale_ = float(regs[chosen]), float(scales[best])
        self.kernel_ = _with_length_scale(kernel, self.length_scale_)
        self.best_score_ = float(self.cv_results_["mean_test_score"][best * regs.size + chosen])
        self.best_estimator_ = NystromKRR(
            self.kernel_, self.reg_, self.n_centers, sampler=self.sampler,
            fit_intercept=self.fit_intercept, memory_budget=self.memory_budget,
            random_state=int(seeds[best]), verbose=self.verbose,
        ).fit(X, y, sample_weight=sample_weight)
        self.n_centers_ = int(self.best_estimator_.centers_.shape[0])
        return self

    def _splits(self, X, Y, n: int, rows) -> list | None:
        """(train, test) indices into the rows of positive weight, X and Y: None for GCV and
        leave-one-out; an int or a splitter splits those rows (dropping a zero-weight row is then
        the same as giving it weight zero); explicit (train, test) pairs index the n rows the user
        gave, so they are checked against n and mapped onto the rows of positive weight."""
        if isinstance(self.cv, str):
            return None
        if isinstance(self.cv, Integral) or hasattr(self.cv, "split"):
            return list(check_cv(self.cv).split(X, Y))
        return explicit_splits(check_cv(self.cv).split(), n, rows)

    def _path(self, X, Y, weights, kernel, ell: float, reg: float, seed, regs, splits) -> dict:
        """The criterion at every λ for one ℓ, on centres drawn at ``reg``."""
        start = time.perf_counter()
        kern = _with_length_scale(kernel, float(ell))
        centers, _, _ = select_centers(X, self.n_centers, regressor_sampler(self.sampler, True),
                                       kernel=kern, reg=reg, memory_budget=self.memory_budget,
                                       sample_weight=weights, y=Y, fit_intercept=self.fit_intercept,
                                       rng=np.random.default_rng(seed))
        error, df = self._score(X, Y, weights, kern, centers, regs, splits)
        folds = None if splits is None else error
        error = error if splits is None else error.mean(axis=0)
        if self.verbose:
            logger.info("NystromKRRCV: length scale %.4g, %d centres drawn at reg %.3g: best reg %.3g "
                        "(criterion %.4g on the standardised target), %.2f s", ell, len(centers), reg,
                        regs[np.argmin(error)], np.min(error), time.perf_counter() - start)
        return dict(error=error, folds=folds, df=df, n_centers=len(centers))

    @staticmethod
    def _best(passes: list) -> tuple[int, int]:
        """(index of ℓ, index of λ) of the lowest criterion (mean over folds)."""
        error = np.stack([p["error"] for p in passes])
        return np.unravel_index(int(np.argmin(error)), error.shape)

    def _score(self, X, Y, weights, kernel, centers, regs, splits) -> tuple[np.ndarray, np.ndarray]:
        """(criterion of shape (L,) or (k, L) per split, degrees of freedom (L,)) for one ℓ."""
        if splits is None:
            path = nystrom_path(X, Y, kernel, centers, regs, weights=weights,
                                fit_intercept=self.fit_intercept, criterion=self.cv,
                                memory_budget=self.memory_budget)
            return path["error"], path["df"]
        errors = held_out_error(X, Y, kernel, centers, regs, splits, weights=weights,
                                fit_intercept=self.fit_intercept, memory_budget=self.memory_budget)
        return errors, np.full(regs.size, np.nan)

    @staticmethod
    def _results(passes: list, scales: np.ndarray, regs: np.ndarray, y_scale: float) -> dict:
        """``cv_results_``: the criteria, computed on the standardised target, in y's units
        (times ``y_scale`` squared; ±inf where that leaves float64, the ranks unaffected)."""
        L = regs.size
        results = {
            "param_length_scale": np.repeat(scales, L),
            "param_reg": np.tile(regs, scales.size),
            "n_centers": np.repeat([p["n_centers"] for p in passes], L),
            "effective_degrees_of_freedom": np.concatenate([p["df"] for p in passes]),
        }
        with np.errstate(over="ignore"):
            if passes[0]["folds"] is not None:
                for k, fold in enumerate(np.concatenate([p["folds"] for p in passes], axis=-1)):
                    results[f"split{k}_test_score"] = -fold * np.float64(y_scale) ** 2
            error = np.concatenate([p["error"] for p in passes])
            results["mean_test_score"] = -error * np.float64(y_scale) ** 2
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

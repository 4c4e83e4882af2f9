"""Nyström KRR with λ, ℓ and the number of centres chosen by leave-one-out, GCV or k-fold
cross-validation.

For each length scale and number of centres the centres are chosen once and every λ is scored
along the path of :mod:`spectral_leverage.krr.reg_path` (its docstring states the criteria); the
number of centres follows the error curve of :mod:`spectral_leverage.krr.center_curve`.
"""

from __future__ import annotations

import logging
import time
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._blocks import DEFAULT_MEMORY_BUDGET, use_n_jobs
from .._validation import (
    KERNEL,
    MEMORY_BUDGET,
    N_JOBS,
    POSITIVE,
    POSITIVE_INT,
    RANDOM_STATE,
    NumericInterval,
    check_random_state,
    check_target,
    validate_params,
)
from ..backends import backend_for
from ..kernels import parse_kernel
from .center_curve import TIME_BUDGET, center_sizes, grow_centers
from .centers import center_budget, positive_rows, regressor_sampler, select_centers
from .cv_inputs import (
    check_grid,
    check_kernels,
    default_length_scales,
    default_regs,
    explicit_splits,
    standardised_target,
    with_length_scale,
)
from .nystrom import REGRESSOR_SAMPLER, NystromKRR
from .reg_path import held_out_error, nystrom_path

__all__ = ["LOO_ROWS", "NystromKRRCV"]

logger = logging.getLogger(__name__)

#: ``cv="loo"`` on more rows than this: the criterion is the mean leave-one-out error of this many
#: rows drawn at random (the same for every (ℓ, m, λ)), which saves most of the second pass over
#: the data; its relative standard error is about :math:`\sqrt{2/50\,000} = 0.6\,\%` for
#: Gaussian residuals, and less for the differences that choose (the rows are shared)
LOO_ROWS = 50_000


class NystromKRRCV(RegressorMixin, BaseEstimator):
    r"""Nyström kernel ridge regression with the kernel, λ and ℓ chosen by GCV, leave-one-out or
    k-fold CV.

    For each kernel, each length scale ℓ of the grid and each number of centres m scored, the
    centres are chosen once (by ``sampler``, at the λ that was best for that (kernel, ℓ) on the
    previous m, or the grid's geometric middle at first) and every λ is solved from one
    eigendecomposition of the :math:`m \times m` system (:mod:`~spectral_leverage.krr.reg_path`): a
    grid of :math:`L_k \times L_\ell \times L_\lambda` values costs :math:`L_k L_\ell` passes over
    the data per m (k passes each for k-fold), where a grid search refits
    :math:`k L_k L_\ell L_\lambda` times. With ``n_centers="auto"`` m is read off the error curve
    (:mod:`~spectral_leverage.krr.center_curve`): doubled from 256 while the cross-validated RMSE
    still falls by ``tol``, the (kernel, ℓ) pairs racing (half of them dropped at each doubling
    from 512, ranked by their criterion one doubling ahead), up to n or the most centres
    ``memory_budget`` allows. The best (kernel, ℓ, m, λ) scored becomes a
    :class:`NystromKRR` (``best_estimator_``): its solution on all the rows for leave-one-out and
    GCV, a fit on all the rows for k-fold.

    Parameters
    ----------
    kernel : sklearn kernel, list of them, or None, default=None
        ``Matern`` or ``RBF``, optionally times ``ConstantKernel``, or a list of such kernels to
        choose from; None is :data:`~spectral_leverage.krr.cv_inputs.DEFAULT_KERNELS` (Matérn 3/2 and
        RBF). Each kernel's length
        scale is replaced by each value of ``length_scales``, and every (kernel, ℓ) pair is an arm of
        the race below.
    regs : array_like of float > 0 or None, default=None
        The λ grid; None is :func:`~spectral_leverage.krr.cv_inputs.default_regs` (20 values
        from 0.1 to :math:`10^{-3}/n`).
    length_scales : array_like of float > 0 or None, default=None
        The ℓ grid; None is :func:`~spectral_leverage.krr.cv_inputs.default_length_scales` (the
        median distance between rows times 1/8, 1/4, 1/2, 1: meant for standardised X).
    n_centers : int or "auto", default="auto"
        ``"auto"``: read off the error curve (above). An int: that many centres for every ℓ, as in
        :class:`NystromKRR`.
    cv : {"loo", "gcv"}, int >= 2 or a scikit-learn splitter, default="loo"
        The criterion (:mod:`~spectral_leverage.krr.reg_path`). Leave-one-out is the default: it
        is exact for the fixed-centre problem, whereas GCV replaces every
        :math:`[S_\lambda]_{ii}` by their mean, which the centres (rows whose own kernel function
        is in the model) make far from uniform; on CCPP (RBF) GCV chose ℓ = 0.31 and a test RMSE
        8 % above leave-one-out's choice, for one more pass over the data per ℓ
        (docs/notes/krr-cv.md); past :data:`LOO_ROWS` rows that pass covers that many rows drawn
        at random. An int or a splitter splits the rows of positive
        ``sample_weight``; explicit (train, test) pairs are row indices of X, and rows of zero
        weight leave them (:func:`~spectral_leverage.krr.cv_inputs.explicit_splits`).
    sampler : "auto", str or LeverageSampler, default="auto"
        As in :class:`NystromKRR` (``"auto"`` is ``"adaptive-cholesky"``: X is in memory). Each
        length scale's centres are chosen for its own kernel.
    fit_intercept : bool, default=True
    tol : float in [0, 1), default=0.01
        ``n_centers="auto"`` stops doubling a length scale's centres when that lowered its
        cross-validated root mean squared error (the square root of the criterion, at its best λ)
        by less than this fraction; 0 grows while it falls at all.
    time_budget : float > 0 or None, default=540
        Seconds of wall time for ``n_centers="auto"``'s curve: no doubling starts that would end
        past it, by the last one's time (a warning says so when it binds; k-fold's final fit on all
        the rows comes after). The default, nine minutes
        (:data:`~spectral_leverage.krr.center_curve.TIME_BUDGET`), binds from about 10⁵ rows, and
        there the result depends on the machine's speed and load; None: no limit, the same result
        on every machine.
    memory_budget : int, default=1 GiB
        As in :class:`NystromKRR`; also caps ``n_centers="auto"`` (a warning says so when it stops
        a curve that was still improving).
    random_state : int, numpy Generator or None, default=None
        Seeds the centres and the median heuristic's rows.
    verbose : bool, default=False
        A progress bar (stderr) over each m's length scales, each (ℓ, m)'s centres, best λ and time
        logged (``logging``, INFO) to this module's logger, and ``best_estimator_``'s own progress.
    n_jobs : int or None, default=None
        Threads of the fit and of ``predict``, BLAS's included, as in :class:`NystromKRR` (joblib's
        meaning: None is one thread outside a ``joblib.parallel_config`` context, -1 every core);
        ``best_estimator_`` has the same.

    Attributes
    ----------
    reg_ : float
        The chosen λ.
    length_scale_ : float
        The chosen ℓ.
    kernel_ : sklearn kernel
        The chosen kernel with the chosen ℓ.
    n_centers_ : int
        Unique centres of ``best_estimator_``.
    best_estimator_ : NystromKRR
        Fitted on all the data at ``reg_`` and ``kernel_``; ``predict`` delegates to it.
    best_score_ : float
        Minus the chosen criterion (a weighted mean squared error, in y's units). The criteria are
        computed on y standardised (:func:`~spectral_leverage.krr.cv_inputs.standardised_target`),
        so the choice does not depend on y's scale.
    cv_results_ : dict of ndarray
        One entry per (kernel, ℓ, m, λ) scored, sorted by kernel, ℓ, m, then λ: ``param_kernel``
        (the kernel with that ℓ, objects), ``param_length_scale``, ``param_reg``, ``n_centers`` (the
        unique centres scored: the error curve), ``mean_test_score`` (minus the criterion, in y's
        units), ``rank_test_score``, ``effective_degrees_of_freedom``
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
    >>> bool(model.score(X, y) > 0.95), model.kernel_
    (True, RBF(length_scale=1.65))
    >>> scored = sorted({int(m) for m in model.cv_results_["n_centers"]})
    >>> scored[-1], scored[0] < 200
    (512, True)

    A smooth target: of the eight (kernel, ℓ) pairs, RBF at the longest length scale won, and the
    curve stopped at 512 centres, far short of every row (2000). That kernel is numerically of low
    rank on these rows: its pivots stopped well short of the 256 and 512 centres asked for
    (further ones would be rounding; where exactly is rounding too: 165 and 215 on one machine,
    166 on another), and the other pairs gained less than ``tol`` from the doubling or
    could not catch up.
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
        "tol": [NumericInterval(Real, 0, 1, closed="left")],
        "time_budget": [None, *POSITIVE],
        "memory_budget": MEMORY_BUDGET,
        "random_state": RANDOM_STATE,
        "verbose": ["boolean"],
        "n_jobs": N_JOBS,
    }

    def __init__(self, kernel=None, *, regs=None, length_scales=None, n_centers="auto", cv="loo",
                 sampler="auto", fit_intercept: bool = True, tol: float = 0.01,
                 time_budget: float | None = TIME_BUDGET, memory_budget: int = DEFAULT_MEMORY_BUDGET,
                 random_state=None, verbose: bool = False, n_jobs=None):
        self.kernel = kernel
        self.regs = regs
        self.length_scales = length_scales
        self.n_centers = n_centers
        self.cv = cv
        self.sampler = sampler
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.time_budget = time_budget
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    @use_n_jobs
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
        kernels = check_kernels(self.kernel)
        for kernel in kernels:
            parse_kernel(kernel).check_inputs(X)
        Xw, Y, rows, weights = X, y.reshape(X.shape[0], -1), None, None
        if sample_weight is not None:
            rows, weights = positive_rows(X, sample_weight)
            Xw, Y = X[rows], Y[rows]
        Y, y_scale, y_offset = standardised_target(Y, weights, self.fit_intercept)
        rng = check_random_state(self.random_state)
        regs = default_regs(Xw.shape[0]) if self.regs is None else check_grid(self.regs, "regs")
        scales = default_length_scales(Xw, rng) if self.length_scales is None else check_grid(
            self.length_scales, "length_scales")
        splits = self._splits(Xw, Y, X.shape[0], rows)
        arms = [(kernel, ell) for kernel in kernels for ell in scales]  # kernel-major
        seeds = rng.integers(2**31 - 1, size=len(arms))
        n = Xw.shape[0]
        loo_rows = (np.sort(rng.choice(n, LOO_ROWS, replace=False)) if self.cv == "loo" and n > LOO_ROWS
                    else None)
        draw_at = dict.fromkeys(range(len(arms)), float(np.exp(np.mean(np.log(regs)))))

        def score(i: int, m: int) -> dict:
            scored = self._path(Xw, Y, weights, *arms[i], draw_at[i], seeds[i], m, regs, splits,
                                loo_rows)
            draw_at[i] = float(regs[np.argmin(scored["error"])])
            return scored

        if self.n_centers == "auto":
            cap = center_budget(self.memory_budget)
            sizes, capped = center_sizes(min(n, cap)), cap < n
        else:
            sizes, capped = [self.n_centers], False
        passes = grow_centers(score, len(arms), sizes, tol=self.tol, time_budget=self.time_budget,
                              capped=capped, verbose=self.verbose)
        passes.sort(key=lambda p: (p["scale"], p["size"]))
        self.cv_results_ = self._results(passes, arms, regs, y_scale)
        best = int(np.argmin(np.concatenate([p["error"] for p in passes])))  # standardised: finite
        chosen = passes[best // regs.size]
        self.reg_ = float(regs[best % regs.size])
        kernel, ell = arms[chosen["scale"]]
        self.length_scale_ = float(ell)
        self.kernel_ = with_length_scale(kernel, self.length_scale_)
        self.best_score_ = float(self.cv_results_["mean_test_score"][best])
        self.best_estimator_ = NystromKRR(
            self.kernel_, self.reg_, chosen["size"], sampler=self.sampler,
            fit_intercept=self.fit_intercept, memory_budget=self.memory_budget,
            random_state=int(seeds[chosen["scale"]]), verbose=self.verbose, n_jobs=self.n_jobs,
        )
        if chosen["solution"] is None:  # k-fold: no fit on all the rows yet
            self.best_estimator_.fit(X, y, sample_weight=sample_weight)
        else:
            self._set_best(X, y, chosen, rows, y_scale, y_offset)
        self.n_centers_ = int(self.best_estimator_.centers_.shape[0])
        return self

    def _set_best(self, X, y, chosen: dict, rows, y_scale: float, y_offset) -> None:
        """``best_estimator_`` from the chosen pass's own solution (leave-one-out and GCV solve on
        all the rows), back in y's units (y = y_scale·Z + y_offset, Z the standardised target the
        criteria saw): the model scored, without a second fit."""
        coef, intercept = chosen["solution"]
        validate_data(self.best_estimator_, X, skip_check_array=True)  # n_features_in_, feature names
        indices = chosen["indices"]
        self.best_estimator_._set_solution(
            chosen["centers"], indices if rows is None or indices is None else rows[indices],
            regressor_sampler(self.sampler, True), coef * y_scale, intercept * y_scale + y_offset, y.ndim)

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

    def _path(self, X, Y, weights, kernel, ell: float, reg: float, seed, m: int, regs, splits,
              loo_rows) -> dict:
        """The criterion at every λ for one (kernel, ℓ), on m centres drawn at ``reg``."""
        start = time.perf_counter()
        kern = with_length_scale(kernel, float(ell))
        centers, idx, _ = select_centers(X, m, regressor_sampler(self.sampler, True), kernel=kern, reg=reg,
                                         memory_budget=self.memory_budget, sample_weight=weights, y=Y,
                                         fit_intercept=self.fit_intercept, rng=np.random.default_rng(seed))
        error, df, solution = self._score(X, Y, weights, kern, centers, regs, splits, loo_rows)
        folds = None if splits is None else error
        error = error if splits is None else error.mean(axis=0)
        if self.verbose:
            logger.info("NystromKRRCV: %r, %d centres drawn at reg %.3g: best reg %.3g "
                        "(criterion %.4g on the standardised target), %.2f s", kern, len(centers), reg,
                        regs[np.argmin(error)], np.min(error), time.perf_counter() - start)
        return dict(error=error, folds=folds, df=df, n_centers=len(centers), centers=centers, indices=idx,
                    solution=solution)

    def _score(self, X, Y, weights, kernel, centers, regs, splits, loo_rows) -> tuple:
        """(criterion of shape (L,) or (k, L) per split, degrees of freedom (L,), the solution
        (coef (m, t), intercept (t,)) at the best λ on all rows, None for k-fold) for one (ℓ, m)."""
        if splits is None:
            path = nystrom_path(X, Y, kernel, centers, regs, weights=weights,
                                fit_intercept=self.fit_intercept, criterion=self.cv,
                                memory_budget=self.memory_budget, loo_rows=loo_rows)
            best = int(np.argmin(path["error"]))
            return path["error"], path["df"], (path["coef"][best], path["intercept"][best])
        errors = held_out_error(X, Y, kernel, centers, regs, splits, weights=weights,
                                fit_intercept=self.fit_intercept, memory_budget=self.memory_budget)
        return errors, np.full(regs.size, np.nan), None

    @staticmethod
    def _results(passes: list, arms: list, regs: np.ndarray, y_scale: float) -> dict:
        """``cv_results_``: the criteria, computed on the standardised target, in y's units
        (times ``y_scale`` squared; ±inf where that leaves float64, the ranks unaffected)."""
        L = regs.size
        kernels = np.empty(len(passes), dtype=object)
        kernels[:] = [with_length_scale(*arms[p["scale"]]) for p in passes]
        results = {
            "param_kernel": np.repeat(kernels, L),
            "param_length_scale": np.repeat([float(arms[p["scale"]][1]) for p in passes], L),
            "param_reg": np.tile(regs, len(passes)),
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

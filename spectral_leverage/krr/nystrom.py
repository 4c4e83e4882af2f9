r"""Nyström kernel ridge regression with centres chosen by ridge leverage scores.

Exact kernel ridge regression (KRR) is

.. math::

    \hat f = \arg\min_f \frac1n \sum_i (y_i - f(x_i))^2 + \lambda \|f\|_H^2,
    \qquad \hat y = K (K + n\lambda I)^{-1} y

(scikit-learn's ``KernelRidge`` uses ``alpha`` :math:`= n\lambda`). Nyström KRR restricts
:math:`f = \sum_{j \in J} \alpha_j k(\cdot, x_j)` to a set :math:`J` of :math:`m` centres drawn with
probabilities proportional to (approximate) ridge leverage scores
(:mod:`spectral_leverage.krr.centers`) and solves the normal equations
:math:`(K_{nJ}^\top K_{nJ} + n\lambda K_{JJ})\,\alpha = K_{nJ}^\top y`
(:mod:`spectral_leverage.krr._solvers`).
"""

from __future__ import annotations

import logging
import time
from typing import ClassVar

from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._blocks import DEFAULT_MEMORY_BUDGET, use_n_jobs
from .._validation import (
    DEFAULT_REG,
    KERNEL,
    MEMORY_BUDGET,
    N_JOBS,
    POSITIVE,
    POSITIVE_INT,
    RANDOM_STATE,
    check_positive,
    check_random_state,
    validate_params,
)
from ..backends import backend_for
from ..base import LeverageSampler
from ..kernels import parse_kernel, resolve_kernel, upper_cholesky
from ..samplers import SAMPLERS
from ._solvers import (
    DIRECT_MAX_CENTERS,
    normal_equations,
    predict_block,
    solve_cg,
    solve_normal_equations,
)
from .centers import positive_rows, regressor_sampler, select_centers

__all__ = ["REGRESSOR_SAMPLER", "SAMPLER", "NystromKRR"]

logger = logging.getLogger(__name__)

#: what a ``sampler`` parameter takes: a name of :data:`spectral_leverage.SAMPLERS` or a sampler
SAMPLER = [StrOptions(set(SAMPLERS)), LeverageSampler]
#: the regressors' ``sampler``: those, or ``"auto"`` (``centers.regressor_sampler``)
REGRESSOR_SAMPLER = [StrOptions(set(SAMPLERS) | {"auto"}), LeverageSampler]


class NystromKRR(RegressorMixin, BaseEstimator):
    r"""Nyström kernel ridge regression with leverage-sampled centres.

    Minimises :math:`\frac1n\|y - b - K_{nJ}\alpha\|^2 + \lambda\,\alpha^\top K_{JJ}\alpha` over
    the coefficients :math:`\alpha` of :math:`m` centres :math:`J` and an unpenalised intercept
    :math:`b` (weighted by ``sample_weight`` when given); without the intercept it solves
    :math:`(K_{nJ}^\top K_{nJ} + n\lambda K_{JJ})\alpha = K_{nJ}^\top y`, and with every point as a
    centre this is exact KRR, :math:`\hat y = K(K + n\lambda I)^{-1}y`. By default (in memory) the
    centres are those of greedy or randomly pivoted Cholesky, or of k-means, whichever gives the
    lowest GCV error on y (``"adaptive-cholesky"``); on Dask, and with ``sampler="spectral"``,
    they are drawn with replacement with probabilities proportional to ridge leverage scores and
    de-duplicated (the solvers: :mod:`spectral_leverage.krr._solvers`).

    Parameters
    ----------
    kernel : sklearn kernel or None, default=None
        ``Matern`` or ``RBF``, optionally times ``ConstantKernel``; None is
        ``Matern(length_scale=1.0, nu=1.5)``.
    reg : float, default=1e-3
        :math:`\lambda > 0` (scikit-learn's ``KernelRidge(alpha=n * reg)`` is the exact analogue).
    n_centers : int or "auto", default=100
        Number of leverage-sampled draws (>= 1); duplicates are dropped, so ``len(center_indices_)``
        may be smaller. More than n warns and uses every point. ``"auto"``: twice the spectral
        estimate of :math:`d_\mathrm{eff}(\lambda)`, capped by ``memory_budget`` with a warning
        (:func:`~spectral_leverage.krr.centers.auto_centers`).
    sampler : "auto", str or LeverageSampler, default="auto"
        ``"auto"``: ``"adaptive-cholesky"`` for in-memory X, ``"spectral"`` for Dask X
        (:func:`~spectral_leverage.krr.centers.regressor_sampler`). Else a name from
        :data:`spectral_leverage.SAMPLERS` (``"spectral"``, ``"uniform"``, ``"exact"``, ...) or a
        sampler object: cloned and fitted on X, unless it is already fitted on n points, in which
        case its ``probabilities_`` are used as they are. The selectors
        (:data:`spectral_leverage.samplers.SELECTORS`: ``"kmeans"``, ``"greedy-cholesky"``,
        ``"rp-cholesky"``, ``"spectral-greedy"``, ``"adaptive-cholesky"``) choose ``n_centers``
        distinct centres at once instead of drawing; k-means' centres are points, not rows
        (``center_indices_`` is then None). ``"adaptive-cholesky"`` is given y: greedy or
        randomly pivoted Cholesky or k-means, whichever has the lowest GCV error at ``reg``
        (:class:`~spectral_leverage.samplers.AdaptiveCholesky`). Measured against one another in
        docs/notes/centres.md.
    fit_intercept : bool, default=True
        Fit the unpenalised intercept :math:`b` (as scikit-learn's ``Ridge``); without it the kernel,
        which decays away from the centres, must carry the target's mean.
    solver : {"auto", "direct", "cg"}, default="auto"
        ``"direct"``: Cholesky, :math:`O(nm^2 + m^3)`. ``"cg"``: FALKON-preconditioned conjugate
        gradient, :math:`O(nm)` per iteration. ``"auto"``: direct for m <= 5000, else cg.
    memory_budget : int, default=1 GiB
        Bytes for the row blocks of :math:`K_{nJ}` (the :math:`m \times m` matrices come on top,
        except for ``n_centers="auto"``, which keeps them within it too).
    random_state : int, numpy Generator or None, default=None
        Seeds the centre sampling.
    verbose : bool, default=False
        Progress bars over row blocks and stage timings logged (``logging``, INFO) to this module's
        logger.
    n_jobs : int or None, default=None
        Threads of the fit, BLAS's included, with joblib's meaning: None is 1 unless inside a
        ``joblib.parallel_config(n_jobs=...)`` context, -1 every core (at most one per core).
        BLAS is held to one thread while the row blocks run, threaded or not, and to ``n_jobs``
        threads between them (never above a limit set outside).

    Attributes
    ----------
    center_indices_ : ndarray of int, shape (m,), or None
        Unique, sorted rows of the training X used as centres; None for k-means' centres
        (``sampler="kmeans"``, or ``"adaptive-cholesky"`` when it chose them), which are not rows.
    centers_ : ndarray of shape (m, d)
        The centres: ``X[center_indices_]``, or the k-means centres.
    coef_ : ndarray of shape (m,) or (m, t)
        :math:`\alpha`; ``predict(X) = kernel(X, centers_) @ coef_ + intercept_``.
    intercept_ : float or ndarray of shape (t,)
        :math:`b = \bar y - \bar k^\top \alpha` (weighted means over the training rows); 0.0
        with ``fit_intercept=False``.
    sampler_ : str or LeverageSampler
        The sampler used (``sampler`` with ``"auto"`` resolved).
    solver_ : str
        The solver used.
    n_iter_ : int
        Conjugate-gradient iterations (0 for the direct solver).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string column names.

    Notes
    -----
    ``fit`` and ``predict`` run the same lines on Dask arrays (:mod:`spectral_leverage.backends`;
    direct solver, spectral sampler, which ``"auto"`` is there): the centres and coefficients are
    NumPy arrays, equal to an in-memory fit with ``sampler="spectral"`` and the same seed (the
    coefficients to rounding: the per-block normal equations are summed in another order);
    ``predict`` returns a lazy Dask array. The intercept is fitted there too (its sums ride along);
    ``sample_weight`` is refused.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(2000, 2))
    >>> y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=2000)
    >>> model = NystromKRR(Matern(0.5, nu=1.5), reg=1e-4, n_centers=100, random_state=0).fit(X, y)
    >>> model.coef_.shape == (len(model.center_indices_),)
    True
    >>> bool(model.score(X, y) > 0.9)
    True
    """

    #: scikit-learn checks this estimator fails by design (:func:`~spectral_leverage._validation.
    #: expected_failed_checks`)
    _expected_failed_checks: ClassVar[dict[str, str]] = {
        "check_sample_weight_equivalence_on_dense_data":
            "with fewer centres than rows the centres are a random draw of rows, and repeated "
            "rows are other rows to draw from: the fit differs although the solve agrees (integer "
            "weights are repeated rows on the same centres: tests/krr/test_nystrom_weights.py; with "
            "every row a centre, n_centers >= n, the check passes)",
    }

    _parameter_constraints: ClassVar[dict] = {
        "kernel": KERNEL,
        "reg": POSITIVE,
        "n_centers": [*POSITIVE_INT, StrOptions({"auto"})],
        "sampler": REGRESSOR_SAMPLER,
        "fit_intercept": ["boolean"],
        "solver": [StrOptions({"auto", "direct", "cg"})],
        "memory_budget": MEMORY_BUDGET,
        "random_state": RANDOM_STATE,
        "verbose": ["boolean"],
        "n_jobs": N_JOBS,
    }

    def __init__(self, kernel=None, reg: float = DEFAULT_REG, n_centers: int = 100, *,
                 sampler="auto", fit_intercept: bool = True, solver: str = "auto",
                 memory_budget: int = DEFAULT_MEMORY_BUDGET, random_state=None, verbose: bool = False,
                 n_jobs=None):
        self.kernel = kernel
        self.reg = reg
        self.n_centers = n_centers
        self.sampler = sampler
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        tags.input_tags.allow_nan = False
        return tags

    @use_n_jobs
    def fit(self, X, y, sample_weight=None) -> NystromKRR:
        r"""Draw the centres and solve the Nyström normal equations.

        Parameters
        ----------
        X : array_like, Dask array or Dask DataFrame of shape (n, d)
            Finite inputs, n >= 2.
        y : array_like or Dask array of shape (n,) or (n, t)
            Finite targets.
        sample_weight : array_like of shape (n,) or None, default=None
            Non-negative weights of the squared errors (in memory only). Integer weights are
            repeated rows (:mod:`~spectral_leverage.krr._solvers`), zero weights dropped rows;
            centres are drawn ∝ weight × score (:func:`~spectral_leverage.krr.centers.draw_centers`).
            Routed after ``set_fit_request(sample_weight=True)`` (metadata routing).

        Returns
        -------
        self
        """
        validate_params(self)
        backend = backend_for(X, y)
        X, Y, y_ndim = backend.validate_xy(self, X, y)
        rows, weights = None, None
        if sample_weight is not None:
            backend.require_in_memory("sample_weight", "fit on an in-memory (NumPy) array")
            rows, weights = positive_rows(X, sample_weight)
            X, Y = X[rows], Y[rows]
        kernel = resolve_kernel(self.kernel)
        parse_kernel(kernel).check_inputs(X)
        reg = check_positive(self.reg, "reg")
        verbose = self.verbose and backend.in_memory  # no progress bars inside Dask tasks
        sampler = regressor_sampler(self.sampler, backend.in_memory)

        start = time.perf_counter()
        centers, idx, n_draws = select_centers(X, self.n_centers, sampler, kernel=kernel,
                                               reg=reg, memory_budget=self.memory_budget,
                                               sample_weight=weights, y=Y,
                                               fit_intercept=self.fit_intercept,
                                               rng=check_random_state(self.random_state))
        m = centers.shape[0]
        self._log("centre sampling (%s): %d unique centres of %d draws", start,
                  sampler if isinstance(sampler, str) else type(sampler).__name__,
                  m, n_draws)

        start = time.perf_counter()
        T, jitter = upper_cholesky(kernel(centers))
        self._log("Cholesky of K_JJ (m=%d, jitter %.1e)", start, m, jitter)

        solver = self.solver
        if solver == "auto":
            solver = "direct" if m <= DIRECT_MAX_CENTERS else "cg"
        start = time.perf_counter()
        if solver == "direct":
            sums = backend.sum_blocks(normal_equations, X, Y, args=(
                backend.share((kernel, centers, T)), self.memory_budget, verbose, weights))
            (coef, intercept), n_iter = solve_normal_equations(sums, T, reg, self.fit_intercept), 0
        else:
            backend.require_in_memory(
                f"solver={self.solver!r} with {m} centres (conjugate gradient, one pass over the "
                f"data per iteration)", "pass solver='direct' (O(m^3) on the client) or fewer "
                "n_centers")
            coef, intercept, n_iter = solve_cg(X, Y, (kernel, centers, T), reg, self.memory_budget,
                                               verbose, weights, self.fit_intercept)
        self._log("%s solve", start, solver)

        return self._set_solution(centers, idx if rows is None or idx is None else rows[idx], sampler,
                                  coef, intercept, y_ndim, solver=solver, n_iter=n_iter)

    def _set_solution(self, centers, center_indices, sampler, coef, intercept, y_ndim: int, *,
                      solver: str = "direct", n_iter: int = 0) -> NystromKRR:
        """The fitted attributes from a solution: coef (m, t), intercept (t,), for a target of
        ``y_ndim`` dimensions (also :class:`~spectral_leverage.krr.cv.NystromKRRCV`'s, from its λ
        path); ``n_features_in_`` must be set."""
        self.center_indices_ = center_indices
        self.centers_ = centers
        self.sampler_ = sampler
        self.coef_ = coef.ravel() if y_ndim == 1 else coef
        self.intercept_ = float(intercept[0]) if y_ndim == 1 else intercept
        self.solver_ = solver
        self.n_iter_ = n_iter
        return self

    def _log(self, message: str, start: float, *args) -> None:
        if self.verbose:
            logger.info("NystromKRR: " + message + " in %.3fs", *args, time.perf_counter() - start)

    @use_n_jobs
    def predict(self, X):
        """Predictions :math:`K(X, \\text{centers\\_})\\,\\alpha + b`, computed in row blocks.

        Parameters
        ----------
        X : array_like or Dask array of shape (n_new, d)

        Returns
        -------
        ndarray of shape (n_new,) or (n_new, t); a lazy Dask array with X's row chunks for Dask X
        """
        check_is_fitted(self, "coef_")
        backend = backend_for(X)
        X = backend.validate(self, X, reset=False, min_samples=1)
        coef = self.coef_
        start = time.perf_counter()
        out = backend.map_rows(predict_block, X,
                               backend.share((resolve_kernel(self.kernel), self.centers_, coef)),
                               self.memory_budget, self.verbose and backend.in_memory,
                               columns=None if coef.ndim == 1 else coef.shape[1])
        self._log("predict (%d rows)", start, X.shape[0])
        return out + self.intercept_

r"""Nyström KRR on fixed centres along a path of λ: every λ from one eigendecomposition.

For fixed centres :math:`J` and :math:`B = K_{nJ}T^{-1}`
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
* k-fold (:func:`held_out_error`): the system of each training fold, the error on its held-out
  fold.

Multi-output targets are scored by the mean over outputs.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh, solve_triangular

from .._blocks import DEFAULT_MEMORY_BUDGET
from ..kernels import upper_cholesky
from ..ridge_gcv import centred_system, degrees_of_freedom, gcv_error
from ._solvers import normal_equations, whitened_blocks

__all__ = ["held_out_error", "nystrom_path"]


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
                 criterion: str | None = "gcv", memory_budget: float = DEFAULT_MEMORY_BUDGET,
                 loo_rows: np.ndarray | None = None) -> dict:
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
        The criterion of the module docstring computed for every λ (None: none; k-fold is
        :func:`held_out_error`).
    memory_budget : float
    loo_rows : ndarray of int or None, default=None
        For ``criterion="loo"``: the rows whose leave-one-out residuals (of the fit on all the
        rows) make the criterion, their weighted mean estimating the mean over all rows for a
        fraction of the second pass; None: every row.

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
               df=degrees_of_freedom(evals, system["total"], regs, fit_intercept))
    w = np.ones(X.shape[0]) if weights is None else weights
    if criterion == "gcv":
        yy = float(np.sum(w[:, None] * (Y - system["y_mean"]) ** 2))
        out["error"] = gcv_error(evals, z, yy, system["total"], np.count_nonzero(w), regs, out["df"])
    elif criterion == "loo":
        if loo_rows is None:
            out["error"] = _held_out(X, Y, weights, shared, system, regs, memory_budget, True) / (
                system["total"] * t)
        else:
            w_rows = None if weights is None else weights[loo_rows]
            total = loo_rows.size if w_rows is None else float(w_rows.sum())
            out["error"] = _held_out(X[loo_rows], Y[loo_rows], w_rows, shared, system, regs,
                                     memory_budget, True) / (total * t)
    return out


def held_out_error(X, Y, kernel, centers, regs, splits, *, weights=None, fit_intercept: bool = True,
                   memory_budget: float = DEFAULT_MEMORY_BUDGET) -> np.ndarray:
    """The k-fold criterion: for each split, the system of its training rows at every λ, scored by
    the weighted mean squared error on its held-out rows (mean over outputs).

    Parameters
    ----------
    X, Y, kernel, centers, regs, weights, fit_intercept, memory_budget
        As in :func:`nystrom_path`.
    splits : list of (ndarray, ndarray)
        (train, test) row indices, as a scikit-learn splitter gives them.

    Returns
    -------
    ndarray of shape (k, L)
    """
    shared = (kernel, centers, upper_cholesky(kernel(centers))[0])
    errors = []
    for train, test in splits:
        w_train, w_test = (None, None) if weights is None else (weights[train], weights[test])
        system = _eigensystem(X[train], Y[train], shared, w_train, fit_intercept, memory_budget)
        total = test.size if w_test is None else float(w_test.sum())
        errors.append(_held_out(X[test], Y[test], w_test, shared, system, regs, memory_budget,
                                False) / (total * Y.shape[1]))
    return np.asarray(errors)

r"""The centred ridge system on features and its generalised cross-validation, every λ at once.

Features :math:`B` (n × m), targets :math:`Y` (n × t), row weights :math:`w \ge 0`
(:math:`W = \sum_i w_i`; all 1 without weights) and, with an unpenalised intercept, :math:`B` and
:math:`Y` centred by their weighted means (:math:`\tilde B`, :math:`\tilde Y`): the ridge
solution at penalty :math:`W\lambda` is :math:`\beta = (H + W\lambda I)^{-1}c`, with
:math:`H = \tilde B^\top D_w \tilde B` and :math:`c = \tilde B^\top D_w \tilde Y`, the raw sums
less a rank-one term (:func:`centred_system`). From one eigendecomposition
:math:`H = V\Lambda V^\top`, :math:`z = V^\top c`, for every λ:

.. math::

    \mathrm{df} = [\text{intercept}] + \sum_k \frac{\Lambda_k}{\Lambda_k + W\lambda}, \qquad
    \mathrm{RSS} = \sum_i w_i\|\tilde Y_i\|^2 - \sum_k \|z_k\|^2
    \frac{\Lambda_k + 2W\lambda}{(\Lambda_k + W\lambda)^2}, \qquad
    \mathrm{GCV} = \frac{\mathrm{RSS} / (W t)}{(1 - \mathrm{df}/n)^2}

(Golub, Heath & Wahba, 1979; n the rows of positive weight). Nyström KRR on centres :math:`J` is
this regression on :math:`B = K_{nJ}T^{-1}` (:mod:`spectral_leverage.krr.reg_path`); on the factor
:math:`F` of pivoted Cholesky at pivots :math:`P` (:math:`FF^\top = K_{nP}K_{PP}^{+}K_{Pn}`,
:mod:`spectral_leverage.pivoted_cholesky`) it is Nyström KRR on the centres :math:`P`
(:func:`factor_gcv`), with no kernel evaluated again.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh, lapack
from scipy.linalg.blas import dsyrk

from ._blocks import DEFAULT_MEMORY_BUDGET, row_chunks
from ._spd import potrf

__all__ = ["centred_system", "degrees_of_freedom", "factor_gcv", "gcv_error"]


def centred_system(sums: tuple, fit_intercept: bool) -> tuple:
    r"""``(H, c, b̄, ȳ, W)`` from the sums ``(H, c, s, s_y, W)`` =
    (:math:`B^\top D_w B` (its upper triangle at least), :math:`B^\top D_w Y`, :math:`B^\top w`,
    :math:`Y^\top w`, :math:`W`): with an intercept, the normal equations of the centred problem and
    the weighted means :math:`\bar b = s/W`, :math:`\bar y = s_y/W`; without, the sums as they are and
    zero means. H and c are updated in place."""
    H, c, s, sy, total = sums
    if not fit_intercept:
        return H, c, np.zeros_like(s), np.zeros_like(sy), total
    b_mean, y_mean = s / total, sy / total
    H -= np.outer(s, b_mean)
    c -= np.outer(s, y_mean)
    return H, c, b_mean, y_mean, total


def degrees_of_freedom(evals: np.ndarray, total: float, regs: np.ndarray,
                       fit_intercept: bool) -> np.ndarray:
    """(L,): the trace of the hat matrix at each λ of ``regs``, from the eigenvalues of H."""
    return (evals[:, None] / (evals[:, None] + total * regs[None, :])).sum(axis=0) + fit_intercept


def gcv_error(evals: np.ndarray, z: np.ndarray, yy: float, total: float, n_rows: int,
              regs: np.ndarray, df: np.ndarray) -> np.ndarray:
    """(L,): the GCV error (module docstring) at each λ of ``regs``; ``z`` (m, t), ``yy`` the weighted
    (centred) total sum of squares, ``df`` from :func:`degrees_of_freedom`. Infinite where df = n
    (interpolation)."""
    mu = total * regs[None, :]
    shrink = 1.0 / (evals[:, None] + mu)
    rss = yy - np.einsum("kt,kl->l", z**2, (evals[:, None] + mu + mu) * shrink**2)
    return _gcv(rss, df, total * z.shape[1], n_rows)


def _gcv(rss, df, scale: float, n_rows: int):
    """GCV from the residual sum of squares and the degrees of freedom (``scale``: W t)."""
    dof = np.minimum(df / n_rows, 1.0)
    with np.errstate(divide="ignore"):
        return np.maximum(rss, 0.0) / scale / (1.0 - dof) ** 2


def factor_gcv(factor_t: np.ndarray, Y: np.ndarray, reg: float, weights: np.ndarray | None = None,
               fit_intercept: bool = True, memory_budget: float = DEFAULT_MEMORY_BUDGET) -> float:
    r"""GCV error of Nyström KRR at λ = ``reg`` on the pivots of a pivoted Cholesky factor.

    At one λ no eigendecomposition is needed: with :math:`A = H + W\lambda I = U^\top U` (Cholesky)
    and :math:`\beta = A^{-1}c`, :math:`\mathrm{df} = [\text{intercept}] + k - W\lambda\,
    \operatorname{tr}A^{-1}` and :math:`\mathrm{RSS} = \sum_i w_i\|\tilde Y_i\|^2 - \langle\beta, c\rangle
    - W\lambda\|\beta\|^2`, the module docstring's sums in closed form, for a fraction of the
    eigendecomposition's time (the Gram matrix :math:`F^\top F` is the other cost). Where rounding
    would leave A ill-conditioned (:math:`W\lambda \le \sqrt\varepsilon\,\max\operatorname{diag}H`,
    where its Cholesky factor could lose half the digits) they come from H's eigenvalues above
    rounding.

    Parameters
    ----------
    factor_t : ndarray of shape (k, n)
        :math:`F^\top` (:func:`~spectral_leverage.pivoted_cholesky.rp_cholesky` returns
        :math:`F`, whose ``.T`` is this array without a copy).
    Y : ndarray of shape (n,) or (n, t)
    reg : float
        :math:`\lambda > 0`.
    weights : ndarray of shape (n,) or None
        Non-negative row weights (a zero weight is a dropped row).
    fit_intercept : bool, default=True
    memory_budget : float, default=1 GiB
        Bytes of the weighted column blocks of :math:`F^\top` (without weights, none).

    Returns
    -------
    float
        The weighted mean squared error of the module docstring's GCV (mean over outputs).

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> from spectral_leverage.pivoted_cholesky import rp_cholesky
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(300, 1))
    >>> y = np.sin(6 * X[:, 0]) + 0.1 * rng.normal(size=300)
    >>> _, F = rp_cholesky(X, RBF(0.2), 20, rng)
    >>> round(factor_gcv(F.T, y, 1e-4), 3)   # about the noise variance, 0.01
    0.01
    """
    Y = Y.reshape(Y.shape[0], -1)
    w = np.ones(Y.shape[0]) if weights is None else weights
    if weights is None:  # the upper triangle of the Gram matrix (half a product), without a copy
        gram = (dsyrk(1.0, factor_t, trans=0, lower=0) if factor_t.flags.f_contiguous
                else dsyrk(1.0, factor_t.T, trans=1, lower=0))
        cross, sums = factor_t @ Y, factor_t.sum(axis=1)
    else:
        k = factor_t.shape[0]
        gram, cross, sums = np.zeros((k, k)), np.zeros((k, Y.shape[1])), np.zeros(k)
        for cols in row_chunks(Y.shape[0], 8.0 * k, memory_budget):
            weighted = factor_t[:, cols] * w[cols]
            gram += weighted @ factor_t[:, cols].T
            cross += weighted @ Y[cols]
            sums += weighted.sum(axis=1)
    H, c, _, y_mean, total = centred_system((gram, cross, sums, w @ Y, float(w.sum())), fit_intercept)
    yy = float(np.sum(w[:, None] * (Y - y_mean) ** 2))
    mu, k, n_rows = total * reg, H.shape[0], np.count_nonzero(w)
    rounding = np.sqrt(np.finfo(float).eps) * max(float(np.max(np.diag(H), initial=0.0)), 0.0)
    H[np.diag_indices(k)] += mu
    upper, info = potrf(H, lower=False) if mu > rounding else (None, 1)
    if info != 0:  # μ below H's rounding: from the eigenvalues above it
        H[np.diag_indices(k)] -= mu
        evals, V = eigh(H, lower=False, check_finite=False)
        keep = evals > k * np.finfo(float).eps * max(evals[-1], 0.0)  # H's null space holds no fit
        evals, V = evals[keep], V[:, keep]
        regs = np.array([reg])
        df = degrees_of_freedom(evals, total, regs, fit_intercept)
        return float(gcv_error(evals, V.T @ c, yy, total, n_rows, regs, df)[0])
    beta = lapack.dpotrs(upper, c, lower=0)[0]
    inverse = lapack.dpotri(upper, lower=0, overwrite_c=1)[0]  # A⁻¹ in the upper triangle
    df = k - mu * float(np.trace(inverse)) + fit_intercept
    rss = yy - float(np.sum(beta * c)) - mu * float(np.sum(beta**2))
    return float(_gcv(rss, df, total * Y.shape[1], n_rows))

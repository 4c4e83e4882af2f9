r"""The Nyström feature map of scikit-learn's ``Nystroem`` with components chosen by ridge leverage
sampling; a linear ``Ridge`` on its features is Nyström KRR (:mod:`spectral_leverage.krr.nystrom`)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from scipy.linalg import svd
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._blocks import DEFAULT_MEMORY_BUDGET, kernel_product, use_n_jobs
from .._validation import (
    DEFAULT_REG,
    KERNEL,
    N_JOBS,
    POSITIVE,
    POSITIVE_INT,
    RANDOM_STATE,
    check_positive,
    check_random_state,
    validate_params,
)
from ..kernels import parse_kernel, resolve_kernel
from .centers import draw_centers, positive_rows
from .nystrom import SAMPLER

__all__ = ["LeverageNystroem"]


class LeverageNystroem(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Nyström feature map with components chosen by ridge leverage sampling.

    Like :class:`sklearn.kernel_approximation.Nystroem`, but the components are drawn with
    replacement with probabilities proportional to ridge leverage scores :math:`n\,l_i`,
    :math:`l_i = [K(K + n\lambda I)^{-1}]_{ii}` (``reg`` :math:`= \lambda`), and de-duplicated.
    With :math:`K_{JJ} = U S V^\top` (singular values clipped below at 1e-12),
    ``normalization_`` :math:`= U S^{-1/2} V^\top` and
    ``transform(X)`` :math:`= K(X, \text{components\_})\,\text{normalization\_}^\top`, so that
    inner products of the features approximate the kernel. A linear ``Ridge`` on these features is
    Nyström KRR.

    Parameters
    ----------
    kernel : sklearn kernel or None, default=None
        ``Matern`` or ``RBF``, optionally times ``ConstantKernel``; None is
        ``Matern(length_scale=1.0, nu=1.5)``.
    reg : float, default=1e-3
        :math:`\lambda > 0` of the leverage scores.
    n_components : int, default=100
        Number of draws (>= 1); more than n warns and uses every point.
    sampler : str or LeverageSampler, default="spectral"
        As in :class:`NystromKRR`.
    random_state : int, numpy Generator or None, default=None
    n_jobs : int or None, default=None
        As in :class:`NystromKRR`.

    Attributes
    ----------
    components_ : ndarray of shape (m, d)
    component_indices_ : ndarray of int, shape (m,)
        Unique, sorted training rows.
    normalization_ : ndarray of shape (m, m)
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.pipeline import make_pipeline
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(1000, 2))
    >>> y = np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=1000)
    >>> pipe = make_pipeline(LeverageNystroem(RBF(0.5), reg=1e-4, n_components=50, random_state=0),
    ...                      Ridge(alpha=1e-3)).fit(X, y)
    >>> bool(pipe.score(X, y) > 0.9)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "kernel": KERNEL,
        "reg": POSITIVE,
        "n_components": POSITIVE_INT,
        "sampler": SAMPLER,
        "random_state": RANDOM_STATE,
        "n_jobs": N_JOBS,
    }

    def __init__(self, kernel=None, reg: float = DEFAULT_REG, n_components: int = 100, *,
                 sampler="spectral", random_state=None, n_jobs=None):
        self.kernel = kernel
        self.reg = reg
        self.n_components = n_components
        self.sampler = sampler
        self.random_state = random_state
        self.n_jobs = n_jobs

    @use_n_jobs
    def fit(self, X, y=None, sample_weight=None) -> LeverageNystroem:
        """Sample the components and compute the normalisation.

        Parameters
        ----------
        X : array_like of shape (n, d)
            Finite inputs, n >= 2.
        y : ignored
        sample_weight : array_like of shape (n,) or None, default=None
            Non-negative row weights, as in :meth:`NystromKRR.fit`: components are drawn among rows
            of positive weight with probabilities proportional to :math:`w_i` times the score, so
            that the features suit a weighted fit downstream (e.g. ``Ridge`` with the same
            weights, routed by a ``Pipeline``).

        Returns
        -------
        self
        """
        validate_params(self)
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        kernel = resolve_kernel(self.kernel)
        parse_kernel(kernel).check_inputs(X)
        reg = check_positive(self.reg, "reg")
        rows, weights = (np.arange(X.shape[0]), None) if sample_weight is None else positive_rows(
            X, sample_weight)
        idx = rows[draw_centers(X[rows], self.n_components, self.sampler, kernel=kernel, reg=reg,
                                rng=check_random_state(self.random_state), name="n_components",
                                sample_weight=weights)]
        components = X[idx]
        U, S, Vt = svd(kernel(components), check_finite=False)
        S = np.maximum(S, 1e-12)
        self.normalization_ = (U / np.sqrt(S)) @ Vt
        self.components_ = components
        self.component_indices_ = idx
        self._n_features_out = idx.shape[0]
        return self

    @use_n_jobs
    def transform(self, X) -> np.ndarray:
        """Feature map :math:`K(X, \\text{components\\_})\\,\\text{normalization\\_}^\\top`.

        Parameters
        ----------
        X : array_like of shape (n_new, d)

        Returns
        -------
        ndarray of shape (n_new, m)
        """
        check_is_fitted(self, "normalization_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return kernel_product(resolve_kernel(self.kernel), X, self.components_, self.normalization_.T,
                              memory_budget=DEFAULT_MEMORY_BUDGET)


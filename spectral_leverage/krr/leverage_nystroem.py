r"""The Nyström feature map of scikit-learn's ``Nystroem``, with its signature, and components chosen
by any sampler of the package (ridge leverage sampling among them); a linear ``Ridge`` on its
features is Nyström KRR (:mod:`spectral_leverage.krr.nystrom`)."""

from __future__ import annotations

from functools import partial
from numbers import Real
from typing import ClassVar

import numpy as np
from scipy.linalg import svd
from scipy.special import gammaln
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, clone
from sklearn.gaussian_process.kernels import RBF, Kernel, Matern
from sklearn.metrics.pairwise import laplacian_kernel
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._blocks import DEFAULT_MEMORY_BUDGET, kernel_product, use_n_jobs
from .._validation import (
    DEFAULT_REG,
    N_JOBS,
    POSITIVE,
    POSITIVE_INT,
    RANDOM_STATE,
    NumericInterval,
    check_positive,
    check_random_state,
    validate_params,
)
from ..kernels import parse_kernel
from .centers import draw_centers, positive_rows
from .nystrom import SAMPLER

__all__ = ["LeverageNystroem", "string_kernel"]

#: the kernel names of scikit-learn's ``pairwise_kernels`` that are stationary, hence have leverage
#: scores of this package; each takes ``gamma`` only
STRING_KERNELS = ("rbf", "laplacian")


def _mean_l1_norm(d: int) -> float:
    r""":math:`E\|u\|_1` for u uniform on the unit sphere of :math:`R^d`:
    :math:`d\,\Gamma(d/2) / (\sqrt\pi\,\Gamma((d+1)/2))` (1 in 1-D, about :math:`\sqrt{2d/\pi}`)."""
    return float(d * np.exp(gammaln(d / 2) - gammaln((d + 1) / 2)) / np.sqrt(np.pi))


def string_kernel(name: str, gamma: float | None, n_features: int) -> tuple[Kernel, object]:
    r"""(kernel the scores use, kernel the features use) for scikit-learn's kernel name ``name``.

    ``"rbf"``, :math:`\exp(-\gamma\|x - x'\|_2^2)`, is ``RBF(length_scale=1/\sqrt{2\gamma})``
    exactly, for both. ``"laplacian"``, :math:`\exp(-\gamma\|x - x'\|_1)`, uses the 1-norm: it is a
    product of one-dimensional Laplace kernels, not radial, so no Matérn kernel equals it beyond 1-D.
    Its features use it exactly (scikit-learn's ``laplacian_kernel``); its scores are those of the
    radial ``Matern(nu=0.5)`` whose length scale matches the 1-norm on average over directions,
    :math:`\ell = 1/(\gamma\,E\|u\|_1)` (exact in 1-D). Leverage sampling needs the scores only up
    to a constant factor, and :math:`\|x\|_2 \le \|x\|_1 \le \sqrt d\,\|x\|_2` bounds the two
    kernels' length scales within :math:`\sqrt d` of each other. ``gamma=None`` is
    scikit-learn's ``1/n_features``.
    """
    gamma = 1.0 / n_features if gamma is None else check_positive(gamma, "gamma")
    if name == "rbf":
        kernel = RBF(length_scale=float(np.sqrt(0.5 / gamma)))
        return kernel, kernel
    if name == "laplacian":
        return (Matern(length_scale=1.0 / (gamma * _mean_l1_norm(n_features)), nu=0.5),
                partial(laplacian_kernel, gamma=gamma))
    raise ValueError(f"kernel must be one of {STRING_KERNELS} or a Matern/RBF kernel object, got {name!r}.")


class LeverageNystroem(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""scikit-learn's ``Nystroem`` with a choice of how its components are chosen: ridge leverage
    sampling, pivoted Cholesky, k-means or, by default, uniformly.

    The signature is :class:`sklearn.kernel_approximation.Nystroem`'s, plus ``reg`` and
    ``sampler``: replacing ``Nystroem(kernel="rbf", gamma=g, n_components=m)`` by
    ``LeverageNystroem(kernel="rbf", gamma=g, n_components=m, sampler=s, reg=r)`` is enough. The
    ``n_components`` components are distinct training rows drawn *without replacement* with
    probabilities proportional to the sampler's scores, e.g. the ridge leverage scores
    :math:`n\,l_i`, :math:`l_i = [K(K + n\lambda I)^{-1}]_{ii}` (``reg`` :math:`= \lambda`), of
    ``sampler="spectral"``: each draw picks among the rows not yet drawn in proportion to their
    scores. That is the law of drawing with replacement until ``n_components`` distinct rows have
    come up, so it keeps the leverage ordering of the i.i.d. scheme while returning the m columns
    asked for (i.i.d. draws, de-duplicated, gave 844 distinct of 1000 on CCPP). A selector
    (``"rp-cholesky"``, ``"kmeans"``, …) chooses the m rows at once instead. With
    :math:`K_{JJ} = U S V^\top` (singular values clipped below at 1e-12), ``normalization_``
    :math:`= U S^{-1/2} V^\top` and ``transform(X)`` :math:`= K(X, \text{components\_})\,
    \text{normalization\_}^\top`, as in scikit-learn, so that inner products of the features
    approximate the kernel. A linear ``Ridge`` on these features is Nyström KRR.

    **The default is uniform** (scikit-learn's own scheme, for its cost): where a user swaps
    ``Nystroem`` for this class, in ``StandardScaler → transformer → RidgeCV`` at the default
    ``gamma`` on CCPP and CASP (m = 100, 300, 1000; docs/performance.md), no sampler had a lower
    test RMSE than uniform components, and every one of them cost 1.5–56 × ``Nystroem``'s fit at
    m ≥ 300, whose cost does not grow with n (theirs does). At that wide kernel the ridge leverage
    scores are nearly flat. Choose a sampler by name for kernels narrow against the data's spread
    or a small ``reg``, where the scores vary and the choice of centres counts
    (docs/notes/centres.md; for a regressor, :class:`NystromKRR` chooses its centres from y).

    Parameters
    ----------
    kernel : {"rbf", "laplacian"} or sklearn kernel, default="rbf"
        A name of scikit-learn's ``pairwise_kernels`` with leverage scores here (see
        :func:`string_kernel`: ``"laplacian"``'s scores are those of a radial surrogate), or a
        ``Matern``/``RBF`` kernel object (optionally times ``ConstantKernel``). Polynomial,
        sigmoid, cosine and callable kernels are not stationary and are refused.
    gamma : float or None, default=None
        Of ``"rbf"`` and ``"laplacian"``, as in scikit-learn; None is ``1/n_features``.
        Must be None with a kernel object.
    coef0, degree : float or None, default=None
        Accepted for the signature; the stationary kernels have neither, and scikit-learn ignores
        them for ``"rbf"``/``"laplacian"`` too. Must be None with a kernel object.
    kernel_params : dict or None, default=None
        With a name: ``{"gamma": g}`` (``gamma`` wins when both are given, as in scikit-learn).
        With a kernel object: parameters set on a clone of it, e.g. ``{"length_scale": 0.3}``.
    n_components : int, default=100
        Number of distinct components (>= 1); more than n warns and uses every point.
    random_state : int, numpy Generator or None, default=None
    n_jobs : int or None, default=None
        As in :class:`NystromKRR`.
    reg : float, default=1e-3
        :math:`\lambda > 0` of the leverage scores (unused by ``"uniform"``).
    sampler : str or LeverageSampler, default="uniform"
        A name of :data:`spectral_leverage.SAMPLERS` or a sampler object, as in :class:`NystromKRR`:
        ``"spectral"`` for ridge leverage sampling (``"spectral"`` was the default before
        2026-11-28).

    Attributes
    ----------
    components_ : ndarray of shape (m, d)
    component_indices_ : ndarray of int, shape (m,)
        Distinct, sorted training rows.
    normalization_ : ndarray of shape (m, m)
    kernel_ : sklearn kernel
        The kernel the scores were computed with (for a name: :func:`string_kernel`'s first).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.pipeline import make_pipeline
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(1000, 2))
    >>> y = np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=1000)
    >>> feature_map = LeverageNystroem(kernel="rbf", gamma=2.0, n_components=50, sampler="spectral",
    ...                                reg=1e-4, random_state=0)
    >>> pipe = make_pipeline(feature_map, Ridge(alpha=1e-3)).fit(X, y)
    >>> pipe[0].components_.shape, bool(pipe.score(X, y) > 0.9)
    ((50, 2), True)
    """

    #: scikit-learn checks this estimator fails by design (:func:`~spectral_leverage._validation.
    #: expected_failed_checks`)
    _expected_failed_checks: ClassVar[dict[str, str]] = {
        "check_sample_weight_equivalence_on_dense_data":
            "the components are rows: a repeated row is a repeated component, so the feature map's "
            "width follows the rows given (all of them when n_components >= n), and fewer "
            "components than rows are a random draw (tests/krr/test_nystrom_weights.py)",
    }

    _parameter_constraints: ClassVar[dict] = {
        "kernel": [StrOptions(set(STRING_KERNELS)), Kernel],
        "gamma": [NumericInterval(Real, 0, None, closed="neither"), None],
        "coef0": [NumericInterval(Real, None, None, closed="neither"), None],
        "degree": [NumericInterval(Real, 0, None, closed="left"), None],
        "kernel_params": [dict, None],
        "n_components": POSITIVE_INT,
        "random_state": RANDOM_STATE,
        "n_jobs": N_JOBS,
        "reg": POSITIVE,
        "sampler": SAMPLER,
    }

    def __init__(self, kernel="rbf", *, gamma: float | None = None, coef0: float | None = None,
                 degree: float | None = None, kernel_params: dict | None = None,
                 n_components: int = 100, random_state=None, n_jobs: int | None = None,
                 reg: float = DEFAULT_REG, sampler="uniform"):
        self.kernel = kernel
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.reg = reg
        self.sampler = sampler

    def _kernels(self, n_features: int) -> tuple[Kernel, object]:
        """(kernel of the scores, kernel of the features), as :func:`string_kernel` for a name."""
        params = dict(self.kernel_params or {})
        if isinstance(self.kernel, str):
            unknown = set(params) - {"gamma"}
            if unknown:
                raise ValueError(f"kernel_params for kernel={self.kernel!r} takes only 'gamma', got "
                                 f"{sorted(unknown)}.")
            gamma = params.get("gamma") if self.gamma is None else self.gamma
            return string_kernel(self.kernel, gamma, n_features)
        if any(value is not None for value in (self.gamma, self.coef0, self.degree)):
            raise ValueError("gamma, coef0 and degree are for kernel names; with a kernel object set "
                             "its own parameters (or pass them in kernel_params).")
        kernel = clone(self.kernel).set_params(**params) if params else self.kernel
        parse_kernel(kernel)
        return kernel, kernel

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
        score_kernel, feature_kernel = self._kernels(X.shape[1])
        parse_kernel(score_kernel).check_inputs(X)
        reg = check_positive(self.reg, "reg")
        rows, weights = (np.arange(X.shape[0]), None) if sample_weight is None else positive_rows(
            X, sample_weight)
        idx = rows[draw_centers(X[rows], self.n_components, self.sampler, kernel=score_kernel, reg=reg,
                                rng=check_random_state(self.random_state), name="n_components",
                                sample_weight=weights, replace=False)]
        components = X[idx]
        U, S, Vt = svd(feature_kernel(components), check_finite=False)
        S = np.maximum(S, 1e-12)
        self.normalization_ = (U / np.sqrt(S)) @ Vt
        self.components_ = components
        self.component_indices_ = idx
        self.kernel_ = score_kernel
        self._feature_kernel = feature_kernel
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
        return kernel_product(self._feature_kernel, X, self.components_, self.normalization_.T,
                              memory_budget=DEFAULT_MEMORY_BUDGET)

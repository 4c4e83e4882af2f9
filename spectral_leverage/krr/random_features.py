r"""Kernel ridge regression on random Fourier features (Rahimi & Recht 2008).

A baseline for comparison: ridge regression in the primal on features drawn from the kernel's own
spectral density (the convention of :mod:`spectral_leverage.kernels`), the same ``reg``
convention as exact KRR, :math:`\hat y = K(K + n\lambda I)^{-1}y`.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from .._blocks import DEFAULT_MEMORY_BUDGET, row_chunks
from .._validation import (
    DEFAULT_REG,
    KERNEL,
    POSITIVE,
    POSITIVE_INT,
    RANDOM_STATE,
    check_data,
    check_fitted_data,
    check_positive,
    check_random_state,
    check_samples,
    validate_params,
)
from ..kernels import StationaryKernel, check_spectral_nu, parse_kernel
from ._ridge import check_fit_data, ridge_solve

__all__ = ["RandomFourierKRR", "random_fourier_features", "sample_fourier_frequencies"]


def sample_fourier_frequencies(kernel, n_dims: int, n_features: int, random_state=None) -> np.ndarray:
    r"""Angular frequencies :math:`\omega_1..\omega_D` drawn from the kernel's normalised spectral density.

    With the ordinary-frequency density :math:`s` of the package (``∫ s = c``),
    :math:`k(\tau) = c\,E_\omega[\cos(\omega^\top \tau)]` for :math:`\omega = 2\pi\xi`,
    :math:`\xi \sim s/c`. In angular frequency:

    * RBF(:math:`\ell`): :math:`\omega \sim N(0, I/\ell^2)`;
    * Matérn(:math:`\nu, \ell`): density :math:`\propto (2\nu/\ell^2 + \|\omega\|^2)^{-(\nu + d/2)}`,
      the multivariate Student-t with :math:`2\nu` degrees of freedom and scale :math:`1/\ell`:
      :math:`\omega = z\sqrt{2\nu/g}/\ell`, :math:`z \sim N(0, I_d)`, :math:`g \sim \chi^2_{2\nu}`.

    An anisotropic length scale divides axis j of :math:`\omega` by :math:`\ell_j` (equivalently, x is
    rescaled by :math:`1/\ell` per axis).

    Parameters
    ----------
    kernel : sklearn kernel or StationaryKernel
    n_dims : int
        Input dimension d.
    n_features : int
        Number D of frequencies.
    random_state : int, numpy Generator or None

    Returns
    -------
    ndarray of shape (d, D)
        Column j is :math:`\omega_j`, for features :math:`\cos(x^\top\omega_j + b_j)`.

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> W = sample_fourier_frequencies(RBF(0.5), n_dims=2, n_features=20000, random_state=0)
    >>> round(float(W.std()), 1)  # 1/ℓ
    2.0
    """
    parsed = kernel if isinstance(kernel, StationaryKernel) else parse_kernel(kernel)
    d = check_samples(n_dims, "n_dims")
    D = check_samples(n_features, "n_features")
    parsed.check_n_features(d)
    check_spectral_nu(parsed, "random Fourier features", "its frequencies overflow float64",
                      ", or Nyström features (NystromKRR)")
    rng = check_random_state(random_state)
    omega = rng.standard_normal((d, D))
    if parsed.family == "matern":
        g = rng.chisquare(2.0 * parsed.nu, size=D)
        omega *= np.sqrt(2.0 * parsed.nu / g)
    ell = parsed.length_scale
    return omega / (ell[:, None] if ell.ndim == 1 else ell)


def _draw_features(parsed: StationaryKernel, d: int, D: int, random_state):
    """Frequencies (d, D), phases (D,) and the scale sqrt(2c/D): the one source of random features."""
    rng = check_random_state(random_state)
    weights = sample_fourier_frequencies(parsed, d, D, rng)
    offset = rng.uniform(0.0, 2.0 * np.pi, size=D)
    return weights, offset, np.sqrt(2.0 * parsed.amplitude / D)


def _feature_map(X: np.ndarray, weights: np.ndarray, offset: np.ndarray, scale: float) -> np.ndarray:
    Phi = X @ weights
    Phi += offset
    np.cos(Phi, out=Phi)
    Phi *= scale
    return Phi


def random_fourier_features(X, kernel, n_features: int, random_state=None) -> np.ndarray:
    r"""Random Fourier features :math:`\Phi(X)`, with :math:`\Phi\Phi^\top \approx K` (Rahimi & Recht 2008).

    :math:`\varphi(x) = \sqrt{2c/D}\,\cos(\omega_j^\top x + b_j)_{j=1..D}` with :math:`\omega_j` from
    :func:`sample_fourier_frequencies` and :math:`b_j \sim U[0, 2\pi)`. With the same ``random_state``
    these are exactly the features of :class:`RandomFourierKRR` (``feature_map``). Cost :math:`O(nD(d+1))`.

    Parameters
    ----------
    X : array_like of shape (n, d)
    kernel : sklearn kernel
    n_features : int
        D.
    random_state : int, numpy Generator or None

    Returns
    -------
    ndarray of shape (n, D)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> X = np.random.default_rng(0).uniform(size=(50, 2))
    >>> Phi = random_fourier_features(X, Matern(0.5, nu=1.5), 20000, random_state=0)
    >>> bool(np.abs(Phi @ Phi.T - Matern(0.5, nu=1.5)(X)).max() < 0.05)
    True
    """
    X = check_data(X, min_samples=1)
    parsed = parse_kernel(kernel)
    parsed.check_n_features(X.shape[1])
    D = check_samples(n_features, "n_features")
    return _feature_map(X, *_draw_features(parsed, X.shape[1], D, random_state))


class RandomFourierKRR(RegressorMixin, BaseEstimator):
    r"""Kernel ridge regression on random Fourier features (Rahimi & Recht 2008).

    Features :math:`\varphi(x) = \sqrt{2c/D}\,\cos(\omega_j^\top x + b_j)_{j=1..D}`, with
    :math:`\omega_j` drawn from the kernel's normalised spectral density (see
    :func:`sample_fourier_frequencies`), :math:`b_j \sim U[0, 2\pi)` and :math:`c = k(0)` the
    amplitude, so that :math:`E[\varphi(x)^\top\varphi(x')] = k(x, x')` and the error is
    :math:`O_P(c/\sqrt D)`. The ridge problem in the primal,

    .. math::

        \hat w = \arg\min_w \frac1n\|y - \Phi w\|^2 + \lambda \|w\|^2
        \quad\Rightarrow\quad (\Phi^\top\Phi + n\lambda I)\, w = \Phi^\top y,

    is exact KRR with the approximate kernel :math:`\Phi\Phi^\top` (same ``reg`` convention). The
    :math:`D \times D` system is accumulated over row blocks of :math:`\Phi` (never all n rows at
    once) and solved by Cholesky.

    Complexity: fit :math:`O(n D (d + D) + D^3)` time, :math:`O(D^2)` memory plus one block;
    predict :math:`O(D(d + 1))` per point.

    Parameters
    ----------
    kernel : sklearn kernel or None, default=None
        Matérn (any :math:`\nu > 0`) or RBF, optionally times ``ConstantKernel``; anisotropic length
        scales allowed. None is ``Matern(length_scale=1.0, nu=1.5)``.
    reg : float, default=1e-3
        :math:`\lambda > 0`.
    n_features : int, default=100
        Number D of random features.
    random_state : int, numpy Generator or None, default=None
        Seeds the frequencies and phases.

    Attributes
    ----------
    random_weights_ : ndarray of shape (d, D)
        Frequencies :math:`\omega_j` (in the units of 1/x).
    random_offset_ : ndarray of shape (D,)
        Phases :math:`b_j`.
    coef_ : ndarray of shape (D,) or (D, n_outputs)
        :math:`\hat w`.
    n_features_in_ : int

    References
    ----------
    A. Rahimi and B. Recht, "Random features for large-scale kernel machines", *Advances in Neural
    Information Processing Systems* 20, 2008.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(2000, 2))
    >>> y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=2000)
    >>> model = RandomFourierKRR(RBF(0.5), reg=1e-4, n_features=200, random_state=0).fit(X, y)
    >>> model.predict(X[:3]).shape
    (3,)
    >>> bool(model.score(X, y) > 0.95)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "kernel": KERNEL,
        "reg": POSITIVE,
        "n_features": POSITIVE_INT,
        "random_state": RANDOM_STATE,
    }

    def __init__(self, kernel=None, reg: float = DEFAULT_REG, n_features: int = 100, *,
                 random_state=None):
        self.kernel = kernel
        self.reg = reg
        self.n_features = n_features
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def fit(self, X, y) -> RandomFourierKRR:
        """Draw the features and solve the D×D ridge system.

        Parameters
        ----------
        X : array_like of shape (n, d)
        y : array_like of shape (n,) or (n, n_outputs)

        Returns
        -------
        self
        """
        validate_params(self)
        X, y, parsed = check_fit_data(self, X, y)
        n, d = X.shape
        reg = check_positive(self.reg, "reg")
        D = self.n_features
        self.random_weights_, self.random_offset_, self._scale = _draw_features(
            parsed, d, D, self.random_state
        )

        Y = y.reshape(n, -1)
        gram = np.zeros((D, D))
        rhs = np.zeros((D, Y.shape[1]))
        for rows in row_chunks(n, 16.0 * D, DEFAULT_MEMORY_BUDGET):
            Phi = self._features(X[rows])
            gram += Phi.T @ Phi
            rhs += Phi.T @ Y[rows]
        coef = ridge_solve(gram, rhs, n * reg)
        self.coef_ = coef.reshape((D, *y.shape[1:]))
        return self

    def _features(self, X: np.ndarray) -> np.ndarray:
        return _feature_map(X, self.random_weights_, self.random_offset_, self._scale)

    def feature_map(self, X) -> np.ndarray:
        """The feature map :math:`\\Phi(X)`, shape (n_query, D).

        ``feature_map(X) @ feature_map(Z).T`` approximates ``kernel(X, Z)``.
        """
        return self._features(check_fitted_data(self, X, fitted_attribute="coef_"))

    def predict(self, X) -> np.ndarray:
        """:math:`\\hat f(x) = \\varphi(x)^\\top \\hat w`, in row blocks.

        Parameters
        ----------
        X : array_like of shape (n_query, d)

        Returns
        -------
        ndarray of shape (n_query,) or (n_query, n_outputs)
        """
        X = check_fitted_data(self, X, fitted_attribute="coef_")
        out = np.empty((X.shape[0], *self.coef_.shape[1:]))
        for rows in row_chunks(X.shape[0], 16.0 * self.coef_.shape[0], DEFAULT_MEMORY_BUDGET):
            out[rows] = self._features(X[rows]) @ self.coef_
        return out

r"""Kernel ridge regression by random sketching and by random Fourier features.

Both estimators approximate exact KRR in the package's convention (see :mod:`spectral_leverage`):

.. math::

    \hat f = \arg\min_{f \in \mathcal H} \frac1n \sum_{i=1}^n (y_i - f(x_i))^2 + \lambda \|f\|_{\mathcal H}^2
    \quad\Rightarrow\quad \hat y = K (K + n\lambda I)^{-1} y,

with :math:`\lambda` the ``reg`` argument (scikit-learn's ``KernelRidge`` uses ``alpha`` = :math:`n\lambda`).

* :class:`SketchedKRR` restricts the dual coefficients to the range of :math:`S^\top` for a random
  sketch :math:`S \in R^{m\times n}` (Gaussian or randomized orthogonal system): Yang, Pilanci &
  Wainwright, "Randomized sketches for kernels: fast and optimal nonparametric regression",
  *Ann. Statist.* 45(3), 2017.
* :class:`RandomFourierKRR` solves ridge regression in the primal on random Fourier features drawn
  from the kernel's own spectral density: Rahimi & Recht, "Random features for large-scale kernel
  machines", *NIPS* 2007 (2008).
"""

from __future__ import annotations

import numpy as np
import scipy.fft
import scipy.linalg
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_array, check_consistent_length

from .._blocks import DEFAULT_MEMORY_BUDGET, kernel_product, row_chunks
from .._validation import check_data, check_fitted_data, check_positive, check_random_state, check_samples
from ..kernels import StationaryKernel, parse_kernel
from ..samplers.exact import MAX_EXACT_SAMPLES

__all__ = ["RandomFourierKRR", "SketchedKRR", "random_fourier_features", "sample_fourier_frequencies"]

_SKETCHES = ("gaussian", "ros")


# ----------------------------------------------------------------------------------------- helpers
def _check_fit_data(X, y, kernel) -> tuple[np.ndarray, np.ndarray, StationaryKernel]:
    if y is None:
        raise ValueError("this estimator requires y to be passed, but the target y is None.")
    X = check_data(X)
    y = check_array(y, dtype=np.float64, ensure_2d=False, allow_nd=True, ensure_all_finite=True,
                    input_name="y")
    if y.ndim not in (1, 2):
        raise ValueError(f"y must be 1-D (n,) or 2-D (n, n_outputs), got shape {y.shape}.")
    check_consistent_length(X, y)
    parsed = parse_kernel(kernel)
    parsed.check_n_features(X.shape[1])
    return X, y, parsed


def _check_bool(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}.")
    return bool(value)


def _ridge_solve(gram: np.ndarray, rhs: np.ndarray, shift: float) -> np.ndarray:
    """Solve ``(gram + shift·I) w = rhs`` by Cholesky (gram symmetric PSD, shift > 0)."""
    A = gram + shift * np.eye(gram.shape[0])
    try:
        factor = scipy.linalg.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError as err:  # only reachable through severe round-off
        raise np.linalg.LinAlgError(
            "Cholesky of the regularised Gram matrix failed; increase reg."
        ) from err
    return scipy.linalg.cho_solve(factor, rhs, check_finite=False)


# ------------------------------------------------------------------------------------ sketched KRR
class SketchedKRR(RegressorMixin, BaseEstimator):
    r"""Kernel ridge regression with a random sketch of the dual (Yang, Pilanci & Wainwright 2017).

    With a sketch matrix :math:`S \in R^{m \times n}` the dual coefficients are restricted to
    :math:`S^\top \alpha`, :math:`\alpha \in R^m`:

    .. math::

        \hat\alpha = \arg\min_{\alpha} \frac{1}{2n}\|y - K S^\top\alpha\|^2
                     + \frac{\lambda}{2}\,\alpha^\top S K S^\top \alpha,
        \qquad \hat f(x) = k(x, X)\, S^\top \hat\alpha .

    Yang et al. state the problem with the normalised kernel matrix :math:`K/n` and
    :math:`f = \frac{1}{\sqrt n}\sum_i (S^\top\alpha)_i k(\cdot, x_i)`; substituting
    :math:`\alpha \to \alpha/\sqrt n` gives the display above with *their* :math:`\lambda_n` equal to
    our ``reg``. It is the exact KRR objective (halved) over the subspace, so :math:`S = I` (or any
    invertible :math:`S`) gives exact KRR, :math:`\hat y = K(K + n\lambda I)^{-1}y`. The normal
    equations are :math:`S K (K + n\lambda I) S^\top \alpha = S K y`; they are solved stably by
    whitening with the eigendecomposition of :math:`S K S^\top` (directions with eigenvalues at
    round-off level dropped) followed by an :math:`m \times m` ridge solve by Cholesky.

    Sketches:

    * ``"gaussian"``: i.i.d. :math:`N(0, 1/m)` entries; applying it costs :math:`O(n^2 m)`.
    * ``"ros"`` (randomized orthogonal system): :math:`S = \sqrt{n/m}\,P H D` with :math:`D` random
      signs, :math:`H` the orthonormal DCT-II (``scipy.fft.dct(norm="ortho")``) and :math:`P` the
      selection of :math:`m` distinct rows uniformly at random; applying it costs
      :math:`O(n^2 \log n)`.

    Yang et al. show that :math:`m` of the order of the statistical dimension (here, a small
    multiple of :math:`d_\mathrm{eff} = \mathrm{tr}\,K(K+n\lambda I)^{-1}`) keeps the minimax rate.

    Complexity: :math:`O(n^2 d)` kernel evaluations (the kernel matrix is formed in column blocks
    and sketched on the fly, never held whole), plus :math:`O(n^2 m)` (Gaussian) or
    :math:`O(n^2 \log n)` (ROS) to sketch, :math:`O(n m^2 + m^3)` to solve; memory :math:`O(n m)`
    plus one block. Prediction costs :math:`O(n)` kernel evaluations per point. Because fitting is
    quadratic in n, it refuses n above 30 000 unless ``force=True`` (as
    :func:`~spectral_leverage.exact_leverage` does).

    Parameters
    ----------
    kernel : sklearn kernel
        Matérn or RBF, optionally times ``ConstantKernel`` (see
        :func:`~spectral_leverage.kernels.parse_kernel`).
    reg : float
        :math:`\lambda > 0`.
    sketch_size : int
        Sketch dimension :math:`m`, 1 <= m <= n.
    sketch : {"gaussian", "ros"}, default="gaussian"
    force : bool, default=False
        Allow n above 30 000.
    random_state : int, numpy Generator or None
        Seeds the sketch.

    Attributes
    ----------
    X_fit_ : ndarray of shape (n, d)
        Training inputs (needed by ``predict``).
    dual_coef_ : ndarray of shape (n,) or (n, n_outputs)
        :math:`S^\top\hat\alpha`: ``predict(x) = kernel(x, X_fit_) @ dual_coef_``.
    sketch_coef_ : ndarray of shape (m,) or (m, n_outputs)
        :math:`\hat\alpha`.
    rank_ : int
        Numerical rank of :math:`S K S^\top` used in the solve (at most m).
    n_features_in_ : int

    References
    ----------
    Y. Yang, M. Pilanci and M. J. Wainwright, "Randomized sketches for kernels: fast and optimal
    nonparametric regression", *Annals of Statistics* 45(3):991–1023, 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(400, 1))
    >>> y = np.sin(6 * X[:, 0]) + 0.1 * rng.normal(size=400)
    >>> model = SketchedKRR(Matern(0.3, nu=1.5), reg=1e-3, sketch_size=40, sketch="ros",
    ...                     random_state=0).fit(X, y)
    >>> model.predict(X[:3]).shape
    (3,)
    >>> bool(model.score(X, y) > 0.9)
    True
    """

    def __init__(self, kernel, reg: float, sketch_size: int, *, sketch: str = "gaussian",
                 force: bool = False, random_state=None):
        self.kernel = kernel
        self.reg = reg
        self.sketch_size = sketch_size
        self.sketch = sketch
        self.force = force
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    # --- the sketch operator -------------------------------------------------------------------
    def _draw_sketch(self, n: int, m: int, rng: np.random.Generator) -> None:
        if self.sketch == "gaussian":
            self._gaussian = rng.standard_normal((m, n)) / np.sqrt(m)
        else:
            self._signs = rng.choice(np.array([-1.0, 1.0]), size=n)
            self._rows = np.sort(rng.choice(n, size=m, replace=False))
            self._scale = np.sqrt(n / m)

    def _apply(self, A: np.ndarray) -> np.ndarray:
        """``S @ A`` for A of shape (n, k)."""
        if self.sketch == "gaussian":
            return self._gaussian @ A
        HDA = scipy.fft.dct(self._signs[:, None] * A, type=2, norm="ortho", axis=0)
        return self._scale * HDA[self._rows]

    def _apply_transpose(self, B: np.ndarray, n: int) -> np.ndarray:
        """``S.T @ B`` for B of shape (m, k)."""
        if self.sketch == "gaussian":
            return self._gaussian.T @ B
        Z = np.zeros((n, B.shape[1]))
        Z[self._rows] = B
        # H is orthogonal, so H^T = H^{-1}: the orthonormal inverse DCT-II
        return self._scale * self._signs[:, None] * scipy.fft.idct(Z, type=2, norm="ortho", axis=0)

    # --- fit / predict ---------------------------------------------------------------------------
    def fit(self, X, y) -> SketchedKRR:
        """Draw the sketch and solve the m-dimensional sketched KRR problem.

        Parameters
        ----------
        X : array_like of shape (n, d)
        y : array_like of shape (n,) or (n, n_outputs)

        Returns
        -------
        self
        """
        X, y, _ = _check_fit_data(X, y, self.kernel)
        n = X.shape[0]
        reg = check_positive(self.reg, "reg")
        m = check_samples(self.sketch_size, "sketch_size")
        if m > n:
            raise ValueError(f"sketch_size must be at most n = {n}, got {m}.")
        if self.sketch not in _SKETCHES:
            raise ValueError(f"sketch must be one of {_SKETCHES}, got {self.sketch!r}.")
        force = _check_bool(self.force, "force")
        if n > MAX_EXACT_SAMPLES and not force:
            raise ValueError(
                f"sketched KRR needs all n² = {float(n) ** 2:.1e} kernel evaluations for n={n}; "
                f"n above {MAX_EXACT_SAMPLES} needs force=True, or use Nyström or RandomFourierKRR."
            )
        rng = check_random_state(self.random_state)
        self._draw_sketch(n, m, rng)

        # SK = S @ K, built from column blocks of the (symmetric) kernel matrix.
        SK = np.empty((m, n))
        for cols in row_chunks(n, 32.0 * n, DEFAULT_MEMORY_BUDGET):
            SK[:, cols] = self._apply(self.kernel(X, X[cols]))
        B = SK.T  # K S^T, shape (n, m)
        M = self._apply(B)  # S K S^T, shape (m, m)
        M = 0.5 * (M + M.T)

        # Whiten: alpha = W gamma with W^T M W = I on the numerical range of M; then the problem is
        # the well-conditioned ridge (C^T C + nλ I) gamma = C^T y with C = B W.
        evals, evecs = np.linalg.eigh(M)
        tol = evals[-1] * m * np.finfo(float).eps
        if not evals[-1] > 0:
            raise np.linalg.LinAlgError("S K S^T is zero: the kernel matrix is degenerate.")
        keep = evals > tol
        W = evecs[:, keep] / np.sqrt(evals[keep])
        C = B @ W
        Y = y.reshape(n, -1)
        gamma = _ridge_solve(C.T @ C, C.T @ Y, n * reg)
        alpha = W @ gamma

        self.X_fit_ = X
        self.rank_ = int(keep.sum())
        self.sketch_coef_ = alpha.reshape((m, *y.shape[1:]))
        self.dual_coef_ = self._apply_transpose(alpha, n).reshape(y.shape)
        self._gaussian = self._signs = self._rows = None  # the sketch itself is not needed to predict
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X) -> np.ndarray:
        """:math:`\\hat f(x) = k(x, X_\\mathrm{fit})\\,S^\\top\\hat\\alpha`, in row blocks.

        Parameters
        ----------
        X : array_like of shape (n_query, d)

        Returns
        -------
        ndarray of shape (n_query,) or (n_query, n_outputs)
        """
        X = check_fitted_data(self, X)
        return kernel_product(self.kernel, X, self.X_fit_, self.dual_coef_,
                              memory_budget=DEFAULT_MEMORY_BUDGET)


# --------------------------------------------------------------------------- random Fourier features
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
    kernel : sklearn kernel
        Matérn (any :math:`\nu > 0`) or RBF, optionally times ``ConstantKernel``; anisotropic length
        scales allowed.
    reg : float
        :math:`\lambda > 0`.
    n_features : int
        Number D of random features.
    random_state : int, numpy Generator or None
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

    def __init__(self, kernel, reg: float, n_features: int, *, random_state=None):
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
        X, y, parsed = _check_fit_data(X, y, self.kernel)
        n, d = X.shape
        reg = check_positive(self.reg, "reg")
        D = check_samples(self.n_features, "n_features")
        self.random_weights_, self.random_offset_, self._scale = _draw_features(
            parsed, d, D, self.random_state
        )
        self.n_features_in_ = d

        Y = y.reshape(n, -1)
        gram = np.zeros((D, D))
        rhs = np.zeros((D, Y.shape[1]))
        for rows in row_chunks(n, 16.0 * D, DEFAULT_MEMORY_BUDGET):
            Phi = self._features(X[rows])
            gram += Phi.T @ Phi
            rhs += Phi.T @ Y[rows]
        coef = _ridge_solve(gram, rhs, n * reg)
        self.coef_ = coef.reshape((D, *y.shape[1:]))
        return self

    def _features(self, X: np.ndarray) -> np.ndarray:
        return _feature_map(X, self.random_weights_, self.random_offset_, self._scale)

    def feature_map(self, X) -> np.ndarray:
        """The feature map :math:`\\Phi(X)`, shape (n_query, D).

        ``feature_map(X) @ feature_map(Z).T`` approximates ``kernel(X, Z)``.
        """
        return self._features(check_fitted_data(self, X))

    def predict(self, X) -> np.ndarray:
        """:math:`\\hat f(x) = \\varphi(x)^\\top \\hat w`, in row blocks.

        Parameters
        ----------
        X : array_like of shape (n_query, d)

        Returns
        -------
        ndarray of shape (n_query,) or (n_query, n_outputs)
        """
        X = check_fitted_data(self, X)
        out = np.empty((X.shape[0], *self.coef_.shape[1:]))
        for rows in row_chunks(X.shape[0], 16.0 * self.coef_.shape[0], DEFAULT_MEMORY_BUDGET):
            out[rows] = self._features(X[rows]) @ self.coef_
        return out

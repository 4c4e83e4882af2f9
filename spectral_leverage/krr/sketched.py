r"""Kernel ridge regression with a random sketch of the dual (Yang, Pilanci & Wainwright 2017).

A baseline for comparison. Exact KRR in the package's convention is
:math:`\hat y = K (K + n\lambda I)^{-1} y` (``reg`` :math:`= \lambda`; scikit-learn's
``KernelRidge`` uses ``alpha`` :math:`= n\lambda`); the sketch restricts the dual coefficients to
the range of :math:`S^\top` for a random :math:`S \in R^{m\times n}` (Gaussian or randomized
orthogonal system).
"""

from __future__ import annotations

import warnings
from typing import ClassVar

import numpy as np
import scipy.fft
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import StrOptions

from .._blocks import DEFAULT_MEMORY_BUDGET, kernel_product, row_chunks, use_n_jobs
from .._validation import (
    DEFAULT_REG,
    KERNEL,
    N_JOBS,
    POSITIVE,
    POSITIVE_INT,
    RANDOM_STATE,
    check_fitted_data,
    check_positive,
    check_random_state,
    validate_params,
)
from ..kernels import resolve_kernel
from ..samplers.exact import MAX_EXACT_SAMPLES
from ._ridge import check_fit_data, ridge_solve

__all__ = ["SketchedKRR"]

_SKETCHES = ("gaussian", "ros")


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
    kernel : sklearn kernel or None, default=None
        Matérn or RBF, optionally times ``ConstantKernel`` (see
        :func:`~spectral_leverage.kernels.parse_kernel`); None is ``Matern(length_scale=1.0, nu=1.5)``.
    reg : float, default=1e-3
        :math:`\lambda > 0`.
    sketch_size : int, default=100
        Sketch dimension :math:`m >= 1`; above n it warns and uses m = n (as scikit-learn's
        ``Nystroem`` clamps ``n_components``).
    sketch : {"gaussian", "ros"}, default="gaussian"
    force : bool, default=False
        Allow n above 30 000.
    random_state : int, numpy Generator or None, default=None
        Seeds the sketch.
    n_jobs : int or None, default=None
        Threads of :meth:`fit` (BLAS's) and :meth:`predict` (the package's own fan-out and BLAS's),
        with joblib's meaning (as in :class:`~spectral_leverage.krr.NystromKRR`).

    Attributes
    ----------
    X_fit_ : ndarray of shape (n, d)
        Training inputs (needed by ``predict``).
    dual_coef_ : ndarray of shape (n,) or (n, n_outputs)
        :math:`S^\top\hat\alpha`: ``predict(x) = kernel(x, X_fit_) @ dual_coef_``.
    sketch_coef_ : ndarray of shape (m,) or (m, n_outputs)
        :math:`\hat\alpha`, m = min(sketch_size, n).
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

    _parameter_constraints: ClassVar[dict] = {
        "kernel": KERNEL,
        "reg": POSITIVE,
        "sketch_size": POSITIVE_INT,
        "sketch": [StrOptions(set(_SKETCHES))],
        "force": ["boolean"],
        "random_state": RANDOM_STATE,
        "n_jobs": N_JOBS,
    }

    def __init__(self, kernel=None, reg: float = DEFAULT_REG, sketch_size: int = 100, *,
                 sketch: str = "gaussian", force: bool = False, random_state=None,
                 n_jobs=None):
        self.kernel = kernel
        self.reg = reg
        self.sketch_size = sketch_size
        self.sketch = sketch
        self.force = force
        self.random_state = random_state
        self.n_jobs = n_jobs

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
    @use_n_jobs
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
        validate_params(self)
        X, y, _ = check_fit_data(self, X, y)
        n = X.shape[0]
        reg = check_positive(self.reg, "reg")
        m = self.sketch_size
        if m > n:
            warnings.warn(f"sketch_size={m} is larger than the number of samples n={n}: using n.",
                          UserWarning, stacklevel=2)
            m = n
        if n > MAX_EXACT_SAMPLES and not self.force:
            raise ValueError(
                f"sketched KRR needs all n² = {float(n) ** 2:.1e} kernel evaluations for n={n}; "
                f"n above {MAX_EXACT_SAMPLES} needs force=True, or use Nyström or RandomFourierKRR."
            )
        rng = check_random_state(self.random_state)
        self._draw_sketch(n, m, rng)
        kernel = resolve_kernel(self.kernel)

        # SK = S @ K, built from column blocks of the (symmetric) kernel matrix.
        SK = np.empty((m, n))
        for cols in row_chunks(n, 32.0 * n, DEFAULT_MEMORY_BUDGET):
            SK[:, cols] = self._apply(kernel(X, X[cols]))
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
        gamma = ridge_solve(C.T @ C, C.T @ Y, n * reg)
        alpha = W @ gamma

        self.X_fit_ = X
        self.rank_ = int(keep.sum())
        self.sketch_coef_ = alpha.reshape((m, *y.shape[1:]))
        self.dual_coef_ = self._apply_transpose(alpha, n).reshape(y.shape)
        self._gaussian = self._signs = self._rows = None  # the sketch itself is not needed to predict
        return self

    @use_n_jobs
    def predict(self, X) -> np.ndarray:
        """:math:`\\hat f(x) = k(x, X_\\mathrm{fit})\\,S^\\top\\hat\\alpha`, in row blocks.

        Parameters
        ----------
        X : array_like of shape (n_query, d)

        Returns
        -------
        ndarray of shape (n_query,) or (n_query, n_outputs)
        """
        X = check_fitted_data(self, X, fitted_attribute="dual_coef_")
        return kernel_product(resolve_kernel(self.kernel), X, self.X_fit_, self.dual_coef_,
                              memory_budget=DEFAULT_MEMORY_BUDGET)

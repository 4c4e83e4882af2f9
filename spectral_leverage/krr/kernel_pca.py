r"""Kernel PCA on Nyström (or random Fourier) features, in row blocks: never the n×n kernel.

Exact kernel PCA (scikit-learn's ``KernelPCA``) takes the eigenpairs
:math:`K_c u_j = \lambda_j u_j` of the centred kernel matrix :math:`K_c = HKH`,
:math:`H = I - \tfrac1n 11^\top`, and projects a point on component :math:`j` by
:math:`\lambda_j^{-1/2}\sum_i u_{ij}\,\tilde k(x, x_i)` (:math:`\tilde k` centred in feature space).
With features :math:`\varphi` such that :math:`\Phi\Phi^\top \approx K`
(:mod:`spectral_leverage.krr._features`), :math:`K_c \approx \Phi_c\Phi_c^\top` with
:math:`\Phi_c = \Phi - 1\mu^\top`, :math:`\mu` the features' mean, and the two problems share their
non-zero eigenvalues: from the :math:`r \times r` eigenproblem
:math:`\Phi_c^\top\Phi_c v_j = \lambda_j v_j`,

.. math::

    u_j = \Phi_c v_j / \sqrt{\lambda_j}, \qquad
    \text{transform}(x) = (\varphi(x) - \mu)^\top [v_1 \dots v_k].

:math:`\Phi_c^\top\Phi_c` and :math:`\mu` are sums over rows (one pass, summed over blocks: the same
lines on NumPy and Dask, :mod:`spectral_leverage.backends`), the projections a second pass: time
:math:`O(nm(d + m))`, memory one row block of :math:`m` kernel columns plus :math:`O(m^2)`. With every
row a landmark, :math:`\Phi\Phi^\top = K` and this is exact kernel PCA.

Landmarks (``sampler``): k-means centres by default, the "clustered Nyström" of Zhang, Tsang & Kwok
(2008), whose Nyström error is bounded by the k-means quantisation error. Measured on CCPP and CASP
(``benchmarks/kernel_pca.py``, table in docs/notes/kernel-pca.md) they capture more of the exact
top-k variance at m = 50 than uniform rows, than randomly pivoted Cholesky
(:func:`~spectral_leverage.pivoted_cholesky.rp_cholesky`, near-optimal in trace norm among
*rows*) and than leverage-sampled rows at the regression λ or at the λ whose d_eff is k; ten Lloyd
iterations from k-means++ are as good as converged k-means to 0.001.

References
----------
B. Schölkopf, A. Smola and K.-R. Müller, "Nonlinear component analysis as a kernel eigenvalue
problem", *Neural Computation* 10, 1998. B. K. Sriperumbudur and N. Sterge, "Approximate kernel
PCA: computational versus statistical trade-off", *Annals of Statistics* 50, 2022. K. Zhang, I. W.
Tsang and J. T. Kwok, "Improved Nyström low-rank approximation and error analysis", *ICML* 2008.
"""

from __future__ import annotations

import warnings
from numbers import Integral
from typing import ClassVar

import numpy as np
from scipy.linalg import eigh
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, clone
from sklearn.cluster import KMeans, MiniBatchKMeans
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._blocks import DEFAULT_MEMORY_BUDGET
from .._validation import (
    KERNEL,
    MEMORY_BUDGET,
    POSITIVE_INT,
    RANDOM_STATE,
    NumericInterval,
    check_random_state,
    validate_params,
)
from ..backends import backend_for
from ..base import LeverageSampler
from ..kernels import parse_kernel, resolve_kernel
from ..pivoted_cholesky import rp_cholesky
from ..samplers.selection import kmeans_centers
from ._features import FourierFeatures, NystromFeatures, feature_moments, project_features
from .centers import draw_centers

__all__ = ["NystromKernelPCA", "auto_landmarks"]

LANDMARK_SAMPLERS = ("kmeans", "rp-cholesky", "uniform")


def auto_landmarks(n_components: int) -> int:
    """``n_landmarks="auto"``: ``max(100, 10 * n_components)`` landmarks (at most n).

    Measured in ``benchmarks/kernel_pca.py`` (CCPP and CASP, RBF and Matérn 1.5, ℓ = 1): with
    RP-Cholesky landmarks, m = 10 k captures at least 0.997 of the exact top-k variance at k = 20.
    """
    return max(100, 10 * int(n_components))


def _choose_landmarks(X_pool: np.ndarray, m: int, sampler, kernel, rng) -> tuple:
    """(landmark points (m', d), their rows of ``X_pool`` or None for k-means centres)."""
    if m >= X_pool.shape[0]:
        return X_pool, np.arange(X_pool.shape[0])
    if isinstance(sampler, LeverageSampler):
        idx = draw_centers(X_pool, m, sampler, kernel=kernel, reg=getattr(sampler, "reg", None),
                           rng=rng, name="n_landmarks")
    elif sampler == "rp-cholesky":
        idx = np.sort(rp_cholesky(X_pool, kernel, m, rng)[0])
    elif sampler == "uniform":
        idx = np.sort(rng.choice(X_pool.shape[0], size=m, replace=False))
    elif isinstance(sampler, str):  # k-means: the centres are not rows
        return kmeans_centers(X_pool, m, rng), None
    else:
        return clone(sampler).set_params(n_clusters=m).fit(X_pool).cluster_centers_, None
    return X_pool[idx], idx


class NystromKernelPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Kernel PCA from m landmarks (Nyström) or m random Fourier features, in O(nm) memory.

    The components of :math:`\Phi_c\Phi_c^\top \approx K_c`, the centred kernel matrix, for
    features :math:`\varphi` of width m (module docstring): the attributes and outputs are those of
    scikit-learn's ``KernelPCA`` (``eigenvalues_`` of the centred kernel matrix, ``eigenvectors_``
    of unit norm over the training rows, ``fit_transform`` = ``eigenvectors_ * sqrt(eigenvalues_)``,
    ``transform`` centred in feature space), and equal to them, up to sign, when every row is a
    landmark.

    Parameters
    ----------
    n_components : int, default=2
        Number k of components (at most the number of features kept).
    kernel : sklearn kernel or None, default=None
        ``Matern`` or ``RBF``, optionally times ``ConstantKernel``; None is
        ``Matern(length_scale=1.0, nu=1.5)``.
    n_landmarks : int or "auto", default="auto"
        Number m of landmarks (or of random features). ``"auto"`` is :func:`auto_landmarks`:
        ``max(100, 10 * n_components)``. At most the number of candidate rows.
    sampler : {"kmeans", "rp-cholesky", "uniform"}, LeverageSampler or KMeans, default="kmeans"
        How landmarks are chosen among the candidate rows: the centres of k-means (scikit-learn
        ``KMeans`` from k-means++, one start, ten Lloyd iterations; not rows of X), randomly pivoted
        Cholesky (:func:`~spectral_leverage.pivoted_cholesky.rp_cholesky`), uniformly
        without replacement, drawn by a leverage sampler (with replacement, de-duplicated; its own
        ``reg``), or the centres of a given ``KMeans``/``MiniBatchKMeans`` (cloned, ``n_clusters``
        set to m).
    approximation : {"nystrom", "fourier"}, default="nystrom"
        ``"fourier"``: random Fourier features (Rahimi & Recht 2008) of width ``n_landmarks``
        instead of landmarks, for comparison; ``sampler`` is then unused.
    max_candidates : int, default=50_000
        Landmarks are chosen among at most this many rows, a uniform subsample without replacement
        when n is larger: the choice then costs the same at any n, and a Dask fit gathers these rows
        once.
    memory_budget : int, default=1 GiB
        Bytes for a row block of kernel entries and features.
    random_state : int, numpy Generator or None, default=None
        Seeds the candidate rows, the landmarks or the random features.

    Attributes
    ----------
    eigenvalues_ : ndarray of shape (k,)
        Eigenvalues of :math:`\Phi_c\Phi_c^\top` (≈ the centred kernel matrix), decreasing.
    eigenvectors_ : ndarray of shape (n, k), or a lazy Dask array for Dask input
        Its unit eigenvectors on the training rows; zero for a zero eigenvalue.
    landmarks_ : ndarray of shape (m, d) or None
        The landmarks (None for ``approximation="fourier"``).
    landmark_indices_ : ndarray of int or None
        Their training rows, increasing (None for k-means centres and random features; every row
        when m >= n).
    n_landmarks_ : int
        Width m of the features actually used.
    mean_ : ndarray
        Mean of the training features, :math:`\mu`.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string column names (in-memory input).

    Notes
    -----
    ``fit`` runs the same lines on Dask arrays: the landmarks, ``eigenvalues_`` and ``mean_`` are
    NumPy arrays equal to an in-memory fit's with the same seed (to rounding of the block sums);
    ``eigenvectors_`` and ``transform`` are lazy Dask arrays with X's row chunks. Every sampler
    works on Dask input: landmarks are chosen among the candidate rows, gathered in memory.
    ``inverse_transform`` is not offered: a pre-image is not determined by the projections
    (scikit-learn learns one by a further kernel ridge regression on n×n).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> X = np.random.default_rng(0).normal(size=(1000, 3))
    >>> kpca = NystromKernelPCA(2, kernel=RBF(1.0), random_state=0)
    >>> kpca.fit_transform(X).shape, kpca.n_landmarks_
    ((1000, 2), 100)
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_components": POSITIVE_INT,
        "kernel": KERNEL,
        "n_landmarks": [*POSITIVE_INT, StrOptions({"auto"})],
        "sampler": [StrOptions(set(LANDMARK_SAMPLERS)), LeverageSampler, KMeans, MiniBatchKMeans],
        "approximation": [StrOptions({"nystrom", "fourier"})],
        "max_candidates": [NumericInterval(Integral, 2, None, closed="left")],
        "memory_budget": MEMORY_BUDGET,
        "random_state": RANDOM_STATE,
    }

    def __init__(self, n_components: int = 2, *, kernel=None, n_landmarks="auto",
                 sampler="kmeans", approximation: str = "nystrom",
                 max_candidates: int = 50_000, memory_budget: int = DEFAULT_MEMORY_BUDGET,
                 random_state=None):
        self.n_components = n_components
        self.kernel = kernel
        self.n_landmarks = n_landmarks
        self.sampler = sampler
        self.approximation = approximation
        self.max_candidates = max_candidates
        self.memory_budget = memory_budget
        self.random_state = random_state

    def _features(self, backend, X, rng):
        """The fitted feature map, from landmarks among the candidate rows or random frequencies."""
        n, d = X.shape
        kernel = resolve_kernel(self.kernel)
        parsed = parse_kernel(kernel)
        parsed.check_inputs(X)  # the number of features, and distances within float64 kernel values
        m = auto_landmarks(self.n_components) if self.n_landmarks == "auto" else self.n_landmarks
        if self.approximation == "fourier":
            self.landmarks_ = self.landmark_indices_ = None
            return FourierFeatures.fit(parsed, d, m, rng)
        if isinstance(self.n_landmarks, Integral) and m > n:
            warnings.warn(f"n_landmarks={m} is larger than the number of samples n={n}: using "
                          "every row as a landmark.", UserWarning, stacklevel=3)
        rows = np.arange(n)
        if n > self.max_candidates:
            rows = np.sort(rng.choice(n, size=self.max_candidates, replace=False))
        (X_pool,) = backend.compute(X[rows]) if rows.size < n or not backend.in_memory else (X,)
        landmarks, idx = _choose_landmarks(X_pool, m, self.sampler, kernel, rng)
        self.landmarks_ = landmarks
        self.landmark_indices_ = None if idx is None else rows[idx]
        return NystromFeatures.fit(kernel, landmarks)

    def fit(self, X, y=None) -> NystromKernelPCA:
        """Choose the landmarks, then the eigenpairs of the features' centred covariance.

        Parameters
        ----------
        X : array_like, Dask array or Dask DataFrame of shape (n, d)
            Finite inputs, n >= 2.
        y : ignored

        Returns
        -------
        self
        """
        validate_params(self)
        backend = backend_for(X)
        X = backend.validate(self, X)
        n = X.shape[0]
        rng = check_random_state(self.random_state)
        features = self._features(backend, X, rng)

        # a shift near the mean: the landmarks' own features (or none for random features)
        shift = (features(self.landmarks_).mean(axis=0) if self.landmarks_ is not None
                 else np.zeros(features.width))
        S, total = backend.sum_blocks(feature_moments, X,
                                      args=(backend.share(features), shift, self.memory_budget))
        offset = total / n
        S = np.triu(S) + np.triu(S, 1).T - n * np.outer(offset, offset)
        k = min(self.n_components, features.width)
        w, V = eigh(S, subset_by_index=(features.width - k, features.width - 1), check_finite=False)
        w, V = np.maximum(w[::-1], 0.0), V[:, ::-1]
        V *= np.sign(V[np.abs(V).argmax(axis=0), np.arange(k)])  # deterministic signs

        self._feature_map = features
        self.mean_ = shift + offset
        self.eigenvalues_ = w
        self._components = V
        self.n_landmarks_ = features.width if self.landmarks_ is None else self.landmarks_.shape[0]
        self._n_features_out = k
        scale = np.divide(1.0, np.sqrt(w), out=np.zeros(k), where=w > 0)
        self.eigenvectors_ = self._project(backend, X) * scale
        return self

    def _project(self, backend, X):
        return backend.map_rows(project_features, X,
                                backend.share((self._feature_map, self.mean_, self._components)),
                                self.memory_budget, columns=self._components.shape[1])

    def fit_transform(self, X, y=None):
        """Fit, then the training rows' projections ``eigenvectors_ * sqrt(eigenvalues_)``.

        Parameters
        ----------
        X : array_like, Dask array or Dask DataFrame of shape (n, d)
        y : ignored

        Returns
        -------
        ndarray of shape (n, k); a lazy Dask array for Dask X
        """
        self.fit(X)
        return self.eigenvectors_ * np.sqrt(self.eigenvalues_)

    def transform(self, X):
        r"""Projections :math:`(\varphi(x) - \mu)^\top v_j` of new rows, in row blocks.

        Parameters
        ----------
        X : array_like or Dask array of shape (n_new, d)

        Returns
        -------
        ndarray of shape (n_new, k); a lazy Dask array with X's row chunks for Dask X
        """
        check_is_fitted(self, "eigenvalues_")
        backend = backend_for(X)
        return self._project(backend, backend.validate(self, X, reset=False, min_samples=1))

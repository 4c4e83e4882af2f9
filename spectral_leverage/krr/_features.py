r"""Finite-dimensional feature maps :math:`\varphi` with :math:`\varphi(x)^\top\varphi(z) \approx k(x, z)`,
and the row-block passes that kernel PCA makes over them.

* Nyström on landmarks :math:`Z`: :math:`\varphi(x) = K_{xZ}\, U_r \Lambda_r^{-1/2}` with
  :math:`K_{ZZ} = U\Lambda U^\top` restricted to the eigenvalues above a relative threshold, so
  :math:`\Phi\Phi^\top = K_{nZ}K_{ZZ}^{+}K_{Zn}`: exact when every row is a landmark.
* random Fourier features (:func:`~spectral_leverage.krr.random_features.random_fourier_features`).

The passes are functions of one row block (the whole array in memory, one chunk on Dask) that
bound their own temporaries by ``memory_budget``: see :mod:`spectral_leverage.backends`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import eigh
from scipy.linalg.blas import dsyrk

from .._blocks import KERNEL_BYTES_PER_ENTRY, kernel_block, row_chunks
from ..kernels import StationaryKernel
from .random_features import _draw_features, _feature_map

__all__ = ["FourierFeatures", "NystromFeatures", "feature_moments", "project_features"]

_RCOND = 1e-12  # eigenvalues of K_ZZ below this fraction of the largest are dropped


@dataclass(frozen=True)
class NystromFeatures:
    """Nyström features on ``landmarks`` (m, d): ``K(X, landmarks) @ normalization``."""

    kernel: object
    landmarks: np.ndarray
    normalization: np.ndarray  # (m, r), U_r Λ_r^{-1/2}

    @classmethod
    def fit(cls, kernel, landmarks: np.ndarray) -> NystromFeatures:
        w, U = eigh(kernel(landmarks), check_finite=False)
        keep = w > _RCOND * max(float(w[-1]), 0.0)
        return cls(kernel, landmarks, U[:, keep] / np.sqrt(w[keep]))

    @property
    def width(self) -> int:
        return self.normalization.shape[1]

    def bytes_per_row(self, d: int) -> float:
        m = self.landmarks.shape[0]
        return KERNEL_BYTES_PER_ENTRY * m + 8.0 * (d + 2 * self.width)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return kernel_block(self.kernel, X, self.landmarks) @ self.normalization


@dataclass(frozen=True)
class FourierFeatures:
    """Random Fourier features: ``sqrt(2c/D) cos(X @ weights + offset)``."""

    weights: np.ndarray  # (d, D)
    offset: np.ndarray  # (D,)
    scale: float

    @classmethod
    def fit(cls, parsed: StationaryKernel, d: int, n_features: int, rng) -> FourierFeatures:
        return cls(*_draw_features(parsed, d, n_features, rng))

    @property
    def width(self) -> int:
        return self.weights.shape[1]

    def bytes_per_row(self, d: int) -> float:
        return 8.0 * (d + 3 * self.width)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return _feature_map(X, self.weights, self.offset, self.scale)


def feature_moments(X: np.ndarray, features, shift: np.ndarray,
                    memory_budget: float) -> tuple[np.ndarray, np.ndarray]:
    r"""(:math:`\sum_i (\varphi_i - s)(\varphi_i - s)^\top`, upper triangle; :math:`\sum_i (\varphi_i - s)`)
    over the rows of X, for a shift :math:`s` near the mean (it spares the centred covariance
    the cancellation of :math:`\sum\varphi\varphi^\top - n\mu\mu^\top`)."""
    r = features.width
    S = np.zeros((r, r), order="F")
    total = np.zeros(r)
    for rows in row_chunks(X.shape[0], features.bytes_per_row(X.shape[1]), memory_budget):
        Phi = features(X[rows])
        Phi -= shift
        S = dsyrk(1.0, Phi, beta=1.0, c=S, trans=1, lower=0, overwrite_c=1)
        total += Phi.sum(axis=0)
    return S, total


def project_features(X: np.ndarray, shared: tuple, memory_budget: float) -> np.ndarray:
    """``(φ(X) - mean) @ V`` in row blocks, for ``shared = (features, mean, V)``."""
    features, mean, V = shared
    out = np.empty((X.shape[0], V.shape[1]))
    bytes_per_row = features.bytes_per_row(X.shape[1]) + 8.0 * V.shape[1]
    for rows in row_chunks(X.shape[0], bytes_per_row, memory_budget):
        Phi = features(X[rows])
        Phi -= mean
        out[rows] = Phi @ V
    return out

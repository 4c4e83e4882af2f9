r"""Centre selectors: m diverse centres chosen at once, not drawn i.i.d. from scores.

What kernel and GP practitioners use for inducing points, behind the sampler interface
(:class:`~spectral_leverage.base.LeverageSampler`) so that every estimator takes them by name:

- ``"kmeans"`` (:class:`KMeansCenters`): the centres of k-means (scikit-learn ``KMeans`` from
  k-means++, one start, ten Lloyd iterations, as the landmarks of
  :class:`~spectral_leverage.krr.kernel_pca.NystromKernelPCA`). They are *not* rows of X:
  :meth:`CenterSelector.select` returns the points themselves (``NystromKRR`` uses them, with
  ``center_indices_ = None``), :meth:`CenterSelector.sample` the row nearest to each.
- ``"greedy-cholesky"`` (:class:`GreedyCholesky`): greedy conditional variance, i.e. greedy
  pivoted Cholesky (Burt, Rasmussen & van der Wilk 2020; the initialisers of RobustGP).
- ``"rp-cholesky"`` (:class:`RPCholeskyCenters`): randomly pivoted Cholesky (Chen, Epperly, Tropp &
  Webber 2023), pivots drawn by the residual diagonal.

Both Cholesky selectors run :func:`~spectral_leverage.pivoted_cholesky.rp_cholesky`; its
:math:`n' \times m` factor is kept within half of ``memory_budget`` by choosing among a uniform
subsample of :math:`n' \le n` rows when n is larger (:func:`factor_rows`).

``fit`` keeps a reference to X; the selection runs in ``sample``/``select``, for the m asked for.
``scores_`` are uniform (a selector estimates no leverage) unless a subclass says otherwise.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from scipy.spatial import cKDTree
from sklearn.cluster import KMeans
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import (
    check_random_state,
    check_samples,
    validate_params,
)
from ..kernels import resolve_kernel
from ..pivoted_cholesky import PIVOT_BLOCK, rp_cholesky
from .uniform import UniformSampler

__all__ = ["KMEANS_ITER", "CenterSelector", "GreedyCholesky", "KMeansCenters", "RPCholeskyCenters",
           "factor_rows", "kmeans_centers"]

#: Lloyd iterations of k-means: converged k-means is no better (docs/notes/kernel-pca.md)
KMEANS_ITER = 10


def kmeans_centers(X: np.ndarray, m: int, rng: np.random.Generator,
                   sample_weight: np.ndarray | None = None) -> np.ndarray:
    """Centres (m, d) of k-means on the rows of X: k-means++, one start, :data:`KMEANS_ITER` Lloyd
    iterations (scikit-learn ``KMeans``, which computes distances in row chunks).

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> kmeans_centers(X, 5, np.random.default_rng(0)).shape
    (5, 2)
    """
    model = KMeans(m, n_init=1, max_iter=KMEANS_ITER, random_state=int(rng.integers(2**31 - 1)))
    return model.fit(X, sample_weight=sample_weight).cluster_centers_


def factor_rows(n: int, m: int, memory_budget: float) -> int:
    """Rows n' <= n whose :math:`n' \\times m` float64 factor, the two :math:`n' \\times b`
    arrays of a block of b pivots (:data:`~spectral_leverage.pivoted_cholesky.PIVOT_BLOCK` at most)
    and two :math:`m \\times m` matrices fit in half of ``memory_budget`` (at least m + 1, so that
    m pivots can be found).

    Examples
    --------
    >>> factor_rows(10**6, 2000, 2**28)
    3890
    """
    room = (memory_budget / 2 - 16.0 * m * m) / (8.0 * (m + 2 * min(m, PIVOT_BLOCK)))
    return int(min(n, max(m + 1, room)))


class CenterSelector(UniformSampler):
    """Base class of the selectors: subclasses implement :meth:`select`.

    Parameters
    ----------
    kernel : sklearn kernel or None, default=None
        None is ``Matern(length_scale=1.0, nu=1.5)``.
    reg : float or None, default=1e-3
        :math:`\\lambda`; unused by the baselines (accepted so that every method shares one
        signature).
    memory_budget : int, default=1 GiB
        Bytes of the selection's temporaries.
    random_state : int, numpy Generator or None, default=None
        Default seed of :meth:`sample` and :meth:`select`.
    """

    def fit(self, X, y=None) -> CenterSelector:
        """Keep X (a reference) for the selection; uniform ``scores_``."""
        validate_params(self)
        self._X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        self._set_scores(self._fit_scores(self._X))
        if not self._estimates_leverage:
            self.effective_dimension_ = float("nan")
        return self

    def _fit_scores(self, X: np.ndarray) -> np.ndarray:
        return np.ones(X.shape[0])

    def select(self, n_samples: int, *, random_state=None,
               sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """(centres of shape (m, d), their row indices, sorted, or None when they are not rows).

        Parameters
        ----------
        n_samples : int
            Number m of centres (at most n).
        random_state : int, numpy Generator or None
            None uses the estimator's own ``random_state``.
        sample_weight : ndarray of shape (n,) or None
            Positive weights of the rows (only k-means uses them; the Cholesky selectors choose
            among the rows given, whatever their weight).
        """
        check_is_fitted(self, "_X")
        m = check_samples(n_samples)
        n = self._X.shape[0]
        if m > n:
            raise ValueError(f"n_samples={m} exceeds the {n} fitted points; ask for at most n.")
        rng = check_random_state(self.random_state if random_state is None else random_state)
        idx = self._select(self._X, m, rng, sample_weight)
        if idx.ndim == 2:  # points, not rows
            return idx, None
        idx = np.unique(idx)
        return self._X[idx], idx

    def sample(self, n_samples: int, *, replace: bool = True, random_state=None) -> np.ndarray:
        """Row indices of :meth:`select`'s centres (the nearest row to each when they are not
        rows), unique and sorted; ``replace`` is ignored (a selection never repeats a row)."""
        centres, idx = self.select(n_samples, random_state=random_state)
        if idx is None:
            idx = np.unique(cKDTree(self._X).query(centres)[1])
        return idx

    def _select(self, X, m, rng, sample_weight):  # pragma: no cover - abstract
        raise NotImplementedError


class KMeansCenters(CenterSelector):
    """k-means centres (the ``"kmeans"`` method): :func:`kmeans_centers`; not rows of X.

    Parameters are those of :class:`CenterSelector` (``kernel``, ``reg`` unused).

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(300, 2))
    >>> centres, idx = KMeansCenters(random_state=0).fit(X).select(10)
    >>> centres.shape, idx is None
    ((10, 2), True)
    """

    def _select(self, X, m, rng, sample_weight):
        return kmeans_centers(X, m, rng, sample_weight)


class _CholeskySelector(CenterSelector):
    _greedy: ClassVar[bool] = False

    def _select(self, X, m, rng, sample_weight):
        n = X.shape[0]
        rows = np.arange(n)
        n_rows = factor_rows(n, m, self.memory_budget)
        if n_rows < n:
            rows = np.sort(rng.choice(n, size=n_rows, replace=False))
        pivots, _ = rp_cholesky(X[rows], resolve_kernel(self.kernel), m, rng, greedy=self._greedy,
                                memory_budget=self.memory_budget / 2)
        return rows[pivots]


class GreedyCholesky(_CholeskySelector):
    """Greedy pivoted Cholesky centres (the ``"greedy-cholesky"`` method).

    Each pivot is the row of largest conditional variance given the pivots so far,
    :math:`\\arg\\max_i k(x_i, x_i) - K_{iP}K_{PP}^{-1}K_{Pi}`: deterministic (but for the row
    subsample when the factor would exceed ``memory_budget``), :math:`O(n m^2)` time, one kernel
    column per pivot. Parameters are those of :class:`CenterSelector` (``reg`` unused).

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> X = np.random.default_rng(0).uniform(size=(300, 2))
    >>> GreedyCholesky(RBF(0.2)).fit(X).sample(10).shape
    (10,)
    """

    _greedy: ClassVar[bool] = True


class RPCholeskyCenters(_CholeskySelector):
    """Randomly pivoted Cholesky centres (the ``"rp-cholesky"`` method): block RPCholesky
    (:func:`~spectral_leverage.pivoted_cholesky.rp_cholesky`), pivots drawn with probability
    proportional to the residual diagonal. A block's pivots are drawn together, by the residual
    before the block, so two copies of one row (or two near-duplicates) can both be chosen, rarely.
    Parameters are those of :class:`CenterSelector` (``reg`` unused).

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> X = np.random.default_rng(0).uniform(size=(300, 2))
    >>> RPCholeskyCenters(RBF(0.2), random_state=0).fit(X).sample(10).shape
    (10,)
    """

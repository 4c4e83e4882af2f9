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
- ``"adaptive-cholesky"`` (:class:`AdaptiveCholesky`): the one of those three whose Nyström KRR
  has the lowest GCV error on the target (``NystromKRR``'s default sampler in memory).

The Cholesky selectors run :func:`~spectral_leverage.pivoted_cholesky.rp_cholesky`; its
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
from sklearn.utils import check_array, check_consistent_length
from sklearn.utils.validation import check_is_fitted, validate_data

from .._blocks import DEFAULT_MEMORY_BUDGET, KERNEL_BYTES_PER_ENTRY, row_chunks
from .._validation import (
    DEFAULT_REG,
    POSITIVE,
    check_random_state,
    check_samples,
    check_target,
    validate_params,
)
from ..kernels import resolve_kernel, upper_cholesky, whitened_kernel
from ..pivoted_cholesky import PIVOT_BLOCK, rp_cholesky
from ..ridge_gcv import factor_gcv
from ._dictionary import check_kernel
from .uniform import UniformSampler

__all__ = ["KMEANS_ITER", "KMEANS_ROWS_PER_CENTER", "RACE_ROWS_PER_CENTER", "AdaptiveCholesky",
           "CenterSelector",
           "GreedyCholesky", "KMeansCenters", "RPCholeskyCenters", "factor_rows", "kmeans_centers",
           "nystrom_factor"]

#: Lloyd iterations of k-means: converged k-means is no better (docs/notes/kernel-pca.md)
KMEANS_ITER = 10
#: ``"adaptive-cholesky"``'s k-means clusters the pivotings' rows, or this many rows per centre
#: where those are fewer (every row if n is smaller): on 10⁶ rows k-means on every row took about
#: 100 of a 195 s selection at m = 1024
KMEANS_ROWS_PER_CENTER = 16
#: ``"adaptive-cholesky"`` races on all the rows or a subsample of at least this many per centre,
#: else takes k-means': on m + 1 rows (near the budget's cap) the GCV of m centres says little (on
#: CASP at m = 5792 such a race chose pivots 0.5 % worse than k-means, in 1.4 x the time)
RACE_ROWS_PER_CENTER = 4


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
        Any scikit-learn kernel object (the Cholesky selectors only evaluate it; k-means does not
        use it), checked in :meth:`fit` by :func:`~spectral_leverage.samplers._dictionary.check_kernel`
        (a string, or a negative amplitude, is refused); None is ``Matern(length_scale=1.0, nu=1.5)``.
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
        check_kernel(resolve_kernel(self.kernel), self._X)
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
        rows = self._factor_rows(X.shape[0], m, rng)
        return rows[self._pivots(X[rows], m, rng, self._greedy)[0]]

    def _factor_rows(self, n: int, m: int, rng: np.random.Generator) -> np.ndarray:
        """All n rows, or a uniform subsample of :func:`factor_rows` rows (sorted)."""
        n_rows = factor_rows(n, m, self.memory_budget)
        return np.sort(rng.choice(n, size=n_rows, replace=False)) if n_rows < n else np.arange(n)

    def _pivots(self, X, m, rng, greedy: bool) -> tuple[np.ndarray, np.ndarray]:
        """(pivots, factor) of :func:`~spectral_leverage.pivoted_cholesky.rp_cholesky` on X."""
        return rp_cholesky(X, resolve_kernel(self.kernel), m, rng, greedy=greedy,
                           memory_budget=self.memory_budget / 2)


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


class AdaptiveCholesky(_CholeskySelector):
    r"""Greedy or randomly pivoted Cholesky centres, or k-means', whichever fits the target best (the
    ``"adaptive-cholesky"`` method; ``NystromKRR``'s and ``NystromKRRCV``'s default in memory).

    Which one wins depends on the target, not only on X (docs/notes/centres.md): greedy pivoting
    covers the whole input range, boundary and sparse regions included, and wins where the target
    is smooth and little noisy (CCPP: up to 28 % lower test error than randomly pivoted Cholesky);
    randomly pivoted Cholesky follows the data's density and wins where isolated rows carry noisy
    targets (CASP, where greedy spends its pivots on outliers: up to 10 % worse); k-means' centres,
    which are not rows, won at few centres (m = 50) on two held-out sets, by 4–8 %. The three run
    for the m centres on the same rows, and each is scored by the generalised cross-validation
    error of Nyström KRR at λ on its centres (:func:`~spectral_leverage.ridge_gcv.factor_gcv`):
    the pivotings from their own factors (no kernel evaluated again), k-means from the Nyström
    factor :math:`K_{nC}T^{-1}` of its centres C (:func:`nystrom_factor`). The lowest wins.
    A pilot with fewer centres is not enough: at short length scales the better pivoting at m/4
    pivots is not the better one at m. The pivots are chosen, and all three candidates
    scored, on the rows of :func:`factor_rows` (every row while the n × m factor fits in half of
    ``memory_budget``, else a uniform subsample); k-means clusters the same rows, or
    :data:`KMEANS_ROWS_PER_CENTER` per centre where they are fewer. The cost is the two
    pivotings, :math:`O(n' m^2)` each for n' such rows, k-means (:math:`O(n' m d)` a Lloyd
    iteration), k-means' factor on the n' rows (:math:`O(n' m^2)`) and three :math:`m \times m`
    Cholesky factors; the budget bounds :math:`n' m`. At many centres k-means was the best or
    within 0.25 % of it on CCPP and CASP, but on a design with a rare mode (0.1 % of 10⁶ rows far
    from the rest) it gave that mode 3 of 1024 centres and a 29 % higher test RMSE than greedy
    pivoting, which gave it 14 (docs/notes/centres.md): the race runs at any m, on every row or
    on a subsample of at least :data:`RACE_ROWS_PER_CENTER` rows per centre; with fewer (many
    centres in a small budget) the centres are k-means'.

    ``fit(X, y)`` is its use inside ``NystromKRR``; without y (``fit(X)``, an unsupervised use) it
    is greedy pivoting: of the two pivotings, the smaller worst loss in the measurements above.

    Parameters
    ----------
    kernel : sklearn kernel or None, default=None
        None is ``Matern(length_scale=1.0, nu=1.5)``.
    reg : float, default=1e-3
        :math:`\lambda > 0` of the scoring (that of the estimator it serves).
    fit_intercept : bool, default=True
        Whether the scored Nyström KRR has an unpenalised intercept (``NystromKRR`` sets its own).
    memory_budget : int, default=1 GiB
        Bytes of the selection's temporaries: each factor is kept within half of it by choosing
        among a uniform subsample of rows (:func:`factor_rows`), the same for all three.
    random_state : int, numpy Generator or None, default=None
        Default seed of :meth:`sample` and :meth:`select`.

    Attributes
    ----------
    pivoting_ : {"greedy", "random", "kmeans"}
        The candidate of the last selection (``"kmeans"``: :meth:`select` returns points, not rows,
        and :meth:`sample` the row nearest to each).
    gcv_errors_ : dict
        The GCV error of each candidate in the last selection (``{"greedy": ..., "random": ...,
        "kmeans": ...}``, in y's units squared; the choice is made on y divided by its largest
        magnitude, so that it does not depend on y's scale); empty when there was no race.

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(400, 2))
    >>> y = np.sin(6 * X[:, 0]) + 0.1 * rng.normal(size=400)
    >>> selector = AdaptiveCholesky(RBF(0.2), 1e-4, random_state=0).fit(X, y)
    >>> selector.sample(40).shape, selector.pivoting_ in ("greedy", "random", "kmeans")
    ((40,), True)
    """

    _uses_target: ClassVar[bool] = True
    _parameter_constraints: ClassVar[dict] = {
        **CenterSelector._parameter_constraints,
        "reg": POSITIVE,
        "fit_intercept": ["boolean"],
    }

    def __init__(self, kernel=None, reg=DEFAULT_REG, *, fit_intercept: bool = True,
                 memory_budget: int = DEFAULT_MEMORY_BUDGET, random_state=None):
        super().__init__(kernel, reg, memory_budget=memory_budget, random_state=random_state)
        self.fit_intercept = fit_intercept

    def fit(self, X, y=None) -> AdaptiveCholesky:
        """Keep X and y (references) for the selection; uniform ``scores_``.

        Parameters
        ----------
        X : array_like of shape (n, d)
        y : array_like of shape (n,) or (n, t), or None
            Finite targets; None selects by greedy pivoting.
        """
        super().fit(X)
        self._y = None
        if y is not None:
            y = check_array(check_target(y), ensure_2d=False, dtype=np.float64, input_name="y")
            check_consistent_length(self._X, y)
            self._y = y
        return self

    def _select(self, X, m, rng, sample_weight):
        self.gcv_errors_ = {}
        rows = self._factor_rows(X.shape[0], m, rng)
        if self._y is None or m >= rows.size:
            self.pivoting_ = "greedy"
            return rows[self._pivots(X[rows], m, rng, True)[0]]
        clustered = self._kmeans_rows(X.shape[0], m, rows, rng)
        if rows.size < min(X.shape[0], RACE_ROWS_PER_CENTER * m):
            self.pivoting_ = "kmeans"  # too few rows to score m centres on
            w = None if sample_weight is None else sample_weight[clustered]
            return kmeans_centers(X[clustered], m, rng, w)
        w = None if sample_weight is None else sample_weight[rows]
        y = self._y[rows]
        peak = float(np.max(np.abs(y), initial=0.0)) or 1.0  # y / peak: no squares under- or overflow
        chosen, errors = {}, {}
        for name in ("greedy", "random", "kmeans"):
            chosen[name], F = self._candidate(name, X, rows, clustered, m, rng, sample_weight)
            errors[name] = factor_gcv(F.T, y / peak, self.reg, w, self.fit_intercept,
                                      memory_budget=self.memory_budget / 4)
            del F  # one factor at a time within the budget
        self.pivoting_ = min(errors, key=errors.get)
        with np.errstate(over="ignore", under="ignore"):
            self.gcv_errors_ = {name: error * np.float64(peak) ** 2 for name, error in errors.items()}
        best = chosen[self.pivoting_]
        return best if best.ndim == 2 else rows[best]

    @staticmethod
    def _kmeans_rows(n: int, m: int, rows: np.ndarray, rng) -> np.ndarray:
        """The rows k-means clusters: the pivotings' ``rows``, or more of them where those are fewer
        than :data:`KMEANS_ROWS_PER_CENTER` per centre (near the budget's most centres, n' falls to
        m + 1: k-means on them would return the rows themselves)."""
        wanted = min(n, KMEANS_ROWS_PER_CENTER * m)
        if rows.size >= wanted:
            return rows
        return np.arange(n) if wanted == n else np.sort(rng.choice(n, size=wanted, replace=False))

    def _candidate(self, name: str, X, rows, clustered, m, rng,
                   sample_weight) -> tuple[np.ndarray, np.ndarray]:
        """(pivots among ``X[rows]``, or k-means' centres (m, d) of ``X[clustered]``; the Nyström
        factor of ``X[rows]`` on them)."""
        if name != "kmeans":
            return self._pivots(X[rows], m, rng, name == "greedy")
        w = None if sample_weight is None else sample_weight[clustered]
        centres = kmeans_centers(X[clustered], m, rng, w)
        return centres, nystrom_factor(X[rows], resolve_kernel(self.kernel), centres,
                                       self.memory_budget / 2)


def nystrom_factor(X: np.ndarray, kernel, centres: np.ndarray, memory_budget: float) -> np.ndarray:
    r"""F (n, m) with :math:`FF^\top = K_{nC}(K_{CC} + \varepsilon I)^{-1}K_{Cn}`:
    :math:`F = K_{nC}T^{-1}`, T the upper Cholesky factor of :func:`~spectral_leverage.kernels.
    upper_cholesky` (the jitter ε of every Nyström fit on centres C, so that the GCV scored here is
    that of ``NystromKRR`` on them): the factor pivoted Cholesky would give on pivots C, for
    centres that are not rows. Kernel blocks of rows sized by ``memory_budget`` (the (n, m)
    result comes on top).

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> X = np.random.default_rng(0).normal(size=(50, 2))
    >>> F = nystrom_factor(X, RBF(), X[:5] + 0.1, 2**20)
    >>> F.shape
    (50, 5)
    """
    T = upper_cholesky(kernel(centres))[0]
    F = np.empty((X.shape[0], centres.shape[0]))
    for rows in row_chunks(X.shape[0], KERNEL_BYTES_PER_ENTRY * centres.shape[0], memory_budget):
        F[rows] = whitened_kernel(kernel, X[rows], centres, T).T
    return F

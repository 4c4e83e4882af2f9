r"""k-nearest-neighbour density with a volume term in a chosen (intrinsic) dimension."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from pykdtree.kdtree import KDTree
from scipy.special import gammaln
from sklearn.base import BaseEstimator
from sklearn.utils.validation import validate_data

from .._blocks import DEFAULT_MEMORY_BUDGET, progress, row_chunks
from .._validation import (
    MEMORY_BUDGET,
    POSITIVE_INT,
    RANDOM_STATE,
    NumericInterval,
    check_density_range,
    check_fitted_data,
    validate_params,
)
from ._tree_pickling import _RebuildsTree
from .bandwidth import _anchor_indices

__all__ = ["KNNDensity"]


class KNNDensity(_RebuildsTree, BaseEstimator):
    r"""k-nearest-neighbour density with a volume term in a chosen (intrinsic) dimension.

    :math:`\hat p(x) = (k - 1) / (m\,V_{d'}\,r_k(x)^{d'})`, with :math:`r_k(x)` the distance
    from x to its k-th nearest tree point, :math:`V_{d'} = \pi^{d'/2}/\Gamma(d'/2 + 1)` and m the
    tree size. A row of the fitted data (``training=True``) that lies on a tree point gets the
    density of the other m - 1 tree points: its own point is not its neighbour. That is every row
    when the tree holds them all; when it is a subsample, its rows would otherwise read about
    k/(k - 1) higher than the others. A bitwise copy of a tree point is taken as that point.
    This is a density with respect to :math:`d'`-dimensional volume on the set the data lie near;
    its bandwidth adapts to the local density, which suits real data whose density varies by
    orders of magnitude.

    Parameters
    ----------
    dim : float or None, default=None
        The dimension :math:`d' \ge 1` of the volume term; None is the number of features.
    n_neighbors : int, default=50
    max_samples : int or None, default=16384
        Tree on a random subsample of at most this many points (None: every point).
    memory_budget : int, default=1 GiB
    random_state : int, numpy Generator or None
    verbose : bool, default=False

    Attributes
    ----------
    dim_ : float
        The dimension :math:`d'` used.
    n_tree_ : int
        Points in the tree.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(size=(4000, 2))
    >>> p = KNNDensity(dim=2).fit(X).density(X)
    >>> bool(0.8 < np.median(p) < 1.2)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "dim": [NumericInterval(Real, 1, None, closed="left"), None],
        "n_neighbors": POSITIVE_INT,
        "max_samples": [NumericInterval(Integral, 1, None, closed="left"), None],
        "memory_budget": MEMORY_BUDGET,
        "random_state": RANDOM_STATE,
        "verbose": ["boolean"],
    }

    def __init__(self, dim: float | None = None, *, n_neighbors: int = 50, max_samples: int | None = 2**14,
                 memory_budget: int = DEFAULT_MEMORY_BUDGET, random_state=None, verbose: bool = False):
        self.dim = dim
        self.n_neighbors = n_neighbors
        self.max_samples = max_samples
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y=None) -> KNNDensity:
        """Build the KD-tree on X (or a random subsample)."""
        validate_params(self)
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        check_density_range(X)
        self.dim_ = float(X.shape[1] if self.dim is None else self.dim)
        n = X.shape[0]
        anchors = _anchor_indices(n, self.max_samples, self.random_state)
        if anchors is not None:
            X = X[anchors]
        self.n_tree_ = X.shape[0]
        self.n_features_in_ = X.shape[1]
        self._training = X
        self._tree = KDTree(np.ascontiguousarray(X))
        return self

    def log_density(self, X, *, training: bool = False) -> np.ndarray:
        """Log-density at the rows of X; ``training=True`` when X are rows of the data passed to
        ``fit``: a row on a tree point is the density of the other tree points."""
        X = check_fitted_data(self, X, fitted_attribute="n_tree_")
        found = self._kth_neighbour(X, training)
        positive = found[found[:, 0] > 0, 0]
        # more than k duplicates of a point leave r_k = 0: use the smallest positive radius seen
        return self._log_density_at(found, positive.min() if positive.size else None, training)

    def _neighbours(self, training: bool) -> int:
        """Neighbours k of the volume term (fewer where the tree holds k or fewer other points)."""
        return min(self.n_neighbors, self.n_tree_ - int(training))

    def _kth_neighbour(self, X: np.ndarray, training: bool) -> np.ndarray:
        """(radius, others) per (validated) row of X, shape (n, 2): the distance to its k-th
        nearest tree point and the tree points counted, m; with ``training`` a row at distance 0
        from a tree point is that point, so its radius is the k-th among the other m - 1."""
        k = self._neighbours(training)
        skip = int(training)
        found = np.empty((X.shape[0], 2))
        chunks = list(row_chunks(X.shape[0], 16.0 * (k + skip), self.memory_budget))
        for rows in progress(chunks, verbose=self.verbose, desc="density", unit="chunk"):
            dist, _ = self._tree.query(np.ascontiguousarray(X[rows]), k=k + skip)
            dist = dist.reshape(-1, k + skip)
            on = dist[:, 0] == 0 if training else np.zeros(len(dist), dtype=bool)
            found[rows, 0] = np.where(on, dist[:, -1], dist[:, k - 1])
            found[rows, 1] = self.n_tree_ - on
        return found

    def _log_density_at(self, found: np.ndarray, floor: float | None, training: bool) -> np.ndarray:
        """Log-density from :meth:`_kth_neighbour`'s (radius, others) for the same ``training``, the
        radius raised to ``floor`` (the batch's smallest positive radius; None when it has none)."""
        k = self._neighbours(training)
        dim = self.dim_
        if floor is None:  # every row a copy of another: 1e-12 of the spread, less close in high
            # dimension, where its dim-th power would take the density past float64 (d = 26: inf)
            floor = 10.0 ** -min(12.0, 250.0 / dim) * max(float(np.ptp(self._training)), 1.0)
        radius = np.maximum(found[:, 0], floor)
        log_volume = 0.5 * dim * np.log(np.pi) - gammaln(0.5 * dim + 1)
        return np.log(max(k - 1, 1)) - np.log(found[:, 1]) - log_volume - dim * np.log(radius)

    def density(self, X, *, training: bool = False) -> np.ndarray:
        """Density at the rows of X (see :meth:`log_density`)."""
        return np.exp(self.log_density(X, training=training))

    def _rebuild_tree(self) -> None:
        if getattr(self, "_training", None) is not None:
            self._tree = KDTree(np.ascontiguousarray(self._training))

"""The protocol every leverage-score sampler follows.

A sampler is a scikit-learn estimator whose ``fit(X)`` sets ``scores_``, the rescaled ridge leverage
scores :math:`n\\,l_i` (absolute scale: ``scores_.sum() / n`` estimates the effective dimension
:math:`d_\\mathrm{eff} = \\sum_i l_i`). From them follow ``leverage_`` (:math:`l_i`),
``probabilities_`` (summing to 1), ``effective_dimension_`` and :meth:`LeverageSampler.sample`.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ._validation import check_random_state, check_samples, is_dask_collection

__all__ = ["LeverageSampler"]

_SEGMENT = 2**16  # rows per segment of the two-level inverse-CDF sampling


def _segment_totals(scores: np.ndarray) -> np.ndarray:
    """Left-to-right sums of consecutive segments of ``_SEGMENT`` scores.

    Sequential summation makes each total depend only on its segment's values, so a distributed
    array cut at segment boundaries gives bit-identical totals."""
    return np.array([np.add.accumulate(scores[start:start + _SEGMENT])[-1]
                     for start in range(0, scores.shape[0], _SEGMENT)])


def _split_draws(totals: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First level of inverse-CDF sampling: for uniforms ``u`` in [0, 1), the segment each draw
    falls in and the remaining mass to walk inside it."""
    cumulative = np.cumsum(totals)
    target = u * cumulative[-1]
    last = np.flatnonzero(totals > 0)[-1]  # rounding can reach the end: stay on positive mass
    segment = np.minimum(np.searchsorted(cumulative, target, side="right"), last)
    residual = target - np.where(segment > 0, cumulative[segment - 1], 0.0)
    return segment, residual


def _locate(scores: np.ndarray, first_segment: int, segment: np.ndarray,
            residual: np.ndarray) -> np.ndarray:
    """Second level: row of each draw within ``scores``, which starts at segment ``first_segment``
    (rows are relative to ``scores[0]``). Zero scores are never drawn."""
    out = np.empty(segment.shape[0], dtype=np.intp)
    for seg in np.unique(segment):
        start = (int(seg) - first_segment) * _SEGMENT
        values = scores[start:start + _SEGMENT]
        draws = segment == seg
        row = np.searchsorted(np.add.accumulate(values), residual[draws], side="right")
        out[draws] = start + np.minimum(row, np.flatnonzero(values > 0)[-1])
    return out


class LeverageSampler(BaseEstimator):
    """Base class: subclasses implement ``fit`` and finish it with ``self._set_scores(scores)``,
    which sets the attributes below.

    Attributes
    ----------
    scores_ : ndarray of shape (n,)
        Rescaled leverage scores, :math:`\\approx n\\,l_i`.
    leverage_ : ndarray of shape (n,)
        :math:`\\approx l_i = [K(K + n\\lambda I)^{-1}]_{ii}`.
    probabilities_ : ndarray of shape (n,)
        ``scores_ / scores_.sum()``: the sampling distribution.
    effective_dimension_ : float
        :math:`\\approx \\sum_i l_i`.
    n_features_in_ : int

    Examples
    --------
    A sampler of one's own only computes scores; the rest comes from the base class:

    >>> import numpy as np
    >>> class Distance(LeverageSampler):
    ...     def fit(self, X, y=None):
    ...         self.n_features_in_ = X.shape[1]
    ...         self._set_scores(np.linalg.norm(X, axis=1))
    ...         return self
    >>> sampler = Distance().fit(np.array([[0.0, 1.0], [3.0, 4.0]]))
    >>> sampler.probabilities_.tolist(), sampler.effective_dimension_
    ([0.16666666666666666, 0.8333333333333334], 3.0)
    >>> sampler.sample(3, random_state=0).shape
    (3,)
    """

    def _set_scores(self, scores: np.ndarray) -> None:
        scores = np.asarray(scores, dtype=float)
        if not np.all(np.isfinite(scores)) or np.any(scores < 0) or not scores.sum() > 0:
            raise RuntimeError(
                f"{type(self).__name__} produced invalid scores (non-finite, negative or all zero); "
                "please report this with the data's shape and the kernel."
            )
        n = scores.shape[0]
        self.scores_ = scores
        self.leverage_ = scores / n
        self.probabilities_ = scores / scores.sum()
        self.effective_dimension_ = float(scores.sum() / n)

    def sample(self, n_samples: int, *, replace: bool = True, random_state=None) -> np.ndarray:
        """Draw indices with probabilities ``probabilities_``.

        Parameters
        ----------
        n_samples : int
            Number of draws, >= 1 (at most n when ``replace=False``).
        replace : bool, default=True
            With replacement (the i.i.d. scheme of the Nyström theory); indices may repeat. Drawn by
            inverse CDF of the scores, so a Dask-fitted estimator draws the same indices.
        random_state : int, numpy Generator or None
            None uses the estimator's own ``random_state``.

        Returns
        -------
        ndarray of int, shape (n_samples,)
        """
        check_is_fitted(self, "scores_")
        if is_dask_collection(self.scores_):
            from .distributed import sample_indices

            return sample_indices(self, n_samples, replace=replace, random_state=random_state)
        n_samples = check_samples(n_samples)
        n = self.scores_.shape[0]
        if not replace and n_samples > n:
            raise ValueError(
                f"n_samples={n_samples} exceeds the {n} fitted points; use replace=True or fewer."
            )
        if not replace:
            n_positive = int(np.count_nonzero(self.probabilities_))
            if n_samples > n_positive:
                raise ValueError(
                    f"n_samples={n_samples} exceeds the {n_positive} points of non-zero probability "
                    "(replace=False)."
                )
        rng = check_random_state(self.random_state if random_state is None else random_state)
        if not replace:
            return rng.choice(n, size=n_samples, replace=False, p=self.probabilities_)
        # inverse CDF in two levels (segments, then rows): the same draws on a Dask cluster
        segment, residual = _split_draws(_segment_totals(self.scores_), rng.random(n_samples))
        return _locate(self.scores_, 0, segment, residual)

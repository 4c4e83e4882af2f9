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

from ._validation import check_random_state, check_samples

__all__ = ["LeverageSampler"]


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
            With replacement (the i.i.d. scheme of the Nyström theory); indices may repeat.
        random_state : int, numpy Generator or None
            None uses the estimator's own ``random_state``.

        Returns
        -------
        ndarray of int, shape (n_samples,)
        """
        check_is_fitted(self, "scores_")
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
        return rng.choice(n, size=n_samples, replace=replace, p=self.probabilities_)

"""The protocol every leverage-score sampler follows.

A sampler is a scikit-learn estimator whose ``fit(X)`` sets ``scores_``, the rescaled ridge leverage
scores :math:`n\\,l_i` (absolute scale: ``scores_.sum() / n`` estimates the effective dimension
:math:`d_\\mathrm{eff} = \\sum_i l_i`). From them follow ``leverage_`` (:math:`l_i`),
``probabilities_`` (summing to 1), ``effective_dimension_`` and :meth:`LeverageSampler.sample`.
"""

from __future__ import annotations

import warnings
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ._validation import check_random_state, check_samples
from .backends import backend_for
from .kernels import parse_kernel, resolve_kernel

__all__ = ["LeverageSampler"]

#: an effective dimension over this fraction of the isolated point's bound warns (nearly every
#: point alone: every score about the same constant)
ISOLATED = 0.9


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

    #: whether ``fit`` estimates leverage, so that a degenerate effective dimension is worth a warning
    _estimates_leverage: ClassVar[bool] = True

    def _set_scores(self, scores) -> None:
        """Set the attributes from the scores (a NumPy array, or lazy on the Dask backend)."""
        backend = backend_for(scores)
        scores, (low, high, total), self._sampling_state = backend.summarise_scores(scores)
        if not (np.isfinite(high) and low >= 0 and total > 0):
            raise RuntimeError(
                f"{type(self).__name__} produced invalid scores (non-finite, negative or all zero); "
                "please report this with the data's shape and the kernel."
            )
        n = scores.shape[0]
        self.scores_ = scores
        self.leverage_ = scores / n
        self.probabilities_ = scores / total
        self.effective_dimension_ = float(total / n)
        if self._estimates_leverage:
            self._warn_if_degenerate(n)

    def _warn_if_degenerate(self, n: int) -> None:
        """Warn, naming the fix, where the scores say little about the data: nearly every point
        isolated (the effective dimension near the isolated point's bound n c / (c + n λ), c = k(0)),
        an effective dimension of at least n/2 (λ or the length scale far too small), or of at most
        1 (the kernel sees the data as one point)."""
        d_eff, reg = self.effective_dimension_, getattr(self, "reg", None)
        try:
            amplitude = parse_kernel(resolve_kernel(getattr(self, "kernel", None))).amplitude
        except TypeError:  # another scikit-learn kernel (the dictionary samplers take any)
            amplitude = None
        cap = n * amplitude / (amplitude + n * reg) if amplitude and reg else float(n)
        if d_eff > ISOLATED * cap:
            message = (f"the effective dimension {d_eff:.4g} is over {ISOLATED:.0%} of the bound "
                       f"{cap:.4g} of an isolated point's score: most points are isolated at this length "
                       "scale and the scores say little; standardise X (and drop a target column), or "
                       "use a longer length scale.")
        elif d_eff >= n / 2:
            message = (f"the effective dimension {d_eff:.4g} is at least half of n = {n}: the kernel "
                       "resolves nearly every point and the scores are almost uniform; use a larger reg "
                       "or a longer length scale (on standardised X).")
        elif d_eff <= 1:
            message = (f"the effective dimension {d_eff:.4g} is at most 1: the kernel sees the data as "
                       "about one point and the scores say little; use a smaller reg or a shorter "
                       "length scale (on standardised X).")
        else:
            return
        warnings.warn(message, UserWarning, stacklevel=4)

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
        n_samples = check_samples(n_samples)
        backend = backend_for(self.scores_)
        rng = check_random_state(self.random_state if random_state is None else random_state)
        if replace:
            return backend.draw(self.scores_, self._sampling_state, rng.random(n_samples))
        backend.require_in_memory("sample(replace=False)", "draw with replace=True and de-duplicate "
                                  "(as NystromKRR does), or fit on an in-memory array")
        n = self.scores_.shape[0]
        if n_samples > n:
            raise ValueError(
                f"n_samples={n_samples} exceeds the {n} fitted points; use replace=True or fewer."
            )
        n_positive = int(np.count_nonzero(self.probabilities_))
        if n_samples > n_positive:
            raise ValueError(
                f"n_samples={n_samples} exceeds the {n_positive} points of non-zero probability "
                "(replace=False)."
            )
        return rng.choice(n, size=n_samples, replace=False, p=self.probabilities_)

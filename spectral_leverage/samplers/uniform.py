"""Uniform sampling: the baseline every leverage method must beat (scikit-learn's ``Nystroem``)."""

from __future__ import annotations

import numpy as np

from .._validation import check_data
from ..base import LeverageSampler

__all__ = ["UniformSampler"]


class UniformSampler(LeverageSampler):
    """Every point equally likely (the ``"uniform"`` method).

    It estimates no leverage: ``scores_`` are all 1 and ``effective_dimension_`` is NaN.
    ``kernel`` and ``reg`` are accepted, and ignored, so that every method shares one signature.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.zeros((10, 2))
    >>> UniformSampler().fit(X).probabilities_[:3]
    array([0.1, 0.1, 0.1])
    """

    def __init__(self, kernel=None, reg=None, *, random_state=None):
        self.kernel = kernel
        self.reg = reg
        self.random_state = random_state

    def fit(self, X, y=None) -> UniformSampler:
        """Set uniform probabilities over the rows of X."""
        X = check_data(X)
        self.n_features_in_ = X.shape[1]
        self._set_scores(np.ones(X.shape[0]))
        self.effective_dimension_ = float("nan")
        return self

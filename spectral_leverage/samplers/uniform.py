"""Uniform sampling: the baseline every leverage method must beat (scikit-learn's ``Nystroem``)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.utils.validation import validate_data

from .._blocks import DEFAULT_MEMORY_BUDGET
from .._validation import DEFAULT_REG, KERNEL, MEMORY_BUDGET, POSITIVE, RANDOM_STATE, validate_params
from ..base import LeverageSampler

__all__ = ["UniformSampler"]


class UniformSampler(LeverageSampler):
    """Every point equally likely (the ``"uniform"`` method).

    It estimates no leverage: ``scores_`` are all 1 and ``effective_dimension_`` is NaN.
    ``kernel``, ``reg`` and ``memory_budget`` are accepted, and ignored, so that every method shares
    one signature (the scores take O(n) memory, within any budget).

    Parameters
    ----------
    kernel : sklearn kernel or None, default=None
        Ignored.
    reg : float or None, default=1e-3
        Ignored (None is accepted too).
    memory_budget : int, default=1 GiB
        Ignored.
    random_state : int, numpy Generator or None, default=None
        Default seed of :meth:`sample`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.zeros((10, 2))
    >>> UniformSampler().fit(X).probabilities_[:3]
    array([0.1, 0.1, 0.1])
    """

    _estimates_leverage: ClassVar[bool] = False
    _parameter_constraints: ClassVar[dict] = {
        "kernel": KERNEL,
        "reg": [*POSITIVE, None],
        "memory_budget": MEMORY_BUDGET,
        "random_state": RANDOM_STATE,
    }

    def __init__(self, kernel=None, reg=DEFAULT_REG, *, memory_budget: int = DEFAULT_MEMORY_BUDGET,
                 random_state=None):
        self.kernel = kernel
        self.reg = reg
        self.memory_budget = memory_budget
        self.random_state = random_state

    def fit(self, X, y=None) -> UniformSampler:
        """Set uniform probabilities over the rows of X."""
        validate_params(self)
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        self._set_scores(np.ones(X.shape[0]))
        self.effective_dimension_ = float("nan")
        return self

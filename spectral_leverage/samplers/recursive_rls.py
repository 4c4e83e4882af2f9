r"""Recursive ridge leverage score sampling (Musco & Musco, NeurIPS 2017)."""

from __future__ import annotations

from numbers import Real
from typing import ClassVar

import numpy as np
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import validate_data

from .._blocks import DEFAULT_MEMORY_BUDGET
from .._validation import (
    DEFAULT_REG,
    KERNEL,
    MEMORY_BUDGET,
    POSITIVE,
    POSITIVE_INT,
    RANDOM_STATE,
    NumericInterval,
    check_positive,
    check_random_state,
    validate_params,
)
from ..base import LeverageSampler
from ..kernels import resolve_kernel
from ._dictionary import SCORINGS, check_dictionary_fits, check_kernel, dictionary_scores, weighted_rls

__all__ = ["RecursiveRLS"]


class RecursiveRLS(LeverageSampler):
    r"""Recursive-RLS leverage scores by recursive halving (the ``"recursive-rls"`` method).

    Musco & Musco, "Recursive sampling for the Nyström method", NeurIPS 2017 (reference code
    ``cnmusco/recursive-nystrom``), whose ridge parameter is :math:`\lambda_\mathrm{MM} = n\lambda`.
    A random permutation defines nested uniform subsets of sizes :math:`n, \lceil n/2\rceil, \dots`
    down to at most ``sample_size`` = s points, which are the base dictionary (weight 1). Going
    back up, each level scores its points with the weighted-dictionary estimator
    (:func:`~spectral_leverage.samplers._dictionary.weighted_rls`) built from the level below and
    keeps each point independently with probability
    :math:`p_i = \min(1, \text{oversampling}\cdot\tilde l_i)` (weight :math:`1/p_i`). At level 0
    (all n points) the multiplier is raised, if needed, so that at least s centres are expected
    (the reference code's last level draws s centres); that sample is the final dictionary, from
    which the scores of all n points are computed. ``scores_`` are :math:`n\,\tilde l_i` on the
    scale of :class:`~spectral_leverage.base.LeverageSampler`.

    Parameters
    ----------
    kernel : sklearn kernel or None, default=None
        Any scikit-learn kernel with ``diag``; None is ``Matern(length_scale=1.0, nu=1.5)``.
    reg : float, default=1e-3
        :math:`\lambda > 0`.
    sample_size : int or None, default=None
        s: the size of the base uniform sample, which fixes the number of levels
        :math:`\lceil \log_2(n/s) \rceil`. None uses :math:`s = \lceil\sqrt n\rceil` (the reference
        code's default). With s >= n every point is kept and the scores are exact.
    oversampling : float or None, default=None
        Multiplier (>= 1, finite) of the estimated leverage in the Bernoulli probabilities. None
        uses :math:`\log s` (the reference code's default), floored at 1.
    scoring : {"nystrom", "weighted"}, default="nystrom"
        Final estimator of the n scores from the dictionary
        (:func:`~spectral_leverage.samplers._dictionary.dictionary_scores`). With few centres per
        effective dimension ``"weighted"`` ranks points better (see the design notes).
    memory_budget : int, default=1 GiB
        Bytes for the dictionary's m×m factors and the row blocks of its passes over X. A
        dictionary that outgrows it stops the fit with a ValueError naming the budget that would do
        (see :func:`~spectral_leverage.samplers._dictionary.plan_blocks`).
    random_state : int, numpy Generator or None, default=None
        Seeds the permutation and the Bernoulli draws.

    Attributes
    ----------
    dictionary_indices_ : ndarray of int
        The final dictionary's points, sorted.
    dictionary_probabilities_ : ndarray
        Their inclusion probabilities :math:`p_j` in the final draw.

    Notes
    -----
    With fixed :math:`\lambda` each level keeps about oversampling · :math:`d_\mathrm{eff}` points
    (m in expectation), so the time is :math:`O(n m^2)` (geometric over the levels, dominated by
    the final pass over all n points) and memory :math:`O(b m + m^2)` with row blocks of b rows.

    A level-(l+1) dictionary scores level l with the weights :math:`1/p_j` it got in the uniform
    half it was sampled from, as in the paper (Algorithm 2 composes an unweighted uniform half with
    the recursive sample) and the reference code: the estimates approximate leverage scores
    relative to the half, upper bounds on those relative to level l (leverage scores only shrink as
    points are added); rescaling them by the size ratio would drop that margin. The final
    dictionary is sampled from all n points, so its probabilities are exact inclusion
    probabilities and its scores keep the absolute scale of :math:`l_i`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> X = np.random.default_rng(0).uniform(size=(1000, 1))
    >>> rrls = RecursiveRLS(Matern(0.5, nu=1.5), reg=1e-3, random_state=0).fit(X)
    >>> rrls.scores_.shape, rrls.sample(5).shape
    ((1000,), (5,))
    """

    _parameter_constraints: ClassVar[dict] = {
        "kernel": KERNEL,
        "reg": POSITIVE,
        "sample_size": [*POSITIVE_INT, None],
        "oversampling": [NumericInterval(Real, 1, None, closed="left"), None],
        "scoring": [StrOptions(set(SCORINGS))],
        "memory_budget": MEMORY_BUDGET,
        "random_state": RANDOM_STATE,
    }

    def __init__(self, kernel=None, reg: float = DEFAULT_REG, *, sample_size=None, oversampling=None,
                 scoring="nystrom", memory_budget: int = DEFAULT_MEMORY_BUDGET, random_state=None):
        self.kernel = kernel
        self.reg = reg
        self.sample_size = sample_size
        self.oversampling = oversampling
        self.scoring = scoring
        self.memory_budget = memory_budget
        self.random_state = random_state

    def fit(self, X, y=None) -> RecursiveRLS:
        """Run the recursion; set ``scores_`` (≈ n·l_i), ``dictionary_indices_``,
        ``dictionary_probabilities_`` and ``n_features_in_``."""
        validate_params(self)
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        kernel = check_kernel(resolve_kernel(self.kernel), X)
        reg = check_positive(self.reg, "reg")  # the constraints admit inf
        n = X.shape[0]
        check_dictionary_fits(X, kernel, reg, self.memory_budget, "RecursiveRLS")
        s = int(np.ceil(np.sqrt(n))) if self.sample_size is None else int(self.sample_size)
        if self.oversampling is None:
            oversamp = max(1.0, float(np.log(s)))
        else:
            oversamp = check_positive(self.oversampling, "oversampling")
        rng = check_random_state(self.random_state)
        gamma = n * reg
        diag = kernel.diag(X)

        sizes = [n]
        while sizes[-1] > s:
            sizes.append((sizes[-1] + 1) // 2)
        perm = rng.permutation(n)
        # Base level: a uniform sample of sizes[-1] points, kept with probability 1.
        dict_pos = np.arange(sizes[-1])  # positions in perm
        dict_probs = np.ones(sizes[-1])
        for level in range(len(sizes) - 2, -1, -1):
            size = sizes[level]
            idx = perm[:size]
            # Weights 1/p_j as sampled from the level below (the uniform half), not rescaled to this
            # level: the estimates are leverage scores relative to the half, upper bounds (see Notes).
            lev = weighted_rls(X[idx], kernel, X[perm[dict_pos]], dict_probs, gamma, diag=diag[idx],
                               memory_budget=self.memory_budget)
            factor = oversamp
            if level == 0:  # the reference code's last level keeps s centres: at least s expected
                factor = max(oversamp, s / lev.sum())
            p = np.minimum(1.0, factor * lev)
            keep = rng.random(size) < p
            if not keep.any():  # vanishingly rare: fall back to a uniform sample of s points
                keep[rng.choice(size, size=min(s, size), replace=False)] = True
                p = np.full(size, min(s, size) / size)
            dict_pos, dict_probs = np.flatnonzero(keep), p[keep]

        centres = perm[dict_pos]
        order = np.argsort(centres)
        self.dictionary_indices_ = centres[order]
        self.dictionary_probabilities_ = dict_probs[order]
        scores = dictionary_scores(X, kernel, X[centres], dict_probs, gamma, self.scoring, diag=diag,
                                   memory_budget=self.memory_budget)
        self._set_scores(n * scores)
        return self

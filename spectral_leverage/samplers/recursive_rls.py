r"""Recursive ridge leverage score sampling (Musco & Musco, NeurIPS 2017)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_scalar

from .._validation import check_data, check_positive, check_random_state
from ..base import LeverageSampler
from ._dictionary import check_kernel, check_scoring, dictionary_scores, weighted_rls

__all__ = ["RecursiveRLS"]


class RecursiveRLS(LeverageSampler):
    r"""Recursive-RLS leverage scores by recursive halving (the ``"recursive-rls"`` method).

    Conventions: :math:`l_i = [K(K + n\lambda I)^{-1}]_{ii}` with :math:`\lambda` = ``reg``;
    ``scores_`` are :math:`n\,\tilde l_i`. The paper's ridge parameter is on the un-normalised
    kernel scale: :math:`\lambda_\mathrm{MM} = n\lambda`.

    Algorithm (Musco & Musco, "Recursive sampling for the Nyström method", NeurIPS 2017; reference
    code ``cnmusco/recursive-nystrom``): a random permutation defines nested uniform subsets of
    sizes :math:`n, \lceil n/2\rceil, \dots` down to at most ``sample_size`` = s points, which are
    the base dictionary (weight 1). Going back up, each level scores its points with the
    weighted-dictionary estimator built from the level below and keeps each point independently
    with probability :math:`p_i = \min(1, \text{oversampling}\cdot\tilde l_i)` (weight
    :math:`1/p_i`). At level 0 (all n points) the multiplier is raised, if needed, so that at least
    s centres are expected (the reference code's last level draws s centres); that sample is the
    final dictionary, from which the scores of all n points are computed.

    Parameters
    ----------
    kernel : sklearn kernel
    reg : float
        :math:`\lambda > 0`.
    sample_size : int or None, default=None
        s: the size of the base uniform sample, which fixes the number of levels
        :math:`\lceil \log_2(n/s) \rceil`. None uses :math:`s = \lceil\sqrt n\rceil` (the reference
        code's default). With s >= n every point is kept and the scores are exact.
    oversampling : float or None, default=None
        Multiplier of the estimated leverage in the Bernoulli probabilities. None uses
        :math:`\log s` (the reference code's default), floored at 1.
    scoring : {"nystrom", "weighted"}, default="nystrom"
        Final estimator of the n scores from the dictionary (see
        :func:`~spectral_leverage.samplers._dictionary.dictionary_scores`): the leverage of the
        dictionary's Nyström approximation (default: weight-free, much lower variance, slightly low
        in absolute scale), or the paper's importance-weighted estimator (slightly high).
    random_state : int, numpy Generator or None

    Notes
    -----
    With fixed :math:`\lambda` each level keeps about oversampling · :math:`d_\mathrm{eff}` points
    (m in expectation), so the time is :math:`O(n m^2)` (geometric over the levels, dominated by
    the final pass over all n points) and memory :math:`O(b m + m^2)` with row blocks of b rows.
    A level-(l+1) dictionary is a sample of a uniform half of level l, so its inclusion
    probabilities are multiplied by the size ratio before it scores level l (unbiased weights;
    the reference code leaves them unscaled, which overestimates by up to a factor 2).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> X = np.random.default_rng(0).uniform(size=(1000, 1))
    >>> rrls = RecursiveRLS(Matern(0.5, nu=1.5), reg=1e-3, random_state=0).fit(X)
    >>> rrls.scores_.shape, rrls.sample(5).shape
    ((1000,), (5,))
    """

    def __init__(
        self, kernel, reg: float, *, sample_size=None, oversampling=None, scoring="nystrom", random_state=None
    ):
        self.kernel = kernel
        self.reg = reg
        self.sample_size = sample_size
        self.oversampling = oversampling
        self.scoring = scoring
        self.random_state = random_state

    def fit(self, X, y=None) -> RecursiveRLS:
        """Run the recursion; set ``scores_`` (≈ n·l_i), ``dictionary_indices_``,
        ``dictionary_probabilities_`` and ``n_features_in_``."""
        X = check_data(X)
        kernel = check_kernel(self.kernel)
        reg = check_positive(self.reg, "reg")
        n = X.shape[0]
        if self.sample_size is None:
            s = int(np.ceil(np.sqrt(n)))
        else:
            s = int(check_scalar(self.sample_size, "sample_size", Integral, min_val=1))
        if self.oversampling is None:
            oversamp = max(1.0, float(np.log(s)))
        else:
            oversamp = float(check_scalar(self.oversampling, "oversampling", Real, min_val=1.0))
            if not np.isfinite(oversamp):
                raise ValueError(f"oversampling must be finite, got {self.oversampling!r}.")
        scoring = check_scoring(self.scoring)
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
            size, below = sizes[level], sizes[level + 1]
            idx = perm[:size]
            probs_as_level = dict_probs * (below / size)
            lev = weighted_rls(X[idx], kernel, X[perm[dict_pos]], probs_as_level, gamma, diag=diag[idx])
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
        self.n_features_in_ = X.shape[1]
        self._set_scores(n * dictionary_scores(X, kernel, X[centres], dict_probs, gamma, scoring, diag=diag))
        return self

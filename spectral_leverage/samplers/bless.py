r"""BLESS: bottom-up leverage score sampling along a regularisation path (Rudi et al., NeurIPS 2018)."""

from __future__ import annotations

from numbers import Integral, Real
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
    RANDOM_STATE,
    NumericInterval,
    check_positive,
    check_random_state,
    validate_params,
)
from ..base import LeverageSampler
from ..kernels import resolve_kernel
from ._dictionary import SCORINGS, check_dictionary_fits, check_kernel, dictionary_scores, weighted_rls

__all__ = ["BLESS"]


class BLESS(LeverageSampler):
    r"""BLESS leverage scores with growing dictionaries along a λ path (the ``"bless"`` method).

    Rudi, Calandriello, Carratino & Rosasco, "On fast leverage score sampling and optimal
    learning", NeurIPS 2018, Algorithm 1 (reference code ``LCSL/bless``), whose :math:`\lambda` is
    on the un-normalised kernel scale, :math:`\lambda_\mathrm{BLESS} = n\lambda`. It follows a
    geometric path of ``n_steps`` = H values :math:`\gamma_1 = n > \dots > \gamma_H = n\lambda`. The first
    dictionary keeps each point with probability :math:`\bar q\,k_{ii}/n`. At each step h, a
    uniform-style candidate set U keeps each point with probability
    :math:`u_i = \min(1, \bar q\,k_{ii}/(k_{ii} + \gamma_h))` (an upper bound on
    :math:`\bar q\,l_i(\gamma_h)`); the current dictionary scores the candidates with the
    weighted-dictionary estimator (:func:`~spectral_leverage.samplers._dictionary.weighted_rls`) at
    :math:`\gamma_h`, and candidate i enters the new dictionary with probability
    :math:`\min(\bar q\,\tilde l_i, u_i)/u_i`. Finally the last dictionary scores all n points at
    :math:`\gamma_H = n\lambda`. ``scores_`` are :math:`n\,\tilde l_i` on the scale of
    :class:`~spectral_leverage.base.LeverageSampler`.

    Parameters
    ----------
    kernel : sklearn kernel or None, default=None
        Any scikit-learn kernel with ``diag``; None is ``Matern(length_scale=1.0, nu=1.5)``.
    reg : float, default=1e-3
        :math:`\lambda > 0`.
    qbar : float, default=2
        Oversampling factor :math:`\bar q \ge 1`, finite (the reference code's default; its README
        suggests [2, 10]). The dictionary holds about :math:`\bar q\,d_\mathrm{eff}` centres.
    n_steps : int or None, default=None
        H, the number of λ values on the path (including the initial one); None uses
        :math:`\lceil \log n \rceil` (the reference default).
    scoring : {"nystrom", "weighted"}, default="nystrom"
        Final estimator of the n scores from the dictionary
        (:func:`~spectral_leverage.samplers._dictionary.dictionary_scores`). With few centres per
        effective dimension ``"weighted"`` ranks points better (see the design notes).
    memory_budget : int, default=1 GiB
        Bytes for the dictionary's m×m factors and the row blocks of its passes over X. A
        dictionary that outgrows it stops the fit with a ValueError naming the budget that would do
        (see :func:`~spectral_leverage.samplers._dictionary.plan_blocks`).
    random_state : int, numpy Generator or None, default=None
        Seeds the Bernoulli draws.

    Attributes
    ----------
    dictionary_indices_, dictionary_probabilities_ : ndarray
        The final dictionary and its total inclusion probabilities.
    reg_path_ : ndarray of shape (n_steps,)
        The path :math:`\gamma_h / n`, ending at ``reg``.

    Notes
    -----
    Each step costs :math:`O(|U_h|\,m_h^2 + m_h^3)` with :math:`|U_h| \approx \bar q\,n/\gamma_h`
    candidates and :math:`m_h \approx \bar q\,d_\mathrm{eff}(\gamma_h)` centres; the final pass over
    all n points costs :math:`O(n m^2)` with :math:`m \approx \bar q\,d_\mathrm{eff}`. Memory
    :math:`O(b m + m^2)` with row blocks of b rows. Dictionary weights are the *total* inclusion
    probabilities :math:`\min(\bar q\,\tilde l_i, u_i)` (unbiased importance weights, as in the
    paper; the reference code stores the conditional :math:`\min(\bar q\,\tilde l_i, u_i)/u_i`).
    When :math:`\bar q\,\tilde l_i \ge 1` for every point, every point is kept with weight 1 and
    the scores are exact.

    The reference code's conditional weights understate the dictionary's kernel by the factor
    :math:`u_i`, which acts as extra regularisation and grows the dictionary (and its effective
    dimension); the unbiased weights used here need a larger :math:`\bar q` for the same accuracy
    (see the design notes).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> X = np.random.default_rng(0).uniform(size=(1000, 1))
    >>> bless = BLESS(Matern(0.5, nu=1.5), reg=1e-3, random_state=0).fit(X)
    >>> bless.scores_.shape, bless.sample(5).shape
    ((1000,), (5,))
    """

    _parameter_constraints: ClassVar[dict] = {
        "kernel": KERNEL,
        "reg": POSITIVE,
        "qbar": [NumericInterval(Real, 1, None, closed="left")],
        "n_steps": [NumericInterval(Integral, 2, None, closed="left"), None],
        "scoring": [StrOptions(set(SCORINGS))],
        "memory_budget": MEMORY_BUDGET,
        "random_state": RANDOM_STATE,
    }

    def __init__(self, kernel=None, reg: float = DEFAULT_REG, *, qbar: float = 2.0, n_steps=None,
                 scoring="nystrom", memory_budget: int = DEFAULT_MEMORY_BUDGET, random_state=None):
        self.kernel = kernel
        self.reg = reg
        self.qbar = qbar
        self.n_steps = n_steps
        self.scoring = scoring
        self.memory_budget = memory_budget
        self.random_state = random_state

    def fit(self, X, y=None) -> BLESS:
        """Run the λ path; set ``scores_`` (≈ n·l_i), ``dictionary_indices_``,
        ``dictionary_probabilities_``, ``reg_path_`` and ``n_features_in_``."""
        validate_params(self)
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        kernel = check_kernel(resolve_kernel(self.kernel), X)
        reg = check_positive(self.reg, "reg")  # the constraints admit inf
        qbar = check_positive(self.qbar, "qbar")
        n = X.shape[0]
        check_dictionary_fits(X, kernel, reg, self.memory_budget, "BLESS")
        H = max(2, int(np.ceil(np.log(n)))) if self.n_steps is None else int(self.n_steps)
        rng = check_random_state(self.random_state)
        diag = kernel.diag(X)
        gamma_final = n * reg
        path = np.geomspace(max(float(n), gamma_final), gamma_final, H)

        probs = np.minimum(1.0, qbar * diag / path[0])
        keep = rng.random(n) < probs
        if not keep.any():
            keep[rng.integers(n)] = True
        idx, dict_probs = np.flatnonzero(keep), probs[keep]
        for gamma in path[1:]:
            ucb = np.minimum(1.0, qbar * diag / (diag + gamma))
            cand = np.flatnonzero(rng.random(n) < ucb)
            if cand.size == 0:
                cand = np.array([rng.integers(n)])
            lev = weighted_rls(X[cand], kernel, X[idx], dict_probs, gamma, diag=diag[cand],
                               memory_budget=self.memory_budget)
            total = np.minimum(qbar * lev, ucb[cand])
            keep = rng.random(cand.size) < total / ucb[cand]
            if not keep.any():
                keep[np.argmax(total / ucb[cand])] = True
            idx, dict_probs = cand[keep], total[keep]

        self.dictionary_indices_ = idx
        self.dictionary_probabilities_ = dict_probs
        self.reg_path_ = path / n
        scores = dictionary_scores(X, kernel, X[idx], dict_probs, gamma_final, self.scoring, diag=diag,
                                   memory_budget=self.memory_budget)
        self._set_scores(n * scores)
        return self

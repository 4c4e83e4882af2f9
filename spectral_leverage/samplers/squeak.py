r"""SQUEAK: sequential ridge leverage sampling with SHRINK/EXPAND, and DICT-MERGE for distributed use.

Calandriello, Lazaric & Valko, "Distributed adaptive sampling for kernel matrix approximation",
AISTATS 2017 (SQUEAK, Algorithm 1; DISQUEAK's DICT-MERGE, Algorithm 2).
"""

from __future__ import annotations

from numbers import Real
from typing import ClassVar

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

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

__all__ = ["SQUEAK", "merge_squeak"]


class SQUEAK(LeverageSampler):
    r"""SQUEAK leverage scores from a one-pass sequential dictionary (the ``"squeak"`` method).

    The paper's :math:`\gamma` is on the un-normalised kernel scale, :math:`\gamma = n\lambda`;
    ``scores_`` are :math:`n\,\tilde l_i` on the scale of
    :class:`~spectral_leverage.base.LeverageSampler`. The rows are read once, in order,
    ``batch_size`` at a time. The dictionary holds entries :math:`(j, \tilde p_j, q_j)`: a point,
    its current probability and its number of copies out of :math:`\bar q`. EXPAND adds each new
    point with :math:`\tilde p = 1`, :math:`q = \bar q`. SHRINK re-estimates every entry's leverage
    with the α-approximate estimator (paper, eq. 4)

    .. math:: \tilde\tau_j = \frac{1-\varepsilon}{\gamma}\bigl(k_{jj} - k_{jI}\bar S
       (\bar S^\top K_{II} \bar S + (1+\varepsilon)\gamma I)^{-1}\bar S^\top k_{Ij}\bigr),
       \qquad \bar S = \mathrm{diag}\bigl(\sqrt{q_i / (\bar q\,\tilde p_i)}\bigr),

    sets :math:`\tilde p_j \leftarrow \min(\tilde\tau_j, \tilde p_j)` and thins the copies,
    :math:`q_j \sim \mathrm{Binomial}(q_j, \tilde p_j^\mathrm{new}/\tilde p_j^\mathrm{old})`, dropping
    entries with no copy left. Adding a batch is DICT-MERGE of the dictionary with a dictionary
    holding the batch exactly, so the guarantees of the paper's distributed variant apply. After the
    pass, the final dictionary scores all n points with the same estimator at
    :math:`\varepsilon = 0` (weights :math:`q_j/(\bar q\,\tilde p_j)`).

    :meth:`merge` (or :func:`merge_squeak`) implements DICT-MERGE: two samplers fitted on separate
    chunks give one sampler of the stacked data, as if fitted on it.

    Parameters
    ----------
    kernel : sklearn kernel or None, default=None
        Any scikit-learn kernel with ``diag``; None is ``Matern(length_scale=1.0, nu=1.5)``.
    reg : float, default=1e-3
        :math:`\lambda > 0`.
    qbar : int, default=8
        :math:`\bar q`, copies per point. The theory's :math:`\bar q = O(\alpha \log(n/\delta)/
        \varepsilon^2)` is very conservative; about :math:`\bar q\,d_\mathrm{eff}` distinct centres
        are kept (see the design notes for the choice of 8).
    eps : float, default=0.5
        :math:`\varepsilon \in [0, 1)`, accuracy of the estimator used by SHRINK
        (:math:`\alpha = (1+\varepsilon)/(1-\varepsilon)`).
    batch_size : int or None, default=None
        Rows added per EXPAND step; None uses :math:`\lceil\sqrt n\rceil`.
    scoring : {"nystrom", "weighted"}, default="nystrom"
        Final estimator of the n scores from the dictionary
        (:func:`~spectral_leverage.samplers._dictionary.dictionary_scores`).
    memory_budget : int, default=1 GiB
        Bytes for the dictionary's m×m factors and the row blocks of its passes over X. A
        dictionary that outgrows it stops the fit with a ValueError naming the budget that would do
        (see :func:`~spectral_leverage.samplers._dictionary.plan_blocks`).
    random_state : int, numpy Generator or None, default=None
        Seeds the thinning of the copies.

    Attributes
    ----------
    dictionary_indices_, dictionary_probabilities_, dictionary_copies_ : ndarray
        The final dictionary: rows, probabilities :math:`\tilde p_j` and copies :math:`q_j`.

    Notes
    -----
    With m dictionary entries and batches of b rows, each SHRINK costs :math:`O((m+b)^3)`, so the
    pass costs :math:`O(n (m+b)^3 / b)` and the final scoring :math:`O(n m^2)`; memory
    :math:`O((m+b)^2)` plus :math:`O(b m)` row blocks, and the training rows (kept for merging).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> X = np.random.default_rng(0).uniform(size=(1000, 1))
    >>> kernel = Matern(0.5, nu=1.5)
    >>> sq = SQUEAK(kernel, reg=1e-3, random_state=0).fit(X)
    >>> sq.scores_.shape, sq.sample(5).shape
    ((1000,), (5,))
    >>> left = SQUEAK(kernel, reg=1e-3, random_state=1).fit(X[:500])
    >>> right = SQUEAK(kernel, reg=1e-3, random_state=2).fit(X[500:])
    >>> left.merge(right).scores_.shape
    (1000,)
    """

    _parameter_constraints: ClassVar[dict] = {
        "kernel": KERNEL,
        "reg": POSITIVE,
        "qbar": POSITIVE_INT,
        "eps": [NumericInterval(Real, 0, 1, closed="left")],
        "batch_size": [*POSITIVE_INT, None],
        "scoring": [StrOptions(set(SCORINGS))],
        "memory_budget": MEMORY_BUDGET,
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self,
        kernel=None,
        reg: float = DEFAULT_REG,
        *,
        qbar: int = 8,
        eps: float = 0.5,
        batch_size=None,
        scoring="nystrom",
        memory_budget: int = DEFAULT_MEMORY_BUDGET,
        random_state=None,
    ):
        self.kernel = kernel
        self.reg = reg
        self.qbar = qbar
        self.eps = eps
        self.batch_size = batch_size
        self.scoring = scoring
        self.memory_budget = memory_budget
        self.random_state = random_state

    def _check_params(self):
        """The parameters as used by ``fit`` and ``merge``: kernel, reg, qbar, eps."""
        validate_params(self)
        kernel = check_kernel(resolve_kernel(self.kernel))
        reg = check_positive(self.reg, "reg")  # the constraint admits inf
        return kernel, reg, int(self.qbar), float(self.eps)

    def _shrink(self, X, idx, ptil, copies, gamma, rng, kernel, qbar, eps):
        """SHRINK: re-estimate, lower the probabilities, thin the copies, drop empty entries."""
        Xd = X[idx]
        weights_inv = qbar * ptil / copies  # P in (K + γ' P): inverse importance weights
        g = (1.0 + eps) * gamma
        tau = (1.0 - eps) * (1.0 + eps) * weighted_rls(Xd, kernel, Xd, weights_inv, g,
                                                                  memory_budget=self.memory_budget)
        new = np.minimum(tau, ptil)
        copies = rng.binomial(copies, new / ptil)
        keep = copies > 0
        if not keep.any():  # keep the entry most likely to survive rather than an empty dictionary
            best = int(np.argmax(new))
            keep[best], copies[best] = True, 1
        return idx[keep], new[keep], copies[keep]

    def fit(self, X, y=None) -> SQUEAK:
        """One sequential pass; set ``scores_`` (≈ n·l_i), ``dictionary_indices_``,
        ``dictionary_probabilities_``, ``dictionary_copies_`` and ``n_features_in_``."""
        kernel, reg, qbar, eps = self._check_params()
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        check_kernel(kernel, X)
        n = X.shape[0]
        check_dictionary_fits(X, kernel, reg, self.memory_budget, "SQUEAK")
        b = int(np.ceil(np.sqrt(n))) if self.batch_size is None else int(self.batch_size)
        rng = check_random_state(self.random_state)
        gamma = n * reg
        idx = np.empty(0, dtype=np.intp)
        ptil = np.empty(0)
        copies = np.empty(0, dtype=np.int64)
        for start in range(0, n, b):
            new = np.arange(start, min(n, start + b))
            idx = np.concatenate([idx, new])  # EXPAND
            ptil = np.concatenate([ptil, np.ones(new.size)])
            copies = np.concatenate([copies, np.full(new.size, qbar, dtype=np.int64)])
            idx, ptil, copies = self._shrink(X, idx, ptil, copies, gamma, rng, kernel, qbar, eps)
        self._finish(X, idx, ptil, copies, gamma, kernel, qbar)
        return self

    def _finish(self, X, idx, ptil, copies, gamma, kernel, qbar):
        self._fit_X = X
        self.dictionary_indices_ = idx
        self.dictionary_probabilities_ = ptil
        self.dictionary_copies_ = copies
        self.n_features_in_ = X.shape[1]  # merge stacks the rows of two fits
        scores = dictionary_scores(X, kernel, X[idx], qbar * ptil / copies, gamma, self.scoring,
                                   memory_budget=self.memory_budget)
        self._set_scores(X.shape[0] * scores)

    def merge(self, other: SQUEAK) -> SQUEAK:
        """DICT-MERGE with a sampler fitted on other rows: a new fitted SQUEAK of the stacked data.

        The union of both dictionaries is shrunk at :math:`\\gamma = (n_1 + n_2)\\lambda`, then
        scores all :math:`n_1 + n_2` rows (``self``'s rows first). Randomness comes from
        ``self.random_state``. Both samplers must share kernel, ``reg``, ``qbar``, ``eps`` and ``scoring``.

        Raises
        ------
        TypeError
            If ``other`` is not a SQUEAK.
        ValueError
            If the parameters differ or the feature counts differ.
        """
        check_is_fitted(self, "dictionary_indices_")
        if not isinstance(other, SQUEAK):
            raise TypeError(f"other must be a fitted SQUEAK, got {type(other).__name__}.")
        check_is_fitted(other, "dictionary_indices_")
        mine, theirs = self.get_params(deep=False), other.get_params(deep=False)
        for key in ("kernel", "reg", "qbar", "eps", "scoring"):
            if mine[key] != theirs[key]:
                raise ValueError(
                    f"cannot merge SQUEAK samplers with different {key}: {mine[key]!r} vs {theirs[key]!r}."
                )
        if self.n_features_in_ != other.n_features_in_:
            raise ValueError(
                f"other was fitted on {other.n_features_in_} features, self on {self.n_features_in_}."
            )
        kernel, reg, qbar, eps = self._check_params()
        X = np.vstack([self._fit_X, other._fit_X])
        n1 = self._fit_X.shape[0]
        idx = np.concatenate([self.dictionary_indices_, other.dictionary_indices_ + n1])
        ptil = np.concatenate([self.dictionary_probabilities_, other.dictionary_probabilities_])
        copies = np.concatenate([self.dictionary_copies_, other.dictionary_copies_])
        rng = check_random_state(self.random_state).spawn(1)[0]
        gamma = X.shape[0] * reg
        idx, ptil, copies = self._shrink(X, idx, ptil, copies, gamma, rng, kernel, qbar, eps)
        merged = clone(self)
        merged._finish(X, idx, ptil, copies, gamma, kernel, qbar)
        return merged


def merge_squeak(samplers) -> SQUEAK:
    """DISQUEAK: merge fitted SQUEAK samplers (one per chunk, in row order) pairwise, as a tree.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> X = np.random.default_rng(0).uniform(size=(900, 1))
    >>> parts = [SQUEAK(RBF(0.3), reg=1e-3, random_state=k).fit(X[300 * k: 300 * (k + 1)])
    ...          for k in range(3)]
    >>> merge_squeak(parts).scores_.shape
    (900,)
    """
    level = list(samplers)
    if not level:
        raise ValueError("samplers must contain at least one fitted SQUEAK.")
    while len(level) > 1:
        nxt = [level[i].merge(level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]

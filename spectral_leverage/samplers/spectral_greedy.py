r"""Leverage-balanced, diverse centres: greedy pivoted Cholesky among leverage-drawn candidates.

I.i.d. leverage sampling (the ``"spectral"`` method) is the Nyström theory's scheme, but it spends
draws on near-duplicates in dense regions; greedy pivoted Cholesky is diverse by construction but,
over all n rows, spends its pivots on isolated rows (outliers have the largest conditional
variance until each is a pivot). The ``"spectral-greedy"`` method combines the two:

1. spectral leverage scores :math:`s_i \approx n\,l_i` (:class:`~spectral_leverage.SpectralLeverage`,
   its density formula: O(n log n));
2. a candidate pool of :math:`c\,m` distinct rows drawn without replacement with probabilities
   proportional to :math:`s_i` (``pool_factor`` :math:`c`): leverage-balanced, and an outlier enters
   only with its leverage's share;
3. greedy pivoted Cholesky (:func:`~spectral_leverage.pivoted_cholesky.rp_cholesky` with
   ``greedy=True``) among the pool: each centre is the candidate least explained by the centres
   already chosen, so no two are near-duplicates at the kernel's length.

Step 3 costs :math:`O(c\,m \cdot m^2)` and :math:`c\,m^2` floats, independent of n. Measured against
k-means, greedy and randomly pivoted Cholesky on CCPP and CASP in ``benchmarks/centres.py``
(docs/notes/centres.md): it is not the default, see there for where it wins and where it loses.
"""

from __future__ import annotations

from numbers import Integral
from typing import ClassVar

import numpy as np
from sklearn.utils._param_validation import StrOptions

from .._blocks import DEFAULT_MEMORY_BUDGET
from .._validation import DEFAULT_REG, NumericInterval
from ..kernels import resolve_kernel
from ..pivoted_cholesky import rp_cholesky
from ..spectral import SpectralLeverage
from .selection import CenterSelector, factor_rows

__all__ = ["SpectralGreedy"]


class SpectralGreedy(CenterSelector):
    """Greedy pivoted Cholesky among ``pool_factor * m`` rows drawn by spectral leverage (the
    ``"spectral-greedy"`` method; module docstring).

    Parameters
    ----------
    kernel : sklearn kernel or None, default=None
        ``Matern`` or ``RBF``, optionally times ``ConstantKernel``; None is
        ``Matern(length_scale=1.0, nu=1.5)``.
    reg : float, default=1e-3
        :math:`\\lambda` of the leverage scores.
    pool_factor : int, default=4
        Candidates per centre (the pool has ``min(n, pool_factor * m)`` rows): 1 is leverage
        sampling without replacement; large factors approach greedy Cholesky over all rows.
    algorithm : {"density", "auto"}, default="density"
        :class:`~spectral_leverage.SpectralLeverage`'s algorithm; ``"auto"`` adds the full-scale
        refinement (several times slower at n = 8000).
    memory_budget : int, default=1 GiB
        Bytes of the scores' temporaries; the pool's factor is kept within half of it (fewer
        candidates when ``pool_factor * m`` rows would not fit, :func:`factor_rows`).
    random_state : int, numpy Generator or None, default=None

    Attributes
    ----------
    scores_, leverage_, probabilities_, effective_dimension_
        Those of the spectral scores (:class:`~spectral_leverage.base.LeverageSampler`).

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> X = np.random.default_rng(0).uniform(size=(2000, 2))
    >>> sampler = SpectralGreedy(Matern(0.5, nu=1.5), 1e-3, random_state=0).fit(X)
    >>> idx = sampler.sample(50)
    >>> idx.shape, bool(np.all(np.diff(idx) > 0))
    ((50,), True)
    """

    _estimates_leverage: ClassVar[bool] = True
    _parameter_constraints: ClassVar[dict] = {
        **CenterSelector._parameter_constraints,
        "pool_factor": [NumericInterval(Integral, 1, None, closed="left")],
        "algorithm": [StrOptions({"density", "auto"})],
    }

    def __init__(self, kernel=None, reg=DEFAULT_REG, *, pool_factor: int = 4,
                 algorithm: str = "density", memory_budget: int = DEFAULT_MEMORY_BUDGET,
                 random_state=None):
        super().__init__(kernel, reg, memory_budget=memory_budget, random_state=random_state)
        self.pool_factor = pool_factor
        self.algorithm = algorithm

    def _fit_scores(self, X: np.ndarray) -> np.ndarray:
        spectral = SpectralLeverage(self.kernel, self.reg, algorithm=self.algorithm,
                                    memory_budget=self.memory_budget, random_state=self.random_state)
        return spectral.fit(X).scores_

    def _select(self, X, m, rng, sample_weight):
        n = X.shape[0]
        p = self.probabilities_
        size = min(n, self.pool_factor * m, factor_rows(n, m, self.memory_budget), np.count_nonzero(p))
        pool = np.arange(n) if size == n else rng.choice(n, size=size, replace=False, p=p)
        if size <= m:
            return pool
        pivots, _ = rp_cholesky(X[pool], resolve_kernel(self.kernel), m, rng, greedy=True,
                                memory_budget=self.memory_budget / 2)
        return pool[pivots]

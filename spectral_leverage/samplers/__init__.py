"""Every leverage-score sampler behind one protocol (:class:`~spectral_leverage.base.LeverageSampler`).

Methods are chosen by name wherever a sampler is accepted; :func:`make_sampler` resolves a name, a
sampler class or a sampler instance into an estimator ready to ``fit``.
"""

from __future__ import annotations

from sklearn.base import clone

from .._blocks import DEFAULT_MEMORY_BUDGET
from ..base import LeverageSampler
from ..spectral import SpectralLeverage
from .alaoui_mahoney import AlaouiMahoneySampler
from .bless import BLESS
from .exact import ExactLeverage, exact_leverage
from .recursive_rls import RecursiveRLS
from .selection import AdaptiveCholesky, CenterSelector, GreedyCholesky, KMeansCenters, RPCholeskyCenters
from .spectral_greedy import SpectralGreedy
from .squeak import SQUEAK, merge_squeak
from .uniform import UniformSampler

__all__ = [
    "BLESS",
    "SAMPLERS",
    "SELECTORS",
    "SQUEAK",
    "AdaptiveCholesky",
    "AlaouiMahoneySampler",
    "CenterSelector",
    "ExactLeverage",
    "GreedyCholesky",
    "KMeansCenters",
    "RPCholeskyCenters",
    "RecursiveRLS",
    "SpectralGreedy",
    "UniformSampler",
    "exact_leverage",
    "leverage_scores",
    "make_sampler",
    "merge_squeak",
]

SAMPLERS: dict[str, type[LeverageSampler]] = {
    "spectral": SpectralLeverage,
    "uniform": UniformSampler,
    "exact": ExactLeverage,
    "alaoui-mahoney": AlaouiMahoneySampler,
    "recursive-rls": RecursiveRLS,
    "squeak": SQUEAK,
    "bless": BLESS,
    "kmeans": KMeansCenters,
    "greedy-cholesky": GreedyCholesky,
    "rp-cholesky": RPCholeskyCenters,
    "adaptive-cholesky": AdaptiveCholesky,
    "spectral-greedy": SpectralGreedy,
}

#: The methods that choose m centres at once (:class:`CenterSelector`) rather than estimate leverage
#: scores to draw from: no leverage accuracy to check, and centres that may not be rows ("kmeans").
SELECTORS = tuple(name for name, cls in SAMPLERS.items() if issubclass(cls, CenterSelector))


def make_sampler(sampler, *, kernel, reg, random_state=None,
                 memory_budget: float = DEFAULT_MEMORY_BUDGET) -> LeverageSampler:
    """Resolve ``sampler`` into an unfitted-or-fitted sampler object.

    Parameters
    ----------
    sampler : str or LeverageSampler
        A name from :data:`SAMPLERS` (built with ``kernel``, ``reg`` and ``random_state``), or a
        sampler object, returned as is (fitted or not; the caller decides whether to refit).
    kernel, reg, random_state, memory_budget
        Used only when ``sampler`` is a name (every sampler bounds its temporaries by
        ``memory_budget`` bytes).

    Raises
    ------
    ValueError
        For an unknown name (the message lists the known ones).
    TypeError
        For an object without ``fit`` and ``sample``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> X = np.random.default_rng(0).uniform(size=(500, 2))
    >>> bless = make_sampler("bless", kernel=RBF(0.3), reg=1e-3, random_state=0).fit(X)
    >>> bless.sample(5, random_state=0).shape
    (5,)
    """
    if isinstance(sampler, str):
        if sampler not in SAMPLERS:
            raise ValueError(f"unknown sampler {sampler!r}; choose one of {sorted(SAMPLERS)}.")
        return SAMPLERS[sampler](kernel=kernel, reg=reg, memory_budget=memory_budget,
                                 random_state=random_state)
    if not (hasattr(sampler, "fit") and hasattr(sampler, "sample")):
        raise TypeError(
            f"sampler must be a name from {sorted(SAMPLERS)} or an object with fit(X) and "
            f"sample(n_samples, ...) (see spectral_leverage.base.LeverageSampler); got {sampler!r}."
        )
    return sampler


def leverage_scores(X, *, kernel, reg, method="spectral", random_state=None,
                    memory_budget: float = DEFAULT_MEMORY_BUDGET):
    """Rescaled ridge leverage scores :math:`\\approx n\\,l_i` of X by any method.

    Parameters
    ----------
    X : array_like of shape (n, d)
    kernel : sklearn kernel
    reg : float
        :math:`\\lambda > 0` (:math:`l_i = [K(K + n\\lambda I)^{-1}]_{ii}`).
    method : str or LeverageSampler, default="spectral"
        A name from :data:`SAMPLERS` or a sampler object (cloned, then fitted on X).
    random_state : int, numpy Generator or None
    memory_budget : int, default=1 GiB
        Bytes of temporaries of a sampler given by name; a method that would need more (the
        dictionary samplers at a tiny ``reg``, ``"exact"`` at large n) raises a ValueError saying so.

    Returns
    -------
    ndarray of shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> X = np.random.default_rng(0).normal(size=(1000, 2))
    >>> leverage_scores(X, kernel=RBF(0.5), reg=1e-3).shape
    (1000,)
    """
    sampler = make_sampler(method, kernel=kernel, reg=reg, random_state=random_state,
                           memory_budget=memory_budget)
    if not isinstance(method, str):
        sampler = clone(sampler)
    return sampler.fit(X).scores_

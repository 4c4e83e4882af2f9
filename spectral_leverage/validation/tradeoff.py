"""Regression trade-off (Chen & Yang 2021, Fig. 1): Nyström KRR risk against time to centres.

3-D bimodal design :math:`0.9\\,U[0,1]^3 + 0.1\\,N(1.5, 0.05^2 I)`, target
:math:`f^*(x) = \\sin 4x_1 + x_2^2 - x_3` plus :math:`N(0, 0.5^2)` noise
(:func:`~spectral_leverage.datasets.make_regression_target`). For each n and method, the seconds
to the centres are recorded (to fit the sampler's scores; for a selector,
:data:`~spectral_leverage.samplers.SELECTORS`, to fit it and select m centres), then
:class:`~spectral_leverage.NystromKRR` with :math:`m = \\lceil c\\, n^{3/8} \\rceil` centres from
that method is fitted, and its in-sample risk :math:`\\|\\hat f - f^*\\|^2 / n` recorded (a selector
selects again inside the fit, with the fit's seed; that time is taken off the fit's). Up to
``krr_max_n``, exact KRR (scikit-learn's ``KernelRidge`` with ``alpha = n·reg``) gives the reference
risk.
"""

from __future__ import annotations

import logging
import math

import numpy as np
from sklearn.kernel_ridge import KernelRidge

from ..datasets import make_bimodal, make_regression_target
from ..krr import NystromKRR
from ..samplers import SAMPLERS, SELECTORS, make_sampler
from ._util import check_names, matern, progress_bar, reg_rule, regulariser, replicate_seeds, timed

__all__ = ["TRADEOFF_METHODS", "n_centers", "regression_problem", "regression_tradeoff"]

logger = logging.getLogger(__name__)

#: Methods compared by default: the paper's Fig. 1 and what practitioners use (issue 20).
TRADEOFF_METHODS = ("uniform", "recursive-rls", "bless", "spectral", "kmeans", "greedy-cholesky",
                    "rp-cholesky", "spectral-greedy", "adaptive-cholesky")


def n_centers(n: int, factor: float = 10.0) -> int:
    """Nyström centres :math:`m = \\lceil c\\,n^{3/8} \\rceil` (capped at n): :math:`n^{3/8}` is how the
    effective dimension grows for Matérn ν = 1.5 in 3-D with :math:`\\lambda = n^{-3/4}`.

    Examples
    --------
    >>> n_centers(1000), n_centers(10_000)
    (134, 317)
    """
    return min(n, math.ceil(factor * n ** 0.375))


def regression_problem(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X, f*(X), y)`` of one replicate: 3-D bimodal X, then the noise, from one generator.

    Examples
    --------
    >>> X, f, y = regression_problem(100, seed=0)
    >>> X.shape, f.shape, y.shape
    ((100, 3), (100,), (100,))
    """
    rng = np.random.default_rng(seed)
    X = make_bimodal(n, 3, random_state=rng)
    return (X, *make_regression_target(X, random_state=rng))


def _exact_krr(kernel, X: np.ndarray, y: np.ndarray, alpha: float) -> np.ndarray:
    """In-sample predictions of exact KRR, ŷ = K (K + alpha I)^{-1} y (scikit-learn's KernelRidge)."""
    K = kernel(X)
    return KernelRidge(alpha=alpha, kernel="precomputed").fit(K, y).predict(K)


def regression_tradeoff(sizes=(1000, 4000, 10_000), *, methods=TRADEOFF_METHODS, n_replicates: int = 1,
                        nu: float = 1.5, length_scale: float = 0.5, reg: float | None = None,
                        centers_factor: float = 10.0, krr_max_n: int = 4000, random_state=0,
                        progress: bool = False) -> dict:
    """In-sample risk of Nyström KRR against the time to the centres' scores, per method and n.

    Parameters
    ----------
    sizes : sequence of int
    methods : sequence of str
        Names from :data:`spectral_leverage.SAMPLERS`.
    n_replicates : int, default=1
    nu, length_scale : float
        The Matérn kernel.
    reg : float or None
        :math:`\\lambda`; None uses :math:`n^{-3/4}`.
    centers_factor : float, default=10
        c in :func:`n_centers`.
    krr_max_n : int, default=4000
        Exact KRR reference risk for n up to this (an n×n solve).
    random_state : int, numpy Generator or None
        Seeds the replicates (recorded per row).
    progress : bool, default=False

    Returns
    -------
    dict
        ``settings``; ``rows``: one dict per (n, replicate, method) with the seed, reg, number of
        centres drawn and kept, ``score_seconds`` (scores, or a selector's fit and selection),
        ``fit_seconds`` (Nyström solve) and ``risk``;
        ``exact_krr``: one dict per (n, replicate) with n <= ``krr_max_n``; ``summary``: per
        (method, n), medians over replicates.

    Examples
    --------
    >>> out = regression_tradeoff(sizes=(300,), methods=("uniform",), krr_max_n=300)
    >>> row = out["rows"][0]
    >>> row["method"], row["n_centers"], bool(row["risk"] > 0), len(out["exact_krr"])
    ('uniform', 85, True, 1)
    """
    sizes, methods = [int(n) for n in sizes], check_names(methods, SAMPLERS, "sampler")
    kernel = matern(length_scale, nu)
    rows, exact_rows, summary = [], [], []
    with progress_bar(len(sizes) * n_replicates * len(methods), "regression trade-off", progress) as bar:
        for n in sizes:
            lam, m = regulariser(n, reg), n_centers(n, centers_factor)
            for replicate, seed in enumerate(replicate_seeds(random_state, f"tradeoff/{n}", n_replicates)):
                X, f, y = regression_problem(n, seed)
                if n <= krr_max_n:
                    pred, seconds = timed(_exact_krr, kernel, X, y, n * lam)
                    exact_rows.append({"n": n, "replicate": replicate, "seed": seed, "reg": lam,
                                       "seconds": seconds, "risk": float(np.mean((pred - f) ** 2))})
                for name in methods:
                    sampler = make_sampler(name, kernel=kernel, reg=lam, random_state=seed)
                    _, score_seconds = timed(sampler.fit, X, y)  # only adaptive-cholesky reads y
                    _, select_seconds = timed(sampler.select, m) if name in SELECTORS else (None, 0.0)
                    model = NystromKRR(kernel, lam, m, sampler=sampler, fit_intercept=False,
                                       random_state=seed)
                    _, fit_seconds = timed(model.fit, X, y)
                    score_seconds, fit_seconds = (score_seconds + select_seconds,
                                                  max(fit_seconds - select_seconds, 0.0))
                    rows.append({"method": name, "n": n, "replicate": replicate, "seed": seed, "reg": lam,
                                 "n_centers": m, "n_unique_centers": int(model.centers_.shape[0]),
                                 "score_seconds": score_seconds, "fit_seconds": fit_seconds,
                                 "risk": float(np.mean((model.predict(X) - f) ** 2))})
                    bar.update(1)
    for name in methods:
        for n in sizes:
            mine = [r for r in rows if r["method"] == name and r["n"] == n]
            summary.append({"method": name, "n": n, "n_centers": mine[0]["n_centers"],
                            **{k: float(np.median([r[k] for r in mine]))
                               for k in ("score_seconds", "fit_seconds", "risk")}})
    settings = {"sizes": sizes, "methods": methods, "n_replicates": n_replicates, "nu": nu,
                "length_scale": length_scale, "reg_rule": reg_rule(reg), "centers_rule":
                f"ceil({centers_factor:g} * n^(3/8))", "noise": 0.5, "krr_max_n": krr_max_n,
                "design": "0.9 U[0,1]^3 + 0.1 N(1.5, 0.05^2 I)", "target": "sin(4 x1) + x2^2 - x3"}
    return {"settings": settings, "rows": rows, "exact_krr": exact_rows, "summary": summary}

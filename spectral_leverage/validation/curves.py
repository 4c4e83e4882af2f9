"""Leverage curves on 1-D designs (Chen & Yang 2021, Fig. 2): exact vs spectral rescaled scores.

For each design, size n and replicate, the data are drawn from the replicate's seed, the exact
rescaled scores :math:`n\\,l_i` (:func:`~spectral_leverage.exact_leverage`) and the spectral ones
(:class:`~spectral_leverage.SpectralLeverage`) are computed with a Matérn kernel and
:math:`\\lambda = n^{-3/4}` by default, and compared: the mean relative error
:math:`\\mathrm{mean}_i |\\tilde s_i - n l_i| / (n l_i)` (absolute scale) and the R-ACC summary of
:func:`~spectral_leverage.metrics.score_accuracy` (shape only).
"""

from __future__ import annotations

import logging

import numpy as np

from ..datasets import make_beta, make_bimodal
from ..metrics import score_accuracy
from ..samplers.exact import exact_leverage
from ..spectral import SpectralLeverage
from ._util import check_names, matern, progress_bar, reg_rule, regulariser, replicate_seeds, timed

__all__ = ["DESIGNS_1D", "leverage_curves", "make_design"]

logger = logging.getLogger(__name__)

#: The 1-D designs: name -> (description, generator(n, rng) -> X of shape (n, 1)).
DESIGNS_1D = {
    "uniform": ("U[0, 1]", lambda n, rng: make_beta(n, 1.0, 1.0, random_state=rng)),
    "beta": ("Beta(2, 2): density vanishing at the boundary",
             lambda n, rng: make_beta(n, 2.0, 2.0, random_state=rng)),
    "bimodal": ("0.9 U[0, 1] + 0.1 N(1.5, 0.05^2)", lambda n, rng: make_bimodal(n, 1, random_state=rng)),
}


def make_design(design: str, n: int, seed: int) -> np.ndarray:
    """The data of one replicate: ``n`` points of a design of :data:`DESIGNS_1D` from ``seed``.

    Examples
    --------
    >>> make_design("beta", 5, seed=1).shape
    (5, 1)
    """
    check_names([design], DESIGNS_1D, "design")
    return DESIGNS_1D[design][1](n, np.random.default_rng(seed))


def _thin(x: np.ndarray, n_plot: int) -> np.ndarray:
    """Row indices of at most ``n_plot`` points, evenly spread over the order of ``x``."""
    order = np.argsort(x, kind="stable")
    return order[np.unique(np.linspace(0, x.size - 1, min(n_plot, x.size)).round().astype(int))]


def leverage_curves(sizes=(1000, 2000, 4000), *, designs=tuple(DESIGNS_1D), n_replicates: int = 2,
                    nu: float = 1.5, length_scale: float = 0.5, reg: float | None = None,
                    n_plot: int = 400, random_state=0, progress: bool = False) -> dict:
    """Exact vs spectral rescaled leverage scores on 1-D designs over n.

    Parameters
    ----------
    sizes : sequence of int
        Numbers of points n.
    designs : sequence of str
        Names from :data:`DESIGNS_1D`.
    n_replicates : int, default=2
        Replicates (fresh data) per design and n.
    nu, length_scale : float
        The Matérn kernel.
    reg : float or None
        :math:`\\lambda`; None uses :math:`n^{-3/4}` for each n.
    n_plot : int, default=400
        Points kept per curve (replicate 0), evenly spread over the order of x.
    random_state : int, numpy Generator or None
        Seeds the replicates: each (design, n, replicate) has its own seed, recorded in its row.
    progress : bool, default=False
        Show a tqdm progress bar.

    Returns
    -------
    dict
        ``settings``; ``rows``: one dict per (design, n, replicate) with the seed, reg, timings,
        ``relative_error`` and the R-ACC summary; ``curves``: for replicate 0 of each (design, n)
        the row ``index``, ``x``, ``exact`` and ``spectral`` scores of the kept points (sorted by x);
        ``summary``: per (design, n), the mean and standard deviation over replicates.

    Examples
    --------
    >>> out = leverage_curves(sizes=(200,), designs=("uniform",), n_replicates=1)
    >>> row = out["rows"][0]
    >>> row["design"], row["n"], bool(0 <= row["relative_error"] < 1)
    ('uniform', 200, True)
    """
    sizes, designs = [int(n) for n in sizes], check_names(designs, DESIGNS_1D, "design")
    kernel = matern(length_scale, nu)
    rows, curves = [], []
    with progress_bar(len(designs) * len(sizes) * n_replicates, "leverage curves", progress) as bar:
        for design in designs:
            for n in sizes:
                lam = regulariser(n, reg)
                seeds = replicate_seeds(random_state, f"curves/{design}/{n}", n_replicates)
                for replicate, seed in enumerate(seeds):
                    X = make_design(design, n, seed)
                    exact, t_exact = timed(exact_leverage, X, kernel, lam)
                    exact = n * exact
                    fitted, t_spectral = timed(SpectralLeverage(kernel, lam, random_state=seed).fit, X)
                    spectral = fitted.scores_
                    rows.append({
                        "design": design, "n": n, "replicate": replicate, "seed": seed, "reg": lam,
                        "exact_seconds": t_exact, "spectral_seconds": t_spectral,
                        "relative_error": float(np.mean(np.abs(spectral - exact) / exact)),
                        "effective_dimension_exact": float(exact.sum() / n),
                        "effective_dimension_spectral": float(spectral.sum() / n),
                        **{f"racc_{k}": v for k, v in score_accuracy(spectral, exact).items()},
                    })
                    if replicate == 0:
                        keep = _thin(X[:, 0], n_plot)
                        curves.append({"design": design, "n": n, "seed": seed, "index": keep.tolist(),
                                       "x": X[keep, 0].tolist(), "exact": exact[keep].tolist(),
                                       "spectral": spectral[keep].tolist()})
                    logger.debug("curves %s n=%d seed=%d: relative error %.3f", design, n, seed,
                                 rows[-1]["relative_error"])
                    bar.update(1)
    summary = []
    for design in designs:
        for n in sizes:
            errors = [r["relative_error"] for r in rows if r["design"] == design and r["n"] == n]
            summary.append({"design": design, "n": n, "relative_error_mean": float(np.mean(errors)),
                            "relative_error_sd": float(np.std(errors, ddof=1)) if len(errors) > 1 else 0.0})
    settings = {"sizes": sizes, "designs": {d: DESIGNS_1D[d][0] for d in designs},
                "n_replicates": n_replicates, "kernel": f"Matern(nu={nu}, length_scale={length_scale})",
                "nu": nu, "length_scale": length_scale, "reg_rule": reg_rule(reg), "n_plot": n_plot}
    return {"settings": settings, "rows": rows, "curves": curves, "summary": summary}

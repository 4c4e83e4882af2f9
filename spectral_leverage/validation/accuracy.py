"""Accuracy table (Chen & Yang 2021, Table 1): every sampler's scores against exact scores.

For each data set and replicate, the replicate's data (fresh synthetic points, or a subsample of
a file too large for exact scores) get exact rescaled scores, then every sampler is fitted on
them (seeded by the replicate) and timed. Per point, R-ACC is :math:`q_i/p_i`
(:func:`~spectral_leverage.metrics.score_accuracy`); per replicate its mean and 5th / 95th
percentiles are recorded, and the table reports their means over replicates.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
from scipy.stats import ConstantInputWarning

from ..metrics import score_accuracy
from ..samplers import SAMPLERS, SELECTORS, make_sampler
from ..samplers.exact import exact_leverage
from ._util import check_names, matern, progress_bar, reg_rule, regulariser, replicate_seeds, timed
from .data import DataSet

__all__ = ["ACCURACY_SAMPLERS", "accuracy_table"]

logger = logging.getLogger(__name__)

#: Samplers compared by default: every method of :data:`spectral_leverage.SAMPLERS` but exact and
#: the centre selectors (:data:`~spectral_leverage.samplers.SELECTORS`: no leverage scores to check).
ACCURACY_SAMPLERS = tuple(name for name in SAMPLERS if name != "exact" and name not in SELECTORS)

_SUMMARY = ("mean", "p05", "p95", "spearman", "scale")


def _mean(values: list) -> float | None:
    return None if None in values else float(np.mean(values))


def accuracy_table(datasets: list[DataSet], *, max_n: int = 2000, samplers=ACCURACY_SAMPLERS,
                   n_replicates: int = 3, nu: float = 1.5, reg: float | None = None, random_state=0,
                   progress: bool = False) -> dict:
    """R-ACC of every sampler against exact scores on each data set, over replicates.

    Parameters
    ----------
    datasets : list of DataSet
        See :mod:`spectral_leverage.validation.data`; each carries its kernel length scale.
    max_n : int, default=2000
        Points per replicate: synthetic designs draw this many; larger files are subsampled to it
        (a warning is logged), smaller files are used whole.
    samplers : sequence of str
        Names from :data:`spectral_leverage.SAMPLERS`.
    n_replicates : int, default=3
    nu : float, default=1.5
        Matérn smoothness.
    reg : float or None
        :math:`\\lambda`; None uses :math:`n^{-3/4}`.
    random_state : int, numpy Generator or None
        Seeds the replicates (recorded per row).
    progress : bool, default=False

    Returns
    -------
    dict
        ``settings``; ``rows``: one dict per (data set, replicate, sampler) with the seed, n, the
        fit time in seconds and the :func:`~spectral_leverage.metrics.score_accuracy` summary
        (``spearman`` and ``scale`` are None for ``"uniform"``, which estimates no leverage);
        ``exact``: one dict per (data set, replicate) with the exact scores' time and effective
        dimension; ``summary``: per (data set, sampler), means over replicates (median time).

    Examples
    --------
    >>> from spectral_leverage.validation.data import builtin_datasets
    >>> out = accuracy_table(builtin_datasets()[:1], max_n=300, samplers=("spectral", "uniform"),
    ...                      n_replicates=1)
    >>> [(row["sampler"], row["n"]) for row in out["summary"]]
    [('spectral', 300), ('uniform', 300)]
    """
    samplers = check_names(samplers, SAMPLERS, "sampler")
    rows, exact_rows, summary, described = [], [], [], []
    with progress_bar(len(datasets) * n_replicates * (len(samplers) + 1), "accuracy table", progress) as bar:
        for data in datasets:
            if data.n_available is not None and data.n_available > max_n:
                logger.warning("%s has %d rows, too many for exact scores here: each replicate uses a "
                               "random subsample of %d rows", data.name, data.n_available, max_n)
            kernel = matern(data.length_scale, nu)
            for replicate, seed in enumerate(replicate_seeds(random_state, f"accuracy/{data.name}",
                                                             n_replicates)):
                X = data.draw(max_n, seed)
                n = X.shape[0]
                lam = regulariser(n, reg)
                exact, seconds = timed(exact_leverage, X, kernel, lam)
                exact_rows.append({"dataset": data.name, "replicate": replicate, "seed": seed, "n": n,
                                   "reg": lam, "seconds": seconds,
                                   "effective_dimension": float(exact.sum())})
                bar.update(1)
                for name in samplers:
                    sampler = make_sampler(name, kernel=kernel, reg=lam, random_state=seed)
                    _, seconds = timed(sampler.fit, X)
                    with warnings.catch_warnings():  # uniform scores: Spearman undefined (NaN)
                        warnings.simplefilter("ignore", ConstantInputWarning)
                        accuracy = score_accuracy(sampler.scores_, n * exact)
                    if name == "uniform":  # no leverage estimate: no rank correlation, no scale
                        accuracy["spearman"] = accuracy["scale"] = None
                    rows.append({"dataset": data.name, "sampler": name, "replicate": replicate,
                                 "seed": seed, "n": n, "d": X.shape[1], "reg": lam, "seconds": seconds,
                                 **accuracy})
                    bar.update(1)
            n_used = exact_rows[-1]["n"]
            described.append({"name": data.name, "description": data.description, "n_available":
                              data.n_available, "n_used": n_used, "length_scale": data.length_scale})
            for name in samplers:
                mine = [r for r in rows if r["dataset"] == data.name and r["sampler"] == name]
                summary.append({"dataset": data.name, "sampler": name, "n": n_used, "d": mine[0]["d"],
                                "seconds": float(np.median([r["seconds"] for r in mine])),
                                **{k: _mean([r[k] for r in mine]) for k in _SUMMARY}})
    settings = {"max_n": max_n, "samplers": samplers, "n_replicates": n_replicates, "nu": nu,
                "reg_rule": reg_rule(reg), "datasets": described}
    return {"settings": settings, "rows": rows, "exact": exact_rows, "summary": summary}

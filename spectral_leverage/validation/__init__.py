"""The validation suite: Chen & Yang (AISTATS 2021) reproduced and extended, in one call.

:func:`run_validation` runs four experiments, each a pure function of its settings and a seed
returning plain (JSON-ready) dicts, then draws the figures and writes the report from those dicts:

1. :func:`~spectral_leverage.validation.curves.leverage_curves` (their Fig. 2): exact vs spectral
   rescaled scores on 1-D uniform, Beta and bimodal designs, relative error against n.
2. :func:`~spectral_leverage.validation.accuracy.accuracy_table` (their Table 1): every sampler's
   time and R-ACC against exact scores, per data set.
3. :func:`~spectral_leverage.validation.tradeoff.regression_tradeoff` (their Fig. 1): Nyström KRR
   risk against time to scores on the 3-D bimodal design.
4. :func:`~spectral_leverage.validation.grid.hyperparameter_grid`: every method's scores against
   exact ones over kernels × length scales × λ, on every data set.

Output in ``out``: ``report.md``, the PNG figures of :data:`FIGURES` (one file each) and
``results.json``. From the command line:
``spectral-leverage validate [--quick] [--data FILE.csv ...] [--out DIR]``.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from ..samplers.exact import exact_leverage
from ._util import base_seed, matern
from .accuracy import ACCURACY_SAMPLERS, accuracy_table
from .curves import DESIGNS_1D, leverage_curves, make_design
from .data import DataSet, builtin_datasets, csv_dataset, shared_data_dir
from .figures import FIGURES, require_matplotlib
from .grid import GRID_KERNELS, GRID_METHODS, hyperparameter_grid
from .report import machine_info, write_report, write_results
from .tradeoff import TRADEOFF_METHODS, regression_tradeoff

__all__ = ["FIGURES", "FULL", "QUICK", "estimate_seconds", "run_validation"]

logger = logging.getLogger(__name__)

#: Sizes of the quick run (under 3 minutes on 2 cores).
QUICK = {"curve_sizes": (1000, 2000, 4000), "curve_replicates": 2, "max_exact": 2000,
         "accuracy_replicates": 3, "tradeoff_sizes": (1000, 4000, 10_000), "tradeoff_replicates": 3,
         "krr_max_n": 4000, "centers_factor": 4.0, "accuracy_samplers": ACCURACY_SAMPLERS,
         "tradeoff_methods": TRADEOFF_METHODS, "grid_n": 1000, "grid_kernels": ("matern1.5", "rbf"),
         "grid_length_scales": (0.5, 2.0), "grid_reg_exponents": (0.5, 1.0), "grid_methods": GRID_METHODS}
#: Sizes of the full run (about two hours on 2 cores: exact scores at n = 16 000 and the grid's
#: 36 settings per data set at n = 4000 dominate).
FULL = {"curve_sizes": (1000, 4000, 16_000), "curve_replicates": 5, "max_exact": 6000,
        "accuracy_replicates": 10, "tradeoff_sizes": (1000, 4000, 16_000, 64_000), "tradeoff_replicates": 5,
        "krr_max_n": 8000, "centers_factor": 4.0, "accuracy_samplers": ACCURACY_SAMPLERS,
        "tradeoff_methods": TRADEOFF_METHODS, "grid_n": 4000, "grid_kernels": GRID_KERNELS,
        "grid_length_scales": (0.5, 1.0, 2.0), "grid_reg_exponents": (0.5, 0.75, 1.0),
        "grid_methods": GRID_METHODS}

_SYNTHETIC_LENGTH_SCALE, _REAL_LENGTH_SCALE = 0.5, 1.0


def _datasets(data, length_scale: float | None) -> list[DataSet]:
    """Built-in designs plus the given files (or, with none given, the shared CSVs if present)."""
    datasets = builtin_datasets()
    if length_scale is not None:
        for d in datasets:
            d.length_scale = length_scale
    files = list(data)
    if not files and shared_data_dir() is not None:
        files = sorted(shared_data_dir().glob("*.csv"))
        logger.info("using the shared data sets in %s: %s", shared_data_dir(),
                    ", ".join(f.name for f in files))
    real_scale = _REAL_LENGTH_SCALE if length_scale is None else length_scale
    datasets += [f if isinstance(f, DataSet) else csv_dataset(f, length_scale=real_scale) for f in files]
    return datasets


def estimate_seconds(config: dict, datasets: list[DataSet]) -> float:
    """Rough wall time of a run: exact scores timed once at n = 1500 (after a warm-up) and scaled as
    n³, plus near-linear fits (about 0.25 ms per point and sampler in the accuracy table, 0.05 ms per
    point and method, scores and Nyström fit, in the trade-off). The timing reflects the machine's
    load at the start.

    Examples
    --------
    >>> bool(estimate_seconds(QUICK, builtin_datasets()) > 0)
    True
    """
    exact_leverage(make_design("uniform", 200, 0), matern(0.5, 1.5), 1e-3)  # warm-up (BLAS threads)
    X = make_design("uniform", 1500, 0)
    start = time.perf_counter()
    exact_leverage(X, matern(0.5, 1.5), 1e-3)
    cubic = (time.perf_counter() - start) / 1500.0**3
    tradeoff = config["tradeoff_sizes"]
    n_data = [min(config["max_exact"], d.n_available or config["max_exact"]) for d in datasets]
    cubes = (len(DESIGNS_1D) * config["curve_replicates"] * sum(n**3 for n in config["curve_sizes"])
             + config["accuracy_replicates"] * sum(n**3 for n in n_data)
             + config["tradeoff_replicates"] * sum(n**3 for n in tradeoff if n <= config["krr_max_n"]))
    linear = (2.5e-4 * config["accuracy_replicates"] * len(config["accuracy_samplers"]) * sum(n_data)
              + 5e-5 * config["tradeoff_replicates"] * len(config["tradeoff_methods"]) * sum(tradeoff)
              + 5e-5 * len(DESIGNS_1D) * config["curve_replicates"] * sum(config["curve_sizes"]))
    grid = len(config["grid_kernels"]) * len(config["grid_length_scales"]) * len(config["grid_reg_exponents"])
    cubes += grid * len(datasets) * config["grid_n"] ** 3
    linear += 1e-3 * grid * len(datasets) * len(config["grid_methods"]) * config["grid_n"]
    return cubic * cubes + linear


def _peak_rss_mb() -> float | None:
    """Peak resident memory of this process in MB (None where ``resource`` is unavailable)."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (2**20 if sys.platform == "darwin" else 2**10)


def _command(quick, data, random_state, nu, length_scale, reg, blas_threads, out) -> str:
    words = ["spectral-leverage validate"] + (["--quick"] if quick else [])
    words += [f"--data {getattr(f, 'name', f)}" for f in data]
    words += [f"--seed {random_state}", f"--nu {nu:g}"]
    words += [f"--length-scale {length_scale:g}"] if length_scale is not None else []
    words += [f"--reg {reg:g}"] if reg is not None else []
    words += [f"--blas-threads {blas_threads or 0}"] if blas_threads != 1 else []
    return " ".join([*words, f"--out {out}"])


def _blas_limit(threads: int | None):
    if threads is None:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits  # a scikit-learn dependency

    return threadpool_limits(int(threads))


def _run_experiments(results: dict, config: dict, datasets: list[DataSet], timings: dict, *, nu,
                     synthetic_scale, reg, seed, progress) -> None:
    """The four experiments, in order, into ``results``; their wall times into ``timings``."""
    t = time.perf_counter()
    results["curves"] = leverage_curves(config["curve_sizes"], n_replicates=config["curve_replicates"], nu=nu,
                                        length_scale=synthetic_scale, reg=reg, random_state=seed,
                                        progress=progress)
    timings["curves"], t = time.perf_counter() - t, time.perf_counter()
    results["accuracy"] = accuracy_table(datasets, max_n=config["max_exact"],
                                         samplers=config["accuracy_samplers"],
                                         n_replicates=config["accuracy_replicates"], nu=nu, reg=reg,
                                         random_state=seed, progress=progress)
    timings["accuracy"], t = time.perf_counter() - t, time.perf_counter()
    results["tradeoff"] = regression_tradeoff(config["tradeoff_sizes"], methods=config["tradeoff_methods"],
                                              n_replicates=config["tradeoff_replicates"],
                                              nu=nu, length_scale=synthetic_scale, reg=reg,
                                              centers_factor=config["centers_factor"],
                                              krr_max_n=config["krr_max_n"], random_state=seed,
                                              progress=progress)
    timings["tradeoff"], t = time.perf_counter() - t, time.perf_counter()
    results["grid"] = hyperparameter_grid(datasets, n=config["grid_n"], kernels=config["grid_kernels"],
                                          length_scales=config["grid_length_scales"],
                                          reg_exponents=config["grid_reg_exponents"],
                                          methods=config["grid_methods"], random_state=seed,
                                          progress=progress)
    timings["grid"] = time.perf_counter() - t


def run_validation(out="report", *, quick: bool = False, data=(), random_state=0, nu: float = 1.5,
                   length_scale: float | None = None, reg: float | None = None, config: dict | None = None,
                   blas_threads: int | None = 1, progress: bool = False) -> dict:
    """Run the four experiments, write ``report.md``, the PNG figures and ``results.json`` to ``out``.

    Parameters
    ----------
    out : str or Path, default="report"
        Output folder (created if missing).
    quick : bool, default=False
        The :data:`QUICK` sizes (under 3 minutes on 2 cores) instead of :data:`FULL`.
    data : sequence of str, Path or DataSet
        Extra data sets for the accuracy table: CSV files (header row, numeric columns, target last;
        features standardised). Without any, the CSV files of ``../shared/data`` beside the project
        root are used when that folder exists. The built-in synthetic designs are always included.
        Nothing is downloaded.
    random_state : int or numpy Generator, default=0
        Seeds every replicate (each replicate's seed is recorded in ``results.json``).
    nu : float, default=1.5
        Matérn smoothness.
    length_scale : float or None
        Kernel length scale; None uses 0.5 on synthetic designs and 1 on standardised files.
    reg : float or None
        :math:`\\lambda`; None uses :math:`n^{-3/4}` for each n.
    config : dict, optional
        Overrides of the preset sizes (keys of :data:`QUICK`).
    blas_threads : int or None, default=1
        Threads of the BLAS / OpenMP pools during the run (threadpoolctl); None leaves them as they
        are. One thread gives reproducible timings, and on a shared, busy machine it is far faster
        (idle BLAS threads spin while they wait for a busy core).
    progress : bool, default=False
        tqdm progress bars (the command line shows them).

    Returns
    -------
    dict
        What ``results.json`` holds: ``meta`` (settings, seed, wall time, peak memory, machine,
        versions), ``curves``, ``accuracy``, ``tradeoff``, ``grid`` and ``figures`` (file names).

    Examples
    --------
    >>> results = run_validation("report", quick=True)  # doctest: +SKIP
    >>> sorted(results["figures"])  # doctest: +SKIP
    ['accuracy', 'grid', 'leverage_curves', 'relative_error', 'tradeoff']
    """
    require_matplotlib()
    start, started = time.perf_counter(), datetime.now(timezone.utc).isoformat(timespec="seconds")
    unknown = set(config or ()) - set(QUICK)
    if unknown:
        raise ValueError(f"unknown config keys {sorted(unknown)}; known: {sorted(QUICK)}.")
    config = {**(QUICK if quick else FULL), **(config or {})}
    seed = base_seed(random_state)
    out = Path(out)
    datasets = _datasets(data, length_scale)
    if blas_threads is not None and not (isinstance(blas_threads, int) and blas_threads >= 1):
        raise ValueError(f"blas_threads must be None or an int >= 1, got {blas_threads!r}.")
    out.mkdir(parents=True, exist_ok=True)
    synthetic_scale = _SYNTHETIC_LENGTH_SCALE if length_scale is None else length_scale
    results = {"meta": {"quick": quick, "random_state": seed, "started": started, "config": config,
                        "nu": nu, "length_scale": length_scale, "reg": reg, "blas_threads": blas_threads,
                        "command": _command(quick, data, seed, nu, length_scale, reg, blas_threads, out)}}
    timings = {}
    with _blas_limit(blas_threads):
        estimate = results["meta"]["estimated_seconds"] = estimate_seconds(config, datasets)
        logger.info("%s validation run, seed %d: estimated %.0f s (%.1f min) on this machine; writing to %s",
                    "quick" if quick else "full", seed, estimate, estimate / 60, out)
        _run_experiments(results, config, datasets, timings, nu=nu, synthetic_scale=synthetic_scale, reg=reg,
                         seed=seed, progress=progress)
    figures = {name: plot(results[experiment], out / f"{name}.png")
               for name, (experiment, plot) in FIGURES.items()}
    results["figures"] = {key: path.name for key, path in figures.items()}
    results["meta"].update({"experiment_seconds": timings, "wall_seconds": time.perf_counter() - start,
                            "peak_rss_mb": _peak_rss_mb(), "machine": machine_info()})
    write_results(results, out)
    write_report(results, out)
    logger.info("validation finished in %.0f s: %s", results["meta"]["wall_seconds"], out / "report.md")
    return results

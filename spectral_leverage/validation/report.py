"""``results.json`` (every number, the machine, versions, seeds) and ``report.md`` (tables and the
figures), written from the results dict of :func:`spectral_leverage.validation.run_validation`."""

from __future__ import annotations

import json
import math
import os
import platform
import sys
from importlib import metadata
from pathlib import Path

__all__ = ["machine_info", "to_json", "write_report", "write_results"]

_PACKAGES = ("spectral_leverage", "numpy", "scipy", "scikit-learn", "pykdtree", "matplotlib", "tqdm")


def machine_info() -> dict:
    """Platform, CPUs, memory and the versions of Python and the packages the results depend on.

    Examples
    --------
    >>> info = machine_info()
    >>> sorted(info)[:3], "numpy" in info["versions"]
    (['cpu_count', 'cpus_available', 'machine'], True)
    """
    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        memory = None
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"machine": platform.machine(), "platform": platform.platform(), "processor": platform.processor(),
            "cpu_count": os.cpu_count(), "cpus_available": available, "memory_gb": memory,
            "python": sys.version.split()[0], "versions": versions}


def to_json(value):
    """``value`` with numpy scalars as Python numbers, tuples as lists and NaN/inf as None (strict JSON).

    Examples
    --------
    >>> import numpy as np
    >>> to_json({"a": np.float64(1.5), "b": (np.int64(2), float("nan"))})
    {'a': 1.5, 'b': [2, None]}
    """
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_results(results: dict, out) -> Path:
    """Write ``out/results.json`` (strict JSON, see :func:`to_json`) and return its path.

    Examples
    --------
    >>> import tempfile
    >>> path = write_results({"x": float("inf")}, tempfile.mkdtemp())
    >>> path.read_text()
    '{\\n  "x": null\\n}'
    """
    path = Path(out) / "results.json"
    path.write_text(json.dumps(to_json(results), indent=2, allow_nan=False))
    return path


def _fmt(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}" if abs(value) >= 0.01 or value == 0 else f"{value:.{digits}g}"


def _table(header: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell if isinstance(cell, str) else _fmt(cell) for cell in row) + " |"
              for row in rows]
    return [*lines, ""]


def _curves_section(curves: dict, figures: dict) -> list[str]:
    s = curves["settings"]
    lines = ["## 1. Leverage curves on 1-D designs (Chen & Yang 2021, Fig. 2)", "",
             f"{s['kernel']}, λ = {s['reg_rule']}, {s['n_replicates']} replicate(s) (fresh data) per design "
             "and n. Designs: " + "; ".join(f"**{k}** {v}" for k, v in s["designs"].items()) + ". "
             "Relative error: mean over points of |spectral − exact| / exact rescaled score (absolute "
             "scale); R-ACC (shape only) and the ratio of effective dimensions are means over replicates.",
             ""]
    rows = []
    for entry in curves["summary"]:
        mine = [r for r in curves["rows"] if r["design"] == entry["design"] and r["n"] == entry["n"]]
        mean = {k: sum(r[k] for r in mine) / len(mine) for k in ("racc_mean", "racc_p05", "racc_p95",
                                                                  "racc_spearman", "racc_scale",
                                                                  "exact_seconds", "spectral_seconds")}
        error = f"{entry['relative_error_mean']:.3f} ± {entry['relative_error_sd']:.3f}"
        rows.append([entry["design"], entry["n"], error, mean["racc_mean"], mean["racc_p05"],
                     mean["racc_p95"], mean["racc_spearman"], mean["racc_scale"], mean["exact_seconds"],
                     mean["spectral_seconds"]])
    lines += _table(["design", "n", "relative error (± s.d.)", "mean R-ACC", "5th pct.", "95th pct.",
                     "Spearman", "d_eff ratio", "exact (s)", "spectral (s)"], rows)
    lines += [f"![Exact vs spectral rescaled scores]({figures['leverage_curves']})", "",
              f"![Relative error and effective dimension against n]({figures['relative_error']})", ""]
    return lines


def _accuracy_section(accuracy: dict, figures: dict) -> list[str]:
    s = accuracy["settings"]
    lines = ["## 2. Accuracy of every sampler against exact scores (Chen & Yang 2021, Table 1)", "",
             f"Matérn ν = {s['nu']}, λ = {s['reg_rule']}, {s['n_replicates']} replicate(s) per data set; "
             "time = median seconds to fit the sampler; mean R-ACC and the 5th / 95th percentiles are "
             "means over replicates of each replicate's value (1 is perfect); d_eff ratio = estimated / "
             "exact effective dimension (uniform sampling estimates none).", ""]
    for data in s["datasets"]:
        note = ""
        if data["n_available"] is not None and data["n_available"] > data["n_used"]:
            note = f" **Subsampled**: {data['n_used']} of {data['n_available']} rows per replicate."
        lines += [f"### {data['name']}", "", f"{data['description']}; n = {data['n_used']}, length scale "
                  f"{data['length_scale']:g}.{note}", ""]
        rows = [[r["sampler"], r["seconds"], r["mean"], r["p05"], r["p95"], r["spearman"], r["scale"]]
                for r in accuracy["summary"] if r["dataset"] == data["name"]]
        lines += _table(["sampler", "time (s)", "mean R-ACC", "5th pct.", "95th pct.", "Spearman",
                         "d_eff ratio"], rows)
    lines += [f"![R-ACC of every sampler]({figures['accuracy']})", ""]
    return lines


def _tradeoff_section(tradeoff: dict, figures: dict) -> list[str]:
    s = tradeoff["settings"]
    lines = ["## 3. Regression trade-off (Chen & Yang 2021, Fig. 1)", "",
             f"Design {s['design']}, f*(x) = {s['target']}, noise σ = {s['noise']}; Matérn ν = {s['nu']}, "
             f"ℓ = {s['length_scale']}, λ = {s['reg_rule']}; Nyström KRR with m = {s['centers_rule']} "
             f"centres drawn from each method's scores, or selected by it (k-means, greedy and randomly "
             "pivoted Cholesky, spectral-greedy, and adaptive-cholesky, which reads y to choose between "
             "the two pivotings: the time is then the selection's); medians over "
             f"{s['n_replicates']} replicate(s). "
             f"Risk = ‖f̂ − f*‖²/n in sample; exact KRR (n ≤ {s['krr_max_n']}) for reference.", ""]
    exact = {}
    for r in tradeoff["exact_krr"]:
        exact.setdefault(r["n"], []).append(r["risk"])
    rows = []
    for r in sorted(tradeoff["summary"], key=lambda r: (r["n"], s["methods"].index(r["method"]))):
        ratio = r["risk"] / sorted(exact[r["n"]])[len(exact[r["n"]]) // 2] if r["n"] in exact else None
        rows.append([r["n"], r["method"], r["n_centers"], r["score_seconds"], r["fit_seconds"],
                     f"{r['risk']:.3g}", ratio])
    lines += _table(["n", "method", "m", "scores or selection (s)", "Nyström fit (s)", "risk",
                     "risk / exact KRR (medians)"], rows)
    lines += [f"![In-sample risk against time to the centres]({figures['tradeoff']})", ""]
    return lines


def _grid_section(grid: dict, figures: dict) -> list[str]:
    s = grid["settings"]
    lines = ["## 4. Scores over the hyper-parameter grid", "",
             f"Kernels {', '.join(s['kernels'])} × "
             f"ℓ ∈ {{{', '.join(f'{v:g}' for v in s['length_scales'])}}} × "
             f"λ = n^-a, a ∈ {{{', '.join(f'{v:g}' for v in s['reg_exponents'])}}}; n = {s['n']}, "
             f"{s['n_replicates']} replicate(s). A setting is ok when R-ACC's 5th and 95th percentiles are "
             f"within [{s['ok_band'][0]}, {s['ok_band'][1]}] and the effective dimension within "
             f"[{s['ok_scale'][0]}, {s['ok_scale'][1]}] × exact. `spectral` is the default "
             "(`algorithm=\"auto\"`), `density` the density formula alone.", ""]
    rows = [[r["dataset"], r["method"], f"{100 * r['ok_share']:.0f} %", r["worst_p05"], r["worst_p95"],
             r["seconds"]] for r in grid["summary"]]
    lines += _table(["data", "method", "settings ok", "worst 5th pct.", "worst 95th pct.",
                     "median time (s)"], rows)
    lines += [f"![R-ACC percentiles over the grid]({figures['grid']})", ""]
    return lines


def write_report(results: dict, out) -> Path:
    """Write ``out/report.md``: settings, machine, one section per experiment with its table and
    figures (file names relative to ``out``, from ``results["figures"]``).

    Examples
    --------
    >>> import tempfile  # the full report needs a run: see run_validation
    >>> meta = {"quick": True, "random_state": 0, "wall_seconds": 1.0, "peak_rss_mb": 1.0,
    ...         "command": "x", "started": "now", "machine": machine_info()}
    >>> write_report({"meta": meta, "figures": {}}, tempfile.mkdtemp()).name
    'report.md'
    """
    meta, figures = results["meta"], results["figures"]
    machine = meta["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in machine["versions"].items() if v)
    lines = ["# spectral_leverage validation report", "",
             f"{'Quick' if meta['quick'] else 'Full'} run started {meta['started']}, "
             f"seed {meta['random_state']}, wall time {meta['wall_seconds']:.0f} s, "
             f"peak resident memory {_fmt(meta['peak_rss_mb'], 0)} MB. "
             f"Reproduce with `{meta['command']}`. Every number below, with each replicate's seed, is in "
             "`results.json`.", "",
             f"Machine: {machine['platform']}, {machine['cpus_available']} of {machine['cpu_count']} CPUs "
             f"available, BLAS threads {meta.get('blas_threads') or 'default'}; Python {machine['python']}; "
             f"{versions}.", ""]
    if "curves" in results:
        lines += _curves_section(results["curves"], figures)
    if "accuracy" in results:
        lines += _accuracy_section(results["accuracy"], figures)
    if "tradeoff" in results:
        lines += _tradeoff_section(results["tradeoff"], figures)
    if "grid" in results:
        lines += _grid_section(results["grid"], figures)
    path = Path(out) / "report.md"
    path.write_text("\n".join(lines))
    return path

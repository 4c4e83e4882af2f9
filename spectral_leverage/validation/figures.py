"""The validation figures (PNG, matplotlib), one function per figure, each reading only the plain
dicts the experiments return.

matplotlib's object-oriented API is used (no pyplot, no change of the user's backend). It is an
optional dependency: ``pip install "spectral_leverage[validate]"``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["FIGURES", "plot_accuracy", "plot_grid", "plot_leverage_curves", "plot_relative_error",
           "plot_tradeoff", "require_matplotlib"]

INSTALL_HINT = 'the validation figures need matplotlib: pip install "spectral_leverage[validate]"'
_DPI = 120


def require_matplotlib() -> None:
    """Raise ``ImportError`` with the install command when matplotlib is missing.

    Examples
    --------
    >>> require_matplotlib()
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError as err:
        raise ImportError(INSTALL_HINT) from err


def _figure(nrows: int, ncols: int, width: float, height: float, **kwargs):
    require_matplotlib()
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False, **kwargs)).ravel()


def _save(fig, path) -> Path:
    path = Path(path)
    fig.savefig(path, dpi=_DPI)
    return path


def _plain_ticks(ax, axis: str = "both") -> None:
    """Plain numbers (4, 6, 10; 1000, 2000) instead of 4×10⁰ on log axes spanning under a decade."""
    from matplotlib.ticker import FuncFormatter

    formatter = FuncFormatter(lambda value, _: f"{value:g}")
    for name in ("x", "y") if axis == "both" else (axis,):
        getattr(ax, f"{name}axis").set_major_formatter(formatter)
        getattr(ax, f"{name}axis").set_minor_formatter(formatter)


def _broken(x, y, gap: float):
    """x, y with NaN inserted where consecutive x differ by more than ``gap`` (no line over empty
    stretches of the design)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    cut = np.flatnonzero(np.diff(x) > gap) + 1
    return np.insert(x, cut, np.nan), np.insert(y, cut, np.nan)


def _colours(count: int):
    from matplotlib import colormaps

    return [colormaps["viridis"](v) for v in np.linspace(0.0, 0.85, max(count, 1))]


def plot_leverage_curves(curves: dict, path) -> Path:
    """Exact (solid) and spectral (dashed) rescaled scores against x, one panel per 1-D design,
    one colour per n (output of :func:`~spectral_leverage.validation.curves.leverage_curves`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from spectral_leverage.validation.curves import leverage_curves
    >>> out = leverage_curves(sizes=(200,), designs=("uniform",), n_replicates=1)
    >>> plot_leverage_curves(out, pathlib.Path(tempfile.mkdtemp()) / "c.png").stat().st_size > 0
    True
    """
    settings = curves["settings"]
    designs, sizes = list(settings["designs"]), settings["sizes"]
    fig, axes = _figure(1, len(designs), 4.2 * len(designs), 3.8)
    colours = dict(zip(sizes, _colours(len(sizes)), strict=True))
    for ax, design in zip(axes, designs, strict=True):
        for curve in (c for c in curves["curves"] if c["design"] == design):
            colour, gap = colours[curve["n"]], 0.05 * (max(curve["x"]) - min(curve["x"]))
            ax.plot(*_broken(curve["x"], curve["exact"], gap), "-", color=colour, lw=1.6,
                    label=f"exact, n = {curve['n']}")
            ax.plot(*_broken(curve["x"], curve["spectral"], gap), "--", color=colour, lw=1.6,
                    label=f"spectral, n = {curve['n']}")
        ax.set_yscale("log")
        _plain_ticks(ax, "y")
        ax.set_title(f"{design}: {settings['designs'][design]}", fontsize=9)
        ax.set_xlabel("x (input, dimensionless)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel(r"rescaled leverage $n\,l_i$")
    axes[-1].legend(fontsize=7, loc="best")
    fig.suptitle(f"Exact vs spectral rescaled leverage scores, {settings['kernel']}, "
                 f"λ = {settings['reg_rule']}", fontsize=10)
    return _save(fig, path)


def plot_relative_error(curves: dict, path) -> Path:
    """Mean relative error of the spectral scores (left) and the ratio of estimated to exact
    effective dimension (right) against n, log scales, one line per design, bars ±1 s.d. over
    replicates (output of :func:`~spectral_leverage.validation.curves.leverage_curves`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from spectral_leverage.validation.curves import leverage_curves
    >>> out = leverage_curves(sizes=(200, 300), designs=("uniform",), n_replicates=2)
    >>> plot_relative_error(out, pathlib.Path(tempfile.mkdtemp()) / "e.png").stat().st_size > 0
    True
    """
    settings = curves["settings"]
    fig, (left, right) = _figure(1, 2, 9.0, 3.8)
    for design, colour in zip(settings["designs"], _colours(len(settings["designs"])), strict=True):
        rows = [r for r in curves["rows"] if r["design"] == design]
        sizes = sorted({r["n"] for r in rows})
        for ax, value in ((left, lambda r: r["relative_error"]),
                          (right, lambda r: r["effective_dimension_spectral"]
                           / r["effective_dimension_exact"])):
            per_n = [[value(r) for r in rows if r["n"] == n] for n in sizes]
            ax.errorbar(sizes, [np.mean(v) for v in per_n], yerr=[np.std(v) for v in per_n], marker="o",
                        color=colour, capsize=3, label=design)
    left.set_yscale("log")
    left.set_ylabel(r"mean$_i$ $|\tilde s_i - n l_i| / (n l_i)$")
    left.set_title("Relative error of the spectral scores", fontsize=10)
    right.axhline(1.0, color="grey", lw=1, ls=":")
    right.set_ylabel(r"$\sum_i \tilde s_i \,/\, \sum_i n l_i$ (estimated / exact $d_\mathrm{eff}$)")
    right.set_title("Absolute scale", fontsize=10)
    for ax in (left, right):
        ax.set_xscale("log")
        _plain_ticks(ax)
        ax.set_xlabel("n (number of points, log scale)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"1-D designs, {settings['kernel']}, λ = {settings['reg_rule']}, "
                 f"{settings['n_replicates']} replicate(s) per n", fontsize=10)
    return _save(fig, path)


def plot_accuracy(accuracy: dict, path) -> Path:
    """R-ACC of every sampler, one panel per data set: the mean (dot) and the mean 5th–95th
    percentile interval (bar) over replicates; 1 is perfect (output of
    :func:`~spectral_leverage.validation.accuracy.accuracy_table`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from spectral_leverage.validation.accuracy import accuracy_table
    >>> from spectral_leverage.validation.data import builtin_datasets
    >>> out = accuracy_table(builtin_datasets()[:1], max_n=300, samplers=("spectral", "uniform"),
    ...                      n_replicates=1)
    >>> plot_accuracy(out, pathlib.Path(tempfile.mkdtemp()) / "a.png").stat().st_size > 0
    True
    """
    settings = accuracy["settings"]
    datasets, samplers = settings["datasets"], settings["samplers"]
    fig, axes = _figure(1, len(datasets), 3.2 * len(datasets) + 0.8, 0.45 * len(samplers) + 1.6, sharey=True)
    colours = dict(zip(samplers, _colours(len(samplers)), strict=True))
    for ax, data in zip(axes, datasets, strict=True):
        for y, name in enumerate(samplers):
            row = next(r for r in accuracy["summary"]
                       if r["dataset"] == data["name"] and r["sampler"] == name)
            ax.plot([row["p05"], row["p95"]], [y, y], "-", color=colours[name], lw=3, alpha=0.6)
            ax.plot(row["mean"], y, "o", color=colours[name])
        ax.axvline(1.0, color="grey", lw=1, ls=":")
        ax.set_title(f"{data['name']} (n = {data['n_used']}, ℓ = {data['length_scale']:g})", fontsize=9)
        ax.set_xlabel("R-ACC = q_i / p_i (dimensionless)")
        ax.grid(True, axis="x", alpha=0.3)
    axes[0].set_yticks(range(len(samplers)), samplers)
    axes[0].invert_yaxis()
    fig.suptitle(f"Sampling probabilities vs exact: mean R-ACC (dot) and 5th–95th percentiles (bar), "
                 f"Matérn ν = {settings['nu']}, λ = {settings['reg_rule']}, {settings['n_replicates']} "
                 "replicate(s)", fontsize=9)
    return _save(fig, path)


def plot_tradeoff(tradeoff: dict, path) -> Path:
    """In-sample risk of Nyström KRR against the seconds to its centres (scores, or a selector's
    selection), log–log, one marker per (method, n) (each n has its m), lines joining a method's n;
    exact KRR's risk as dotted levels
    (output of :func:`~spectral_leverage.validation.tradeoff.regression_tradeoff`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from spectral_leverage.validation.tradeoff import regression_tradeoff
    >>> out = regression_tradeoff(sizes=(300,), methods=("uniform",), krr_max_n=300)
    >>> plot_tradeoff(out, pathlib.Path(tempfile.mkdtemp()) / "t.png").stat().st_size > 0
    True
    """
    settings = tradeoff["settings"]
    fig, axes = _figure(1, 1, 6.8, 4.6)
    ax = axes[0]
    markers = "osD^vP*X"
    for k, (name, colour) in enumerate(zip(settings["methods"], _colours(len(settings["methods"])),
                                           strict=True)):
        rows = sorted((r for r in tradeoff["summary"] if r["method"] == name), key=lambda r: r["n"])
        seconds = [max(r["score_seconds"], 1e-5) for r in rows]
        ax.plot(seconds, [r["risk"] for r in rows], "-", marker=markers[k % len(markers)], color=colour, ms=7,
                label=name)
        if k == 0:  # n labels on one method only (the risk falls with n for every method)
            for r, t in zip(rows, seconds, strict=True):
                ax.annotate(f"n={r['n']}", (t, r["risk"]), textcoords="offset points", xytext=(6, 4),
                            fontsize=7, color=colour)
    for n in sorted({r["n"] for r in tradeoff["exact_krr"]}):
        risk = np.median([r["risk"] for r in tradeoff["exact_krr"] if r["n"] == n])
        ax.axhline(risk, color="grey", lw=1, ls=":")
        ax.annotate(f"exact KRR, n={n}", (0.01, risk), xycoords=("axes fraction", "data"), fontsize=7,
                    color="grey", va="bottom")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("time to the centres: scores or selection (s, log scale; uniform's is noise)")
    ax.set_ylabel(r"in-sample risk $\|\hat f - f^*\|^2 / n$ (log scale)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2, title="centres", title_fontsize=8)
    ax.set_title(f"Nyström KRR on the 3-D bimodal design, m = {settings['centers_rule']} centres,\n"
                 f"n = {', '.join(map(str, settings['sizes']))} (the risk falls with n), "
                 f"Matérn ν = {settings['nu']}, ℓ = {settings['length_scale']},\n"
                 f"λ = {settings['reg_rule']}, median of {settings['n_replicates']} replicate(s)", fontsize=9)
    return _save(fig, path)


def plot_grid(grid: dict, path) -> Path:
    """Heat maps of the hyper-parameter grid: one panel per (data set, method), a row per
    (kernel, ℓ) and a column per λ = n^-a; each cell reads "5th/95th percentile" of R-ACC, coloured
    by the larger deviation from 1 (white: exact; dark: off by 0.5 or more), framed where not ok."""
    from matplotlib.patches import Rectangle

    settings = grid["settings"]
    datasets = list(dict.fromkeys(r["dataset"] for r in grid["rows"]))
    methods, exponents = settings["methods"], settings["reg_exponents"]
    labels = [(k, ell) for k in settings["kernels"] for ell in settings["length_scales"]]
    fig, axes = _figure(len(datasets), len(methods), 2.3 * len(methods) + 1,
                        0.32 * len(labels) * len(datasets) + 1.2)
    for i, name in enumerate(datasets):
        for j, method in enumerate(methods):
            ax = axes[i * len(methods) + j]
            deviation = np.full((len(labels), len(exponents)), np.nan)
            for row in grid["rows"]:
                if row["dataset"] != name or row["method"] != method or row["replicate"]:
                    continue
                y = labels.index((row["kernel"], row["length_scale"]))
                x = exponents.index(row["reg_exponent"])
                deviation[y, x] = max(1 - row["p05"], row["p95"] - 1)
                ax.text(x, y, f"{row['p05']:.2f}/{row['p95']:.2f}", ha="center", va="center", fontsize=5.5,
                        color="white" if deviation[y, x] > 0.3 else "black")
                if not row["ok"]:
                    ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, edgecolor="red", lw=1))
            image = ax.imshow(deviation, cmap="Greys", vmin=0, vmax=0.5, aspect="auto")
            ax.set_xticks(range(len(exponents)), [f"n^-{a:g}" for a in exponents], fontsize=7)
            ax.set_yticks(range(len(labels)), [f"{k} ℓ={ell:g}" for k, ell in labels], fontsize=6)
            if j:
                ax.set_yticklabels([])
            ax.set_title(f"{name}: {method}", fontsize=8)
    fig.colorbar(image, ax=list(axes), shrink=0.5, label="max(1 - p05, p95 - 1)")
    return _save(fig, path)


#: The figures of a validation run, in the order they are drawn: each name is the PNG's stem and its
#: key in ``results["figures"]``, mapped to the experiment whose results it reads and its function.
FIGURES = {"leverage_curves": ("curves", plot_leverage_curves),
           "relative_error": ("curves", plot_relative_error),
           "accuracy": ("accuracy", plot_accuracy),
           "tradeoff": ("tradeoff", plot_tradeoff),
           "grid": ("grid", plot_grid)}

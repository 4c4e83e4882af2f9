r"""The spectral-analysis (SA) integral :math:`h(p)` of Chen & Yang (AISTATS 2021).

For a stationary kernel with radial spectral density :math:`s` (conventions in
:mod:`spectral_leverage.kernels`), regulariser :math:`\lambda` and input density value :math:`p`,

.. math::

    h(p) = \int_{\mathbb{R}^d} \frac{d\xi}{p + \lambda / s(\xi)}
         = S_{d-1} \int_0^\infty \frac{r^{d-1}\,dr}{p + \lambda / s(r)},
    \qquad S_{d-1} = \frac{2\pi^{d/2}}{\Gamma(d/2)},

and :math:`n\,l_i \approx h(p(x_i))` for the ridge leverage scores
:math:`l_i = [K(K + n\lambda I)^{-1}]_{ii}`. Three ways to evaluate it:

``"quadrature"`` (default)
    Adaptive Gauss–Kronrod (:func:`scipy.integrate.quad_vec`) of the exact polar integral, all
    :math:`p` at once. Exact for Matérn (keeps the :math:`2\nu/\ell^2` term) and Gaussian kernels.
``"asymptotic"`` (Matérn only)
    The paper's closed form (Appendix D), replacing :math:`2\nu/\ell^2 + 4\pi^2 r^2` by
    :math:`4\pi^2 r^2`: with :math:`\lambda/s(r) \approx c\,r^{2\alpha}`,
    :math:`h \approx S_{d-1}\,\pi/(2\alpha\sin(\pi d/(2\alpha)))\,p^{d/(2\alpha)-1} c^{-d/(2\alpha)}`.
    Accurate when the knee frequency is large (large :math:`p/\lambda`); fastest.
``"polylog"`` (Gaussian only)
    The closed form :math:`h = -(2\pi\ell^2)^{-d/2}\,\mathrm{Li}_{d/2}(-p/a)/p`,
    :math:`a = \lambda / (c\,(2\pi\ell^2)^{d/2})`, by :func:`mpmath.polylog` (reference; slow).

:math:`h` depends on :math:`x` only through :math:`p(x)`, is smooth and decreasing in :math:`p`,
so :func:`sa_scores` evaluates it on a log-spaced grid of :math:`p` refined until cubic-spline
interpolation in log–log coordinates is within ``rtol`` (default 1e-6) at every grid midpoint; the
final grid includes those midpoints, which makes it several times more accurate still (worst
seen 0.12·``rtol`` over random kernels, dimensions, ranges, :math:`\lambda` and ``rtol``, the
lookup table below included; the density it is applied to is known to about 1e-2). That
interpolant is tabulated finely for a fast lookup (adding at most ``rtol``/10).

Limits: :math:`h \to k(0)/\lambda` as :math:`p \to 0` (:math:`\int s = k(0)`); for Matérn,
:math:`h` approaches the asymptotic form as :math:`p/\lambda \to \infty`.
"""

from __future__ import annotations

import functools

import mpmath
import numpy as np
from scipy.integrate import quad_vec
from scipy.interpolate import CubicSpline
from scipy.special import gammaln, xlogy

from .._blocks import on_all_cores, row_chunks
from .._validation import check_positive
from ..kernels import StationaryKernel, log_spectral_density

__all__ = ["INTEGRALS", "check_unit_kernel", "knee_frequency", "sa_integral", "sa_scores", "score_function",
           "sphere_area"]

INTEGRALS = ("quadrature", "asymptotic", "polylog")


def sphere_area(d: float) -> float:
    """Surface area :math:`S_{d-1} = 2\\pi^{d/2}/\\Gamma(d/2)` of the unit sphere in R^d.

    Examples
    --------
    >>> round(sphere_area(3), 6) == round(4 * 3.141592653589793, 6)   # the 2-sphere: 4π
    True
    """
    return float(np.exp(np.log(2.0) + 0.5 * d * np.log(np.pi) - gammaln(0.5 * d)))


def check_integral(integral: str, kernel: StationaryKernel) -> None:
    """Raise ``ValueError`` for an unknown ``integral`` or one the kernel family lacks."""
    if integral not in INTEGRALS:
        raise ValueError(f"integral must be one of {INTEGRALS}, got {integral!r}.")
    if integral == "asymptotic" and kernel.family != "matern":
        raise ValueError(
            "integral='asymptotic' is the Matérn closed form; for the Gaussian (RBF) kernel use "
            "'quadrature' (fast) or 'polylog' (mpmath reference)."
        )
    if integral == "polylog" and kernel.family != "rbf":
        raise ValueError(
            "integral='polylog' is the Gaussian (RBF) closed form; for Matérn use 'quadrature' "
            "or 'asymptotic'."
        )


def _log_knee(kernel: StationaryKernel, log_p: np.ndarray, log_reg: float, d: float) -> np.ndarray:
    """log of the frequency radius where p = λ/s(r) (or of the kernel's own scale, if larger)."""
    ell = kernel.scalar_length_scale
    log_s0 = log_spectral_density(kernel, 0.0, d)
    if kernel.family == "rbf":
        # 2π²ℓ² r² = log s(0) − log λ + log p
        t = np.maximum(log_s0 - log_reg + log_p, 1.0)
        return 0.5 * np.log(t / (2 * np.pi**2 * ell**2))
    alpha = kernel.nu + 0.5 * d
    a = 2 * kernel.nu / ell**2
    # α log(a + 4π² r²) = α log a + log s(0) − log λ + log p
    x = np.exp(np.log(a) + (log_s0 - log_reg + log_p) / alpha)
    return 0.5 * np.log(np.maximum(x - a, a) / (4 * np.pi**2))


def _check_parsed(kernel) -> None:
    if not isinstance(kernel, StationaryKernel):
        raise TypeError(
            f"kernel must be a parsed StationaryKernel (spectral_leverage.kernels.parse_kernel(k), "
            f"or its .unit), got {type(kernel).__name__}."
        )


def check_unit_kernel(kernel) -> None:
    """``TypeError`` unless ``kernel`` is a parsed :class:`~spectral_leverage.kernels.StationaryKernel`,
    ``ValueError`` unless its length scale is 1 (the coordinates the densities here are in)."""
    _check_parsed(kernel)
    if kernel.scalar_length_scale != 1.0:
        raise ValueError("kernel must have unit length scale: pass parse_kernel(k).unit and densities "
                         "in the coordinates X / length_scale.")


def knee_frequency(p, kernel: StationaryKernel, reg: float, d: float) -> np.ndarray:
    r"""Angular knee frequency :math:`\omega_* = 2\pi\rho_*` where :math:`p\,s(\rho_*) = \lambda`
    (or, if larger, the kernel's own scale: :math:`\sqrt{2\nu}/\ell` for Matérn, :math:`\sqrt 2/\ell`
    for the Gaussian): the integrand of :math:`h(p)` turns over there, and :math:`1/\omega_*` is the
    length of the equivalent kernel.

    Parameters
    ----------
    p : array_like
        Density values, finite and > 0.
    kernel : StationaryKernel
        An isotropic kernel.
    reg, d : float
        :math:`\lambda > 0` and the dimension (> 0), as in :func:`sa_integral`.

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> from spectral_leverage.kernels import parse_kernel
    >>> unit = parse_kernel(RBF(1.0)).unit
    >>> w = knee_frequency([1.0], unit, 1e-4, 1)
    >>> s = np.exp(log_spectral_density(unit, w / (2 * np.pi), 1))
    >>> np.round(s / 1e-4, 8)  # p s(ρ*) = λ
    array([1.])
    """
    _check_parsed(kernel)
    p, _, _ = _density_range(p)
    return _knee_frequency(p, kernel, check_positive(reg, "reg"), check_positive(d, "d"))


def _knee_frequency(p: np.ndarray, kernel: StationaryKernel, reg: float, d: float) -> np.ndarray:
    """Unchecked :func:`knee_frequency` (for callers that validated their input once)."""
    return 2 * np.pi * np.exp(_log_knee(kernel, np.log(p), float(np.log(reg)), float(d)))


def _quadrature(p: np.ndarray, kernel: StationaryKernel, reg: float, d: float) -> np.ndarray:
    log_p, log_reg = np.log(p), np.log(reg)
    log_rc = _log_knee(kernel, log_p, log_reg, d)
    log_den_c = np.logaddexp(log_p, log_reg - log_spectral_density(kernel, np.exp(log_rc), d))

    # Substitute r = r_c t: every component has its knee at t = 1 and equals 1 there, so the
    # max-norm error control of quad_vec is a relative error control for every p.
    def integrand(t):
        log_den = np.logaddexp(log_p, log_reg - log_spectral_density(kernel, np.exp(log_rc) * t, d))
        return np.exp(xlogy(d - 1, t) + log_den_c - log_den)

    integral, _err = quad_vec(integrand, 0.0, np.inf, epsrel=1e-11, epsabs=0.0, norm="max",
                              points=[1.0], limit=10_000)
    return sphere_area(d) * np.exp(d * log_rc - log_den_c) * integral


def _asymptotic(p: np.ndarray, kernel: StationaryKernel, reg: float, d: float) -> np.ndarray:
    alpha = kernel.nu + 0.5 * d
    # λ/s(r) ≈ c r^{2α} when 4π²r² ≫ 2ν/ℓ²: log c = log λ − log s(r) − 2α log r at large r.
    log_s_over_tail = log_spectral_density(kernel, 0.0, d) + alpha * np.log(
        2 * kernel.nu / kernel.scalar_length_scale**2
    )
    log_c = np.log(reg) - log_s_over_tail + 2 * alpha * np.log(2 * np.pi)
    beta = d / (2 * alpha)
    const = sphere_area(d) * np.pi / (2 * alpha * np.sin(np.pi * beta))
    return const * np.exp((beta - 1) * np.log(p) - beta * log_c)


def _polylog(p: np.ndarray, kernel: StationaryKernel, reg: float, d: float) -> np.ndarray:
    ell = kernel.scalar_length_scale
    two_pi_l2 = 2 * np.pi * ell**2
    a = reg / (kernel.amplitude * two_pi_l2 ** (0.5 * d))
    with mpmath.workdps(30):
        li = np.array([float(mpmath.re(mpmath.polylog(0.5 * d, -mpmath.mpf(pi) / a))) for pi in p])
    return -(two_pi_l2 ** (-0.5 * d)) * li / p


def _density_range(p) -> tuple[np.ndarray, float, float]:
    """(``p`` as a float array, its min, its max); ``ValueError`` unless every value is finite
    and > 0 (NaN fails the comparison of the min). An empty ``p`` has range (1, 1)."""
    p = np.asarray(p, dtype=float)
    if p.size == 0:
        return p, 1.0, 1.0
    lo, hi = float(p.min()), float(p.max())
    if not (lo > 0 and hi < np.inf):
        raise ValueError("p (density values) must be finite and > 0.")
    return p, lo, hi


_METHODS = {"quadrature": _quadrature, "asymptotic": _asymptotic, "polylog": _polylog}


def sa_integral(p, kernel: StationaryKernel, reg: float, d: float,
                integral: str = "quadrature") -> np.ndarray:
    """Evaluate :math:`h(p)` directly at every density value (no interpolation).

    Parameters
    ----------
    p : array_like of shape (m,)
        Density values, > 0, in the coordinates where ``kernel`` is defined.
    kernel : StationaryKernel
        An isotropic kernel (scalar length scale).
    reg : float
        :math:`\\lambda > 0` (leverage :math:`K(K + n\\lambda I)^{-1}`).
    d : float
        Dimension of the integral (ambient or intrinsic), >= 1.
    integral : {"quadrature", "asymptotic", "polylog"}

    Returns
    -------
    h : ndarray of shape (m,)
        Approximate rescaled leverage :math:`n\\,l`.

    Examples
    --------
    The Gaussian kernel's integral by quadrature agrees with its closed form (a polylogarithm):

    >>> from sklearn.gaussian_process.kernels import RBF
    >>> from spectral_leverage.kernels import parse_kernel
    >>> unit = parse_kernel(RBF(1.0)).unit
    >>> quad = sa_integral([0.5, 5.0], unit, reg=1e-3, d=2)
    >>> closed = sa_integral([0.5, 5.0], unit, reg=1e-3, d=2, integral="polylog")
    >>> bool(np.allclose(quad, closed, rtol=1e-8)), bool(quad[0] > quad[1])
    (True, True)
    """
    check_integral(integral, kernel)
    p, _, _ = _density_range(p)
    if p.size == 0:
        return np.empty(0)
    return _METHODS[integral](p, kernel, float(reg), float(d))


def sa_scores(p, kernel: StationaryKernel, reg: float, d: float, integral: str = "quadrature",
              *, rtol: float = 1e-6) -> np.ndarray:
    """:math:`h(p)` for many density values via an adaptively refined log-spaced grid.

    The grid spans ``[min p, max p]`` and is doubled until cubic-spline interpolation of
    :math:`\\log h` against :math:`\\log p` matches direct evaluation within ``rtol`` (relative) at
    every midpoint. Cost: one or two vectorised integrals over 32–64 grid points per decade of p,
    then a table lookup per value (details in ``_GridInterpolant``).

    Parameters are those of :func:`sa_integral`; ``p`` has any shape and must be > 0.

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> from spectral_leverage.kernels import parse_kernel
    >>> unit = parse_kernel(Matern(1.0, nu=1.5)).unit
    >>> p = np.geomspace(0.01, 100.0, 1000)
    >>> h = sa_scores(p, unit, reg=1e-4, d=3)
    >>> bool(np.allclose(h[::100], sa_integral(p[::100], unit, 1e-4, 3), rtol=1e-7))
    True
    """
    check_integral(integral, kernel)
    rtol = check_positive(rtol, "rtol")
    p, lo, hi = _density_range(p)
    flat = p.ravel()
    return score_function(lo, hi, flat.size, kernel, reg, d, integral, rtol=rtol)(flat).reshape(p.shape)


def score_function(lo: float, hi: float, size: int, kernel: StationaryKernel, reg: float, d: float,
                   integral: str = "quadrature", *, rtol: float = 1e-6):
    """The evaluator of :math:`h` that :func:`sa_scores` uses for ``size`` density values in
    ``[lo, hi]``: direct integration for a few values (at most 64) or a constant density, else the
    p-grid. Picklable, so a distributed fit builds it once and ships it to the workers.

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> from spectral_leverage.kernels import parse_kernel
    >>> unit = parse_kernel(RBF(1.0)).unit
    >>> p = np.geomspace(0.1, 10.0, 500)
    >>> h = score_function(0.1, 10.0, p.size, unit, reg=1e-3, d=2)
    >>> bool(np.array_equal(h(p), sa_scores(p, unit, reg=1e-3, d=2)))
    True
    """
    if size <= 64 or hi <= lo * (1 + 1e-12):
        return functools.partial(sa_integral, kernel=kernel, reg=reg, d=d, integral=integral)
    return _GridInterpolant(lo, hi, kernel, reg, d, integral, rtol=rtol)


class _GridInterpolant:
    r""":math:`h(p)` on ``[lo, hi]``: the adaptively refined p-grid of :func:`sa_scores`, built once
    and evaluated as often as needed (the distributed path broadcasts it to the workers).

    The grid is uniform in :math:`\log p`, starting at 16 cells per decade and halved until a cubic spline
    through the grid matches direct evaluation at every midpoint within ``rtol``; the grid and its
    midpoints are integrated in one vectorised call per level (the cost of :func:`quad_vec` is its
    subdivision, not the number of components). The spline is then tabulated on a uniform grid in
    :math:`\log p` and evaluated by direct indexing and linear interpolation: a few array passes
    per value instead of a binary search and a cubic. The table's step is
    :math:`\delta = \sqrt{3.2\,\mathrm{rtol}}` (at least 1024 cells), so that it adds at most
    :math:`\delta^2/32 = \mathrm{rtol}/10` relative error, because
    :math:`(\log h)'' = \mathrm{Var}(w) - E[w(1-w)]` lies in :math:`[-1/4, 1/4]`, with
    :math:`w = p/(p + \lambda/s(\xi))` and the expectation over :math:`\xi` with density
    proportional to :math:`1/(p + \lambda/s(\xi))` (the spline's own curvature stays well inside
    that bound). A range needing more than ``2**22`` cells is evaluated with the spline itself.
    Values of p outside ``[lo, hi]`` are extrapolated linearly in log–log from the end cells:
    accurate only just outside (:func:`sa_scores` always builds the grid over its own p)."""

    CELLS_PER_DECADE = 16
    MIN_TABLE_CELLS, MAX_TABLE_CELLS = 2**10, 2**22
    CHUNK = 2**16

    def __init__(self, lo: float, hi: float, kernel: StationaryKernel, reg: float, d: float,
                 integral: str, *, rtol: float = 1e-6):
        def log_h(log_p):
            return np.log(sa_integral(np.exp(log_p), kernel, reg, d, integral))

        log_lo, log_hi = np.log(lo), np.log(hi)
        n_cells = max(self.CELLS_PER_DECADE,
                      int(np.ceil(self.CELLS_PER_DECADE * (log_hi - log_lo) / np.log(10))))
        grid = np.linspace(log_lo, log_hi, 2 * n_cells + 1)  # the grid and its midpoints
        values = log_h(grid)
        while True:
            coarse, mids = grid[0::2], grid[1::2]
            interp = CubicSpline(coarse, values[0::2])(mids)
            # log-space error ≈ relative error of h
            if np.max(np.abs(interp - values[1::2])) <= rtol or grid.size > 2**16:
                break
            new_mids = 0.5 * (grid[1:] + grid[:-1])
            merged = np.empty(grid.size + new_mids.size)
            merged[0::2], merged[1::2] = grid, new_mids
            merged_values = np.empty_like(merged)
            merged_values[0::2], merged_values[1::2] = values, log_h(new_mids)
            grid, values = merged, merged_values
        interpolant = CubicSpline(grid, values)
        cells = max(self.MIN_TABLE_CELLS, int(np.ceil((log_hi - log_lo) / np.sqrt(3.2 * rtol))))
        if cells > self.MAX_TABLE_CELLS:
            self._interpolant, self._table = interpolant, None
            return
        self._log_lo, self._step, self._cells = log_lo, (log_hi - log_lo) / cells, cells
        table = interpolant(np.linspace(log_lo, log_hi, cells + 1))
        self._table, self._slope = table[:-1], np.diff(table)

    def __call__(self, p: np.ndarray) -> np.ndarray:
        """:math:`h(p)` for ``lo <= p <= hi`` (see the class docstring for values outside)."""
        p = np.asarray(p, dtype=float)
        flat, out = p.ravel(), np.empty(p.size)

        def fill(rows: slice) -> None:
            t = np.log(flat[rows])
            if self._table is None:
                t = self._interpolant(t)
            else:
                t -= self._log_lo
                t /= self._step
                cell = np.clip(t, 0, self._cells - 1).astype(np.intp)
                t -= cell
                t *= self._slope[cell]
                t += self._table[cell]
            np.exp(t, out=out[rows])

        on_all_cores(fill, row_chunks(flat.size, 1.0, self.CHUNK))
        return out.reshape(p.shape)

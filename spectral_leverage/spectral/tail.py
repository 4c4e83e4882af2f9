r"""The SA integral above a cut-off frequency: how much of a kernel's high-frequency tail the data
learn.

A low-rank factor :math:`FF^\top` of the kernel matrix (pivoted Cholesky on a few rows) resolves
the kernel's low frequencies; its residual :math:`R = K - FF^\top` is the short-ranged rest. At row
:math:`i` the residual's prior variance is :math:`r_i = R_{ii}`. Model that rest locally as the
kernel's spectrum above a cut-off :math:`\rho_i` (conventions of :mod:`spectral_leverage.kernels`),
the cut-off that carries that variance:

.. math::

    r_i = S_{d-1} \int_{\rho_i}^\infty \rho^{d-1} s(\rho)\,d\rho .

Observed at density :math:`p` with noise variance :math:`n\lambda` per row, each frequency's prior
variance :math:`s` shrinks to :math:`s\lambda/(\lambda + ps)` (the SA argument of
:mod:`spectral_leverage.spectral.quadrature`, restricted to the tail), so the tail's posterior
variance at :math:`x_i` is

.. math::

    \tau(p_i, r_i) = \lambda\,S_{d-1} \int_{\rho_i}^\infty \frac{\rho^{d-1}\,d\rho}{p_i + \lambda/s(\rho)}
    \;\le\; r_i .

With no factor (:math:`r_i = k(0)`) this is :math:`\lambda h(p_i)`, the posterior variance of the
density formula; a tail far above the knee frequency is not learned at all (:math:`\tau = r`). The
full-scale leverage (:mod:`spectral_leverage.spectral.full_scale`) adds :math:`\tau` to the factor's
leave-one-out variance where the data's windows hold many rows, and conditions on the nearest rows
where the tail is learned from a few.

Both integrals are tabulated once: cumulative trapezoid sums from the top of a log-spaced grid of
:math:`\rho` (:data:`STEPS_PER_DECADE`), for a log-spaced grid of :math:`p`; each row then needs two
interpolations (:class:`scipy.interpolate.RegularGridInterpolator` of :math:`\log(\tau/r)`, linear
in :math:`\log p` and in the cut-off's grid position: within 0.2 % of quadrature between the nodes,
where interpolating :math:`\tau/r` itself, convex in :math:`\log p`, overshot by up to 1 %). The
grid stops three decades above the densest row's knee: a Matérn tail beyond it, which decays as
:math:`\rho^{-2\nu}`, is left out (about 0.1 % of it at :math:`\nu = 1/2`).
"""

from __future__ import annotations

import numpy as np
from scipy.interpolate import RegularGridInterpolator
from scipy.special import expit

from ..kernels import StationaryKernel, log_spectral_density
from .quadrature import _knee_frequency, check_unit_kernel, sphere_area

__all__ = ["TailVariance"]

#: Points per decade of the frequency grid (end-corrected trapezoid sums in log frequency; the
#: Gaussian's tail falls by e per 1/80 decade near one cycle per length scale in 5-D).
STEPS_PER_DECADE = 320
#: Points per decade of the density grid (at least 16 points in all, at most MAX_DENSITIES: the
#: table holds MAX_DENSITIES x 320 x (decades of frequency) floats at most, a few MiB).
DENSITIES_PER_DECADE = 8
MAX_DENSITIES = 256
#: Lowest frequency of the grid (cycles per length scale), where the spectral densities are largest.
LOW_FREQUENCY = 1e-4
#: Densities below the one at which no frequency of the grid is learned beyond this share
#: (:math:`p\,s(\rho) \le` UNLEARNED :math:`\lambda`) are looked up there: their tail is unlearned to
#: that precision. A far row's density (the tree KDE's, underflowing to 2e-308 at 10⁴ length scales
#: from 10⁵ rows) would otherwise spread the table over 300 decades, past float range.
UNLEARNED = 1e-6


class TailVariance:
    r"""Posterior variance :math:`\tau(p, r)` of a kernel's spectral tail of prior variance r,
    observed at density p (module docstring).

    Parameters
    ----------
    kernel : StationaryKernel
        Isotropic, unit length scale (``parse_kernel(k).unit``): p is a density in the coordinates
        :math:`x/\ell`.
    reg : float
        :math:`\lambda > 0`.
    d : float
        Dimension of the integrals (ambient or intrinsic), > 0.
    p_range : (float, float)
        Smallest and largest density to be looked up, > 0; values outside are clipped to it.

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> from spectral_leverage.kernels import parse_kernel
    >>> from spectral_leverage.spectral.quadrature import sa_integral
    >>> unit = parse_kernel(Matern(1.0, nu=1.5)).unit
    >>> tail = TailVariance(unit, 1e-4, 3, (0.1, 10.0))
    >>> whole = tail(np.array([1.0]), np.array([1.0]))    # the whole spectrum: lambda * h(p)
    >>> bool(np.isclose(whole[0], 1e-4 * sa_integral([1.0], unit, 1e-4, 3)[0], rtol=1e-3))
    True
    >>> far = tail(np.array([1.0]), np.array([1e-9]))     # far above the knee: not learned
    >>> bool(np.isclose(far[0], 1e-9, rtol=1e-3))
    True
    """

    def __init__(self, kernel: StationaryKernel, reg: float, d: float, p_range: tuple[float, float]):
        check_unit_kernel(kernel)
        lo, hi = (float(v) for v in p_range)
        if not 0 < lo <= hi < np.inf:
            raise ValueError(f"p_range must be finite with 0 < low <= high, got {p_range!r}.")
        # below this density nothing is learned (UNLEARNED): lower densities are looked up there
        largest = float(np.exp(log_spectral_density(kernel, np.array([LOW_FREQUENCY]), d)[0]))
        unlearned = UNLEARNED * reg / largest
        lo = min(max(lo, unlearned), hi)
        if hi < lo * 1.01:  # one density (a known constant one, say): a grid of a few per cent around it
            lo, hi = lo / 1.01, hi * 1.01
        # frequencies: from far below the kernel's scale to far above the densest row's knee
        top = max(1.0, float(_knee_frequency(np.array([hi]), kernel, reg, d)[0]) / (2 * np.pi))
        log_rho = np.linspace(np.log(LOW_FREQUENCY), np.log(1e3 * top),
                              int(STEPS_PER_DECADE * np.log10(1e3 * top / LOW_FREQUENCY)) + 1)
        decades = np.log10(hi) - np.log10(lo)
        log_p = np.linspace(np.log(lo), np.log(hi),
                            min(MAX_DENSITIES, max(16, int(DENSITIES_PER_DECADE * decades) + 1)))
        log_s = log_spectral_density(kernel, np.exp(log_rho), d)
        step = log_rho[1] - log_rho[0]
        # integrands in d(log rho): the prior's rho^d s(rho), and its share left after learning,
        # lambda / (lambda + p s) = expit(log lambda - log p - log s); one density at a time (the
        # table, not its temporaries, is what stays)
        prior = sphere_area(d) * np.exp(d * log_rho + log_s)
        tail_prior = _upper_sums(prior, step)
        # the unlearned share tau / r, a function of (log p, position of the cut-off on the grid),
        # tabulated as its log; where the tail's prior underflows it is 1 (nothing is learned there)
        share = np.ones((log_p.size, log_rho.size))
        for row, value in zip(share, log_p, strict=True):
            posterior = _upper_sums(prior * expit(np.log(reg) - value - log_s), step)
            np.divide(posterior, tail_prior, out=row, where=tail_prior > 0)
        np.log(np.clip(share, np.finfo(float).tiny, 1.0), out=share)
        self._log_prior = np.log(np.maximum(tail_prior, np.finfo(float).tiny))[::-1]  # increasing
        self._positions = np.arange(log_rho.size, dtype=float)[::-1]
        self._log_share = RegularGridInterpolator((log_p, np.arange(log_rho.size, dtype=float)), share)
        self._log_p_range = (log_p[0], log_p[-1])

    def __call__(self, p: np.ndarray, r: np.ndarray) -> np.ndarray:
        r""":math:`\tau` at densities p and tail prior variances r (arrays of one shape): in
        :math:`[0, r]`."""
        r = np.asarray(r, dtype=float)
        position = np.interp(np.log(np.maximum(r, np.finfo(float).tiny)), self._log_prior, self._positions)
        log_p = np.clip(np.log(p), *self._log_p_range)
        log_share = self._log_share(np.column_stack([log_p.ravel(), position.ravel()]))
        return r * np.exp(log_share).reshape(r.shape)


def _upper_sums(values: np.ndarray, step: float) -> np.ndarray:
    """Integrals of ``values`` (last axis, spacing ``step``) from each grid point to the end: trapezoid
    sums with the Euler–Maclaurin end correction :math:`h^2 f'(a)/12` at the lower end (the upper
    end's correction is left out with the tail beyond the grid), fourth order in the step."""
    pieces = 0.5 * step * (values[..., 1:] + values[..., :-1])
    out = np.zeros(values.shape)
    out[..., :-1] = np.cumsum(pieces[..., ::-1], axis=-1)[..., ::-1]
    return np.maximum(out + step**2 / 12 * np.gradient(values, step, axis=-1, edge_order=2), 0.0)

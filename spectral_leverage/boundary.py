r"""Boundary correction of the SA scores: a half-space model read off the KDE's slope.

The SA approximation :math:`n\,l(x) \approx h(p(x))` (:mod:`spectral_leverage.leverage`) treats
the density as constant over the reach of the *equivalent kernel*, whose length is
:math:`r = 1/\omega_*` with :math:`\omega_* = 2\pi\rho_*` the knee frequency,
:math:`p\,s(\rho_*) = \lambda`. Near a face of the support that fails: no data lie beyond the face,
and exact leverage there exceeds :math:`h` of the interior density by a factor of 2–3 (a point at
a face has half the neighbours that would pin down its value). A Gaussian KDE of bandwidth
:math:`b` sees half of that: at distance :math:`t` from a flat face it reads
:math:`\hat p = p_{\mathrm{in}}\,\Phi(t/b)`, half the interior density at the face.

The correction fits that half-space model at every point from the KDE and the norm of its
log-gradient in whitened coordinates :math:`w = x/b` (:meth:`BinnedDensity.log_density_slope
<spectral_leverage.density.BinnedDensity.log_density_slope>`): for the half-space,
:math:`\|\nabla_w \log \hat p\| = M(u) = \varphi(u)/\Phi(u)` (the inverse Mills ratio) with
:math:`u = t/b`, so

.. math::

    u = M^{-1}(\|\nabla_w \log \hat p\|) \ge 0, \qquad p_{\mathrm{in}} = \hat p / \Phi(u), \qquad
    p_{\mathrm{eff}} = p_{\mathrm{in}}\,\Phi(\kappa u)^2, \qquad
    \kappa = b\,\omega_*(p_{\mathrm{in}}),

and the scores are :math:`h(p_{\mathrm{eff}})`: the density deficit of the face, squared, on the
equivalent kernel's own length :math:`1/\omega_*` instead of the KDE's :math:`b` (both in the
kernel's unit-length coordinates; with several length scales or bandwidths, their geometric mean).
Away from faces the slope is small, :math:`u` large and :math:`p_{\mathrm{eff}} = \hat p`. At a face
:math:`p_{\mathrm{eff}} = p_{\mathrm{in}}/4`, which in the scale-free regime
(:math:`h \propto p^{d/(2\alpha)-1}`, :math:`\alpha = \nu + d/2`) raises the score
:math:`4^{1-d/(2\alpha)}`-fold over the interior: 2 for the Laplace kernel in 1-D (Matérn
:math:`\nu = 1/2`), as the method of images gives for its free (Neumann) boundary, and
:math:`2^{3/2}` for :math:`\nu = 3/2` in 1-D, where exact leverage on a uniform interval measures
2.9. Squaring the deficit is a closure checked against exact scores, not derived: the validation
page and ``tests/test_boundary.py`` measure it on uniform, bimodal, sparse-mode, Gaussian and real
data. Where the slope comes from a smooth density rather than a face (Gaussian tails) the model
reads a face that is not there and lowers the 5th percentile of R-ACC by about 0.05.

Nothing here needs the data: two numbers per point and the kernel.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, ndtr

from ._validation import check_positive
from .kernels import StationaryKernel
from .quadrature import knee_frequency

__all__ = ["boundary_density", "half_space_depth"]

# the inverse Mills ratio M(u) = φ(u)/Φ(u) on u in [0, 8] (decreasing from sqrt(2/π) to 1.3e-14):
# tabulated once and inverted by interpolation in u against -M
_U = np.linspace(0.0, 8.0, 4097)
_M = np.exp(-0.5 * _U**2 - 0.5 * np.log(2 * np.pi) - log_ndtr(_U))


def half_space_depth(slope) -> np.ndarray:
    r"""Depth :math:`u = t/b \ge 0` of a point inside a half-space, in bandwidths, from the norm
    of the log-gradient of a Gaussian KDE there (whitened coordinates).

    Inverts :math:`\|\nabla_w \log \hat p\| = \varphi(u)/\Phi(u)`. A slope at or above
    :math:`\sqrt{2/\pi}` (the value at the face) gives 0, one below :math:`10^{-14}` gives 8.

    Parameters
    ----------
    slope : array_like
        :math:`\|\nabla_w \log \hat p\| \ge 0`, finite.

    Returns
    -------
    ndarray of the shape of ``slope``

    Examples
    --------
    >>> from scipy.stats import norm
    >>> u = np.array([0.0, 0.5, 2.0])
    >>> np.round(half_space_depth(norm.pdf(u) / norm.cdf(u)), 6)
    array([0. , 0.5, 2. ])
    """
    slope = np.asarray(slope, dtype=float)
    if not np.all(np.isfinite(slope)) or np.any(slope < 0):
        raise ValueError("slope (norm of the KDE's log-gradient) must be finite and >= 0.")
    return np.interp(-slope, -_M, _U)


def boundary_density(p, slope, kernel: StationaryKernel, reg: float, d: float,
                     bandwidth: float) -> np.ndarray:
    r"""Effective density :math:`p_{\mathrm{eff}}` of the half-space model (module docstring), to
    be passed to :func:`~spectral_leverage.quadrature.sa_scores` in place of the KDE's :math:`\hat p`.

    Parameters
    ----------
    p : array_like of shape (n,)
        KDE values :math:`\hat p > 0` in the kernel's unit-length coordinates.
    slope : array_like of shape (n,)
        :math:`\|\nabla_w \log \hat p\|` at the same points, :math:`w = x/b`.
    kernel : StationaryKernel
        The kernel with unit length scale (``parse_kernel(k).unit``).
    reg : float
        :math:`\lambda > 0`.
    d : float
        Dimension of the SA integral.
    bandwidth : float
        The KDE's bandwidth :math:`b > 0` in the kernel's unit-length coordinates.

    Returns
    -------
    ndarray of shape (n,)
        :math:`p_{\mathrm{eff}} \in [\hat p/4,\ 2\hat p]`; :math:`\hat p/2` where the slope is that
        of a face, :math:`\hat p` where it is 0.

    Examples
    --------
    At a face (slope :math:`\sqrt{2/\pi}`) the KDE reads half the interior density and the
    effective density is a quarter of it; deep inside nothing changes:

    >>> from sklearn.gaussian_process.kernels import Matern
    >>> from spectral_leverage.kernels import parse_kernel
    >>> unit = parse_kernel(Matern(1.0, nu=1.5)).unit
    >>> p_eff = boundary_density([0.5, 1.0], [np.sqrt(2 / np.pi), 0.0], unit, 1e-3, 3, 0.2)
    >>> np.round(p_eff, 6)
    array([0.25, 1.  ])
    """
    p = np.asarray(p, dtype=float)
    slope = np.asarray(slope, dtype=float)
    if p.shape != slope.shape:
        raise ValueError(f"p and slope must have the same shape; got {p.shape} and {slope.shape}.")
    if not np.all(np.isfinite(p)) or np.any(p <= 0):
        raise ValueError("p (density values) must be finite and > 0.")
    bandwidth = check_positive(bandwidth, "bandwidth")
    u = half_space_depth(slope)
    p_inside = p / ndtr(u)
    kappa = bandwidth * knee_frequency(p_inside, kernel, check_positive(reg, "reg"), d)
    # beyond the table (slope < 1e-14) no face is in sight: the KDE stands
    return np.where(u < _U[-1], p_inside * ndtr(kappa * u) ** 2, p)

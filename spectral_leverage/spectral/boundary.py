r"""Boundary correction of the SA scores: a half-space model read off the KDE's slope.

The SA approximation :math:`n\,l(x) \approx h(p(x))` (:mod:`spectral_leverage.spectral.leverage`) treats
the density as constant over the reach of the *equivalent kernel*, whose length is
:math:`r = 1/\omega_*` with :math:`\omega_* = 2\pi\rho_*` the knee frequency,
:math:`p\,s(\rho_*) = \lambda`. Near a face of the support that fails: no data lie beyond the face,
and exact leverage there exceeds :math:`h` of the interior density by a factor of 2–3 (a point at
a face has half the neighbours that would pin down its value). A Gaussian KDE of bandwidth
:math:`b` sees half of that: at distance :math:`t` from a flat face it reads
:math:`\hat p = p_{\mathrm{in}}\,\Phi(t/b)`, half the interior density at the face.

The correction fits that half-space model at every point from the KDE and the norm of its
log-gradient in whitened coordinates :math:`w = x/b` (:meth:`BinnedDensity.density_and_slopes
<spectral_leverage.density.BinnedDensity.density_and_slopes>`,
:meth:`TreeDensity.density_and_slopes <spectral_leverage.density.TreeDensity.density_and_slopes>`):
for the half-space,
:math:`\|\nabla_w \log \hat p\| = M(u) = \varphi(u)/\Phi(u)` (the inverse Mills ratio) with
:math:`u = t/b`, so

.. math::

    u = M^{-1}(\|\nabla_w \log \hat p\|) \ge 0, \qquad p_{\mathrm{in}} = \hat p / \Phi(u), \qquad
    p_{\mathrm{eff}} = p_{\mathrm{in}}\,\Phi(\kappa u)^2, \qquad
    \kappa = \max\big(b\,\omega_*(p_{\mathrm{in}}),\ 1\big),

and the scores are :math:`h(p_{\mathrm{eff}})`: the density deficit of the face, squared, on the
equivalent kernel's own length :math:`1/\omega_*` instead of the KDE's :math:`b`, both in the
kernel's unit-length coordinates. When the bandwidths are not proportional to the length scales
(within 10 %), :math:`b` is the bandwidth along the log-gradient there,
:math:`\|\nabla_w \log \hat p\| / \|\nabla_z \log \hat p\|` with :math:`z = x/\ell`.
:math:`\kappa` is held at 1 or more because a face farther than a few bandwidths does not show in
the KDE's slope: with a longer equivalent kernel, the sampling noise of the slope deep inside
the data would be read as a distant face.

So :math:`\hat p/2 \le p_{\mathrm{eff}} \le 2\hat p`, and :math:`p_{\mathrm{eff}} \to \hat p`
deep inside, where the slope vanishes. At a face :math:`p_{\mathrm{eff}} = p_{\mathrm{in}}/4`,
which in the scale-free regime (:math:`h \propto p^{d/(2\alpha)-1}`, :math:`\alpha = \nu + d/2`)
raises the score :math:`4^{1-d/(2\alpha)}`-fold over the interior. That is 2 for the Laplace
kernel in 1-D (Matérn :math:`\nu = 1/2`), as the method of images gives for its free (Neumann)
boundary, and :math:`2^{3/2}` for :math:`\nu = 3/2` in 1-D, where exact leverage on a uniform
interval measures 2.9. Squaring the deficit is a closure checked against exact scores, not derived.
The theory page and ``tests/spectral/test_boundary.py`` measure it on uniform, bimodal, sparse-mode,
stretched and Gaussian designs.

A slope alone cannot tell a face from the tail of a smooth density; its curvature can. Across a
face the KDE's log-density bends as :math:`c_{\mathrm{face}}(u) = -M(u)(u + M(u))` (:math:`-2/\pi`
at the face), a smooth density's far less. So when the curvature :math:`c` along the gradient is
given, the model is applied with weight :math:`w = \min(1, \max(0, 2c/c_{\mathrm{face}}(u)))` in
log space, :math:`\hat p\,(p_{\mathrm{eff}}/\hat p)^w`: fully from half a face's curvature on,
not at all for none: without the weight the model reads faces into Gaussian tails.

Nothing here needs the data: three numbers per point and the kernel.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, ndtr

from .._blocks import on_all_cores, row_chunks
from .._validation import check_positive
from ..density import FACE_SLOPE
from ..kernels import StationaryKernel
from .quadrature import _knee_frequency, check_unit_kernel

__all__ = ["boundary_density", "half_space_depth"]

# The inverse Mills ratio M(u) = φ(u)/Φ(u) falls from sqrt(2/π) at u = 0 to 1.3e-14 at u = 8. In
# v = sqrt(-2 log(M(u) sqrt(π/2))) = sqrt(u² + 2 log(2 Φ(u))), 0 at the face and close to u deep
# inside, the inverse u(v) is smooth (u ∝ v² near 0): it is tabulated on a uniform grid of v and
# looked up by direct index (a binary search over the table cost 5x more).
_U_MAX = 8.0
_CHUNK = 2**16


def _depth_table(cells: int = 4096) -> tuple[float, np.ndarray]:
    """(step of v, u at v = 0, step, ..., v(_U_MAX)) by Newton's method on
    f(u) = u² + 2 log(2 Φ(u)) − v², which is convex (f'' = 2 − 2M(u)(u + M(u)) > 0): started at
    u = v, to the right of the root, it converges monotonically."""
    step = np.sqrt(_U_MAX**2 + 2 * (np.log(2.0) + log_ndtr(_U_MAX))) / cells
    v = np.arange(cells + 1) * step
    u = v.copy()
    for _ in range(60):
        mills = np.exp(-0.5 * u**2 - 0.5 * np.log(2 * np.pi) - log_ndtr(u))
        u -= (u**2 + 2 * (np.log(2.0) + log_ndtr(u)) - v**2) / np.maximum(2 * (u + mills), 1e-300)
    return float(step), u


_V_STEP, _U_TABLE = _depth_table()


def _depth(slope: np.ndarray) -> np.ndarray:
    """Unchecked :func:`half_space_depth` of a 1-D array (``_U_MAX`` below the table)."""
    with np.errstate(divide="ignore"):
        v = np.sqrt(np.maximum(-2.0 * np.log(slope * np.sqrt(np.pi / 2)), 0.0)) / _V_STEP
    np.minimum(v, len(_U_TABLE) - 1, out=v)
    cell = np.minimum(v.astype(np.intp), len(_U_TABLE) - 2)
    v -= cell
    return _U_TABLE[cell] + v * (_U_TABLE[cell + 1] - _U_TABLE[cell])


def half_space_depth(slope) -> np.ndarray:
    r"""Depth :math:`u = t/b \ge 0` of a point inside a half-space, in bandwidths, from the norm
    of the log-gradient of a Gaussian KDE there (whitened coordinates).

    Inverts :math:`\|\nabla_w \log \hat p\| = \varphi(u)/\Phi(u)` to within 1e-6. A slope at or
    above :math:`\sqrt{2/\pi}` (the value at the face) gives 0, one below :math:`10^{-14}` gives 8.

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
    return _depth(slope.reshape(-1)).reshape(slope.shape)


def boundary_density(p, slope, kernel: StationaryKernel, reg: float, d: float, unit_bandwidth,
                     curvature=None) -> np.ndarray:
    r"""Effective density :math:`p_{\mathrm{eff}}` of the half-space model (module docstring), to
    be passed to :func:`~spectral_leverage.spectral.quadrature.sa_scores` in place of the KDE's
    :math:`\hat p`.

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
        Dimension of the SA integral, >= 1.
    unit_bandwidth : float or array_like of shape (n,)
        The KDE's bandwidth :math:`b > 0` in the kernel's unit-length coordinates (x / ℓ), along the
        log-gradient (per point when the bandwidths differ between axes in those coordinates).
    curvature : None or array_like of shape (n,)
        The log-density's curvature along its gradient, whitened coordinates. Given, the model is
        applied with weight :math:`w = \min(1, \max(0, 2c/c_{\mathrm{face}}(u)))` in log space,
        :math:`\hat p\,(p_{\mathrm{eff}}/\hat p)^w`, where :math:`c_{\mathrm{face}}(u) = -M(u)(u + M(u))`
        is a half-space's: a slope that comes with less than half a face's curvature is mostly a
        smooth density's, not a face's.

    Returns
    -------
    ndarray of shape (n,)
        :math:`p_{\mathrm{eff}} \in [\hat p/2,\ 2\hat p]`: :math:`\hat p/2` where the slope is that
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
    p = _check_points(p, "p", positive=True)
    slope = _check_points(slope, "slope", positive=False)
    unit_bandwidth = np.asarray(unit_bandwidth, dtype=float)
    if unit_bandwidth.ndim > 1 or not np.all(np.isfinite(unit_bandwidth)) or np.any(unit_bandwidth <= 0):
        raise ValueError("unit_bandwidth must be a positive float or a 1-D array of them.")
    if p.shape != slope.shape or unit_bandwidth.size not in (1, p.size):
        raise ValueError(f"p, slope and unit_bandwidth must have the same length; got {p.size}, "
                         f"{slope.size} and {unit_bandwidth.size}.")
    check_unit_kernel(kernel)
    reg, d = check_positive(reg, "reg"), check_positive(d, "d")
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d}.")
    unit_bandwidth = np.broadcast_to(unit_bandwidth, p.shape)
    if curvature is not None:
        curvature = np.asarray(curvature, dtype=float)
        if curvature.shape != p.shape or not np.all(np.isfinite(curvature)):
            raise ValueError(f"curvature must be finite, one value per point ({p.size}); got shape "
                             f"{curvature.shape}.")
    p_eff = np.empty(p.shape)

    def fill(rows: slice) -> None:
        u = _depth(slope[rows])
        p_inside = p[rows] / ndtr(u)
        # the deficit is measured on the longer of the equivalent kernel's length and the
        # bandwidth: a face farther than a few bandwidths does not show in the KDE's slope
        kappa = np.maximum(unit_bandwidth[rows] * _knee_frequency(p_inside, kernel, reg, d), 1.0)
        p_eff[rows] = p_inside * ndtr(kappa * u) ** 2
        if curvature is not None:
            mills = np.minimum(slope[rows], FACE_SLOPE)  # M(u) of the depth read (u = 0 above a face's)
            face = -mills * (u + mills)
            weight = np.clip(2.0 * curvature[rows] / np.minimum(face, -1e-300), 0.0, 1.0)
            p_eff[rows] = p[rows] * (p_eff[rows] / p[rows]) ** weight

    on_all_cores(fill, row_chunks(p.size, 1.0, _CHUNK))
    return p_eff


def _check_points(values, name: str, *, positive: bool) -> np.ndarray:
    """``values`` as a 1-D float array, finite and > 0 (``positive``) or >= 0, else ValueError."""
    values = np.asarray(values, dtype=float)
    bad = values <= 0 if positive else values < 0
    if values.ndim != 1 or not np.all(np.isfinite(values)) or np.any(bad):
        raise ValueError(f"{name} must be a 1-D array of finite values {'>' if positive else '>='} 0.")
    return values

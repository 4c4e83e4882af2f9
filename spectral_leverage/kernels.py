r"""Stationary kernels: scikit-learn's own kernel objects and their spectral densities.

Supported kernels are scikit-learn's :class:`~sklearn.gaussian_process.kernels.Matern`
(any ``nu > 0``; ``nu=inf`` is the Gaussian kernel) and
:class:`~sklearn.gaussian_process.kernels.RBF`, each optionally multiplied by a
:class:`~sklearn.gaussian_process.kernels.ConstantKernel` amplitude ``c``.

Conventions (used throughout the package)
-----------------------------------------
Ordinary-frequency Fourier convention, :math:`k(x - x') = \int s(\xi) e^{2\pi i \xi\cdot(x-x')}\,d\xi`,
so :math:`\int s = k(0) = c`. With :math:`r = \|\xi\|`, in dimension :math:`d`:

* Matérn(:math:`\nu, \ell`), :math:`\alpha = \nu + d/2`:
  :math:`s(r) = c\,2^d \pi^{d/2} \Gamma(\alpha) (2\nu)^\nu / (\Gamma(\nu)\ell^{2\nu})
  \cdot (2\nu/\ell^2 + 4\pi^2 r^2)^{-\alpha}`;
* Gaussian, :math:`k(x) = c\,\exp(-\|x\|^2/(2\ell^2))`:
  :math:`s(r) = c\,(2\pi\ell^2)^{d/2} \exp(-2\pi^2\ell^2 r^2)`.

An anisotropic length scale (one per feature) is handled by rescaling the inputs,
:math:`x \mapsto x/\ell`, after which the kernel is isotropic with unit length scale. The kernel
matrix, and hence every leverage score, is unchanged by that rescaling.

References
----------
Rasmussen & Williams, *Gaussian Processes for Machine Learning*, 2006, §4.2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import gammaln
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Kernel, Matern, Product

from ._blocks import kernel_block
from ._spd import cholesky
from ._validation import check_kernel_range, is_dask_collection

__all__ = ["CHOLESKY_JITTER", "MIN_NU", "StationaryKernel", "check_spectral_nu", "indefinite_kernel_error",
           "log_spectral_density", "parse_kernel", "resolve_kernel", "spectral_density", "upper_cholesky",
           "whitened_kernel"]

#: Smallest Matérn ν of the methods that read the spectral density (the spectral scores, random
#: Fourier features). Below it the kernel is nearly white noise (its correlation drops to about
#: 0.3 within 1e-8 of a length scale at ν = 0.01): the SA integral misses a share of the effective
#: dimension that grows as ν falls, the same at every n, d, ℓ and λ measured (n = 2000 standard
#: normal rows, d = 1, 3, 8, ℓ = 0.5 and 2, λ = 1e-2..1/n: 0.96-0.99 of the exact effective
#: dimension at ν = 0.05, 0.87-0.98 at 0.03, 0.51-0.87 at 0.01), and the Student-t frequencies of
#: Fourier features overflow (χ² draws with 2ν degrees of freedom underflow to 0).
MIN_NU = 0.05

_SUPPORTED = (
    "sklearn.gaussian_process.kernels.Matern(length_scale, nu) or RBF(length_scale), "
    "optionally multiplied by ConstantKernel(c)"
)


@dataclass(frozen=True)
class StationaryKernel:
    """A parsed stationary kernel: family, smoothness, length scale(s) and amplitude.

    Attributes
    ----------
    family : {"matern", "rbf"}
    nu : float
        Matérn smoothness; ``inf`` for the Gaussian kernel.
    length_scale : ndarray of shape () or (d,)
    amplitude : float
        The ``ConstantKernel`` factor ``c`` (1 without one); ``k(0) = c``.

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import ConstantKernel, Matern
    >>> spec = parse_kernel(ConstantKernel(2.0) * Matern(length_scale=0.5, nu=2.5))
    >>> spec.family, spec.nu, float(spec.length_scale), spec.amplitude
    ('matern', 2.5, 0.5, 2.0)
    """

    family: str
    nu: float
    length_scale: np.ndarray
    amplitude: float

    @property
    def is_anisotropic(self) -> bool:
        return self.length_scale.ndim == 1 and self.length_scale.size > 1

    def check_n_features(self, n_features: int) -> None:
        """Raise ``ValueError`` when an anisotropic length scale does not have one entry per feature."""
        if self.length_scale.ndim == 1 and self.length_scale.size not in (1, n_features):
            raise ValueError(
                f"kernel has {self.length_scale.size} length scales but X has {n_features} "
                "features: give one length scale per feature, or a scalar."
            )

    def check_inputs(self, X) -> None:
        """:meth:`check_n_features`, then refuse X whose distances in the kernel's units leave
        float64 kernel values (:func:`~spectral_leverage._validation.check_kernel_range`; in-memory
        X only: on Dask that would be a pass over the data)."""
        self.check_n_features(X.shape[1])
        if not is_dask_collection(X):
            check_kernel_range(X, self.length_scale, self.nu)

    def rescale(self, X: np.ndarray) -> np.ndarray:
        """``X / length_scale``: coordinates in which the kernel is isotropic with unit length."""
        return X / self.length_scale

    def correlation(self, r) -> np.ndarray:
        """:math:`k(r)/k(0)` at distances ``r`` (any shape) in unit-length coordinates, evaluated by
        scikit-learn's own ``Matern``/``RBF`` on one-dimensional points."""
        unit = RBF(1.0) if self.family == "rbf" else Matern(1.0, nu=self.nu)
        r = np.asarray(r, dtype=float)
        return unit(np.zeros((1, 1)), r.reshape(-1, 1)).reshape(r.shape)

    @property
    def unit(self) -> StationaryKernel:
        """The same kernel with unit (isotropic) length scale, for rescaled inputs."""
        return StationaryKernel(self.family, self.nu, np.asarray(1.0), self.amplitude)

    @property
    def scalar_length_scale(self) -> float:
        if self.is_anisotropic:
            raise ValueError(
                "this operation needs an isotropic kernel; rescale X by the length scales and "
                "use kernel.unit"
            )
        return float(np.ravel(self.length_scale)[0])


def resolve_kernel(kernel) -> Kernel:
    """The kernel an estimator uses: ``kernel`` itself, or for None the package's default
    ``Matern(length_scale=1.0, nu=1.5)`` (the setting of Chen & Yang; meant for standardised X).

    Examples
    --------
    >>> resolve_kernel(None)
    Matern(length_scale=1, nu=1.5)
    """
    return Matern(length_scale=1.0, nu=1.5) if kernel is None else kernel


def parse_kernel(kernel) -> StationaryKernel:
    """Parse a scikit-learn kernel object into a :class:`StationaryKernel`.

    Parameters
    ----------
    kernel : sklearn.gaussian_process.kernels.Kernel
        ``Matern``, ``RBF``, or either multiplied (on either side, possibly repeatedly) by
        ``ConstantKernel``.

    Returns
    -------
    StationaryKernel

    Raises
    ------
    TypeError
        For any other kernel (sums, products of two non-constant kernels, periodic, dot-product,
        white-noise, strings ...), naming the supported kernels.
    ValueError
        For non-positive length scales, amplitude or ``nu``.

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import ConstantKernel, Matern
    >>> parse_kernel(ConstantKernel(2.0) * Matern(length_scale=0.5, nu=1.5)).family
    'matern'
    """
    amplitude = 1.0
    base = kernel
    while isinstance(base, Product):
        if isinstance(base.k1, ConstantKernel):
            amplitude *= float(base.k1.constant_value)
            base = base.k2
        elif isinstance(base.k2, ConstantKernel):
            amplitude *= float(base.k2.constant_value)
            base = base.k1
        else:
            break
    if not isinstance(base, Kernel) or not isinstance(base, RBF):
        raise TypeError(
            f"kernel must be {_SUPPORTED}; got {kernel!r}. Sums, products of two kernels, "
            "periodic, dot-product and non-stationary kernels are not supported."
        )
    if not (np.isfinite(amplitude) and amplitude > 0):
        raise ValueError(f"kernel amplitude (ConstantKernel) must be > 0, got {amplitude!r}.")
    length_scale = np.asarray(base.length_scale, dtype=float)
    if length_scale.ndim > 1 or not np.all(np.isfinite(length_scale)) or np.any(length_scale <= 0):
        raise ValueError(
            f"kernel length_scale must be a positive scalar or 1-D array, got {base.length_scale!r}."
        )
    # scikit-learn's Matern subclasses RBF: dispatch on Matern first; nu=inf is the RBF kernel.
    if isinstance(base, Matern):
        nu = float(base.nu)
        if not nu > 0:
            raise ValueError(f"Matern nu must be > 0, got {base.nu!r}.")
        if np.isfinite(nu):
            return StationaryKernel("matern", nu, length_scale, amplitude)
    return StationaryKernel("rbf", np.inf, length_scale, amplitude)


def check_spectral_nu(kernel: StationaryKernel, method: str, error: str, fix: str) -> None:
    """``ValueError`` for a Matérn ν below :data:`MIN_NU` in ``method``, a method that reads the
    spectral density: one line naming ν, what goes wrong (``error``) and the ``fix``.

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> check_spectral_nu(parse_kernel(Matern(nu=0.5)), "spectral scores", "", "")  # accepted
    """
    if kernel.nu < MIN_NU:
        raise ValueError(
            f"kernel Matern nu must be at least {MIN_NU} for {method}, got nu={kernel.nu:g}: such a kernel "
            f"is nearly white noise and {error}. Use nu >= {MIN_NU}{fix}."
        )


#: relative to the mean diagonal of a kernel matrix: :func:`upper_cholesky`'s first jitter
CHOLESKY_JITTER = 1e-10


def indefinite_kernel_error(what: str) -> np.linalg.LinAlgError:
    """The error for a kernel matrix that Cholesky cannot factor, naming the usual cause and the fix.

    scikit-learn's ``Matern`` at a ν other than 1/2, 3/2, 5/2 and ∞ evaluates the modified Bessel
    function, which is inexact between duplicated or nearly coincident rows (below ν = 1/2 by up to
    1 %), so its kernel matrices can be indefinite. A ``LinAlgError`` is a ``ValueError``.

    Examples
    --------
    >>> str(indefinite_kernel_error("Cholesky of K failed")).split(":")[0]
    'Cholesky of K failed'
    """
    return np.linalg.LinAlgError(
        f"{what}: the matrix is not positive semi-definite. scikit-learn's Matern at a nu other "
        "than 0.5, 1.5 or 2.5 is inexact between duplicated rows (below nu = 0.5 by up to 1 %); drop "
        "duplicated rows, standardise X, or use nu = 0.5, 1.5 or 2.5."
    )


def upper_cholesky(K: np.ndarray) -> tuple[np.ndarray, float]:
    """Upper T with TᵀT = K + εI for a kernel matrix K: ε = 1e-10 times K's mean diagonal, raised
    tenfold while the factorisation fails (at most seven times), then :func:`indefinite_kernel_error`.
    The centres' factor of every Nyström fit, so that one centre set gives one model."""
    scale = float(np.mean(np.diag(K))) or 1.0
    jitter = CHOLESKY_JITTER * scale
    for _ in range(8):
        try:
            A = K.copy()
            A[np.diag_indices_from(A)] += jitter
            return cholesky(A, lower=False, overwrite_a=True), jitter
        except np.linalg.LinAlgError:
            jitter *= 10.0
    raise indefinite_kernel_error(
        f"Cholesky factorisation of the centres' kernel matrix failed even with jitter {jitter:.1e}")


def whitened_kernel(kernel, X: np.ndarray, centers: np.ndarray, T: np.ndarray) -> np.ndarray:
    r""":math:`B^\top = T^{-\top} K_{XC}^\top`, shape (m, b), for the b rows of X, the m centres C
    and T from :func:`upper_cholesky` of :math:`K_{CC}`: the Nyström features of the rows, with
    :math:`BB^\top = K_{XC}(K_{CC} + \varepsilon I)^{-1}K_{CX}`."""
    return solve_triangular(T, kernel_block(kernel, X, centers).T, trans="T", lower=False,
                            check_finite=False)


def log_spectral_density(kernel: StationaryKernel, r, d: int) -> np.ndarray:
    """Natural log of the radial spectral density :math:`s(r)` in dimension ``d``.

    Stable where :math:`s` itself underflows (large ``r``) and where :math:`r^2` would overflow:
    the Matérn base :math:`2\\nu/\\ell^2 + 4\\pi^2 r^2` is taken as the square of
    ``hypot(sqrt(2 nu) / ell, 2 pi r)``, finite up to :math:`r \\approx 10^{307}` (a Matérn kernel
    at small ν, whose density decays slowly, puts the quadrature's knee of dense data beyond
    :math:`10^{154}`). The Gaussian's :math:`-2\\pi^2\\ell^2 r^2` may round to ``-inf``: the
    correctly rounded log of a density below float64's range. Needs an isotropic kernel.

    Parameters
    ----------
    kernel : StationaryKernel
    r : array_like
        Frequency radii :math:`\\|\\xi\\| \\ge 0` (ordinary frequency, cycles per unit of x).
    d : int
        Input dimension (may be a non-integer intrinsic dimension > 0).

    Examples
    --------
    The spectral density of a kernel integrates to ``k(0)`` (here in 1-D, over both signs):

    >>> from scipy.integrate import quad
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> spec = parse_kernel(Matern(length_scale=0.7, nu=1.5))
    >>> total = 2 * quad(lambda r: np.exp(log_spectral_density(spec, r, 1)), 0, np.inf)[0]
    >>> round(total, 8)
    1.0
    """
    r = np.asarray(r, dtype=float)
    ell = kernel.scalar_length_scale
    log_c = np.log(kernel.amplitude)
    if kernel.family == "rbf":
        with np.errstate(over="ignore"):
            return log_c + 0.5 * d * np.log(2 * np.pi * ell**2) - 0.5 * (2 * np.pi * ell * r) ** 2
    nu = kernel.nu
    alpha = nu + 0.5 * d
    log_const = (
        log_c
        + d * np.log(2.0)
        + 0.5 * d * np.log(np.pi)
        + gammaln(alpha)
        + nu * np.log(2 * nu)
        - gammaln(nu)
        - 2 * nu * np.log(ell)
    )
    return log_const - 2 * alpha * np.log(np.hypot(np.sqrt(2 * nu) / ell, 2 * np.pi * r))


def spectral_density(kernel, r, d: int) -> np.ndarray:
    """Radial spectral density :math:`s(r)` of an isotropic kernel in dimension ``d``.

    Parameters
    ----------
    kernel : sklearn kernel or StationaryKernel
    r : array_like
        Frequency radii (ordinary frequency).
    d : int
        Input dimension.

    Returns
    -------
    s : ndarray
        Same shape as ``r``.

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> float(spectral_density(RBF(1.0), 0.0, d=1))  # (2π)^{1/2}
    2.5066282746310002
    """
    if not isinstance(kernel, StationaryKernel):
        kernel = parse_kernel(kernel)
    return np.exp(log_spectral_density(kernel, r, d))

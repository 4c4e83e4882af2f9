r"""GPyTorch's sparse GP (``SGPR``: ``InducingPointKernel``) and variational GP
(``VariationalStrategy``) from a fitted leverage sampler: inducing points, kernel and noise.

The dictionary between the two libraries, for a kernel :math:`k = c\,k_0` (``ConstantKernel(c) *``
``Matern``/``RBF``) and the regulariser :math:`\lambda` (``reg``) of n training points:

* ``RBF(ℓ)`` is ``RBFKernel`` with ``lengthscale`` ℓ; ``Matern(ℓ, nu)`` is ``MaternKernel(nu)``
  with ``lengthscale`` ℓ (both libraries put :math:`\sqrt{2\nu}\,\|x - x'\|/\ell` in the Matérn
  formula; GPyTorch has ν ∈ {1/2, 3/2, 5/2} only); a length scale per feature is
  ``ard_num_dims = d``; the amplitude :math:`c` is ``ScaleKernel``'s ``outputscale``.
* The likelihood's noise variance is :math:`\sigma^2 = n\lambda`: the KRR minimiser of
  :math:`\frac1n\|y - f\|^2 + \lambda\|f\|_k^2` is the GP posterior mean
  :math:`K(K + \sigma^2 I)^{-1}y`, and the ridge leverage is the GP's posterior variance at
  :math:`x_i` in units of the noise, :math:`l_i = [K(K + \sigma^2 I)^{-1}]_{ii} = v_i/\sigma^2`
  (since :math:`K - K(K + \sigma^2 I)^{-1}K = \sigma^2 K(K + \sigma^2 I)^{-1}`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._validation import check_data, check_positive, check_samples
from ..base import LeverageSampler
from ..kernels import parse_kernel, resolve_kernel

__all__ = ["GPyTorchInducing", "gpytorch_kernel", "likelihood_noise", "to_gpytorch"]

_GPYTORCH_NU = (0.5, 1.5, 2.5)


def _require(module: str):
    """Import an optional dependency, or an ``ImportError`` naming the extra to install."""
    try:
        return __import__(module)
    except ImportError as error:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            f"{module} is needed here: pip install torch==2.13.0 (a CPU build) and then "
            '"spectral_leverage[interop]".') from error


def likelihood_noise(reg: float, n_samples: int) -> float:
    r"""GPyTorch's likelihood noise variance :math:`\sigma^2 = n\lambda` for ``reg`` :math:`= \lambda`
    on ``n_samples`` points (module docstring: the KRR and GP solutions then coincide).

    Examples
    --------
    >>> likelihood_noise(1e-4, 5000)
    0.5
    """
    return check_positive(reg, "reg") * check_samples(n_samples, "n_samples")


def gpytorch_kernel(kernel, n_features: int | None = None, dtype=None):
    """The GPyTorch kernel equal to a scikit-learn ``Matern``/``RBF`` kernel (times
    ``ConstantKernel``): ``ScaleKernel(MaternKernel(nu) or RBFKernel)`` with the length scale(s) and
    output scale set (module docstring: the dictionary).

    Parameters
    ----------
    kernel : sklearn kernel
    n_features : int or None, default=None
        Needed only for an anisotropic length scale (``ard_num_dims``); checked against it.
    dtype : torch.dtype or None, default=None
        The kernel's parameter dtype; None is torch's default dtype.

    Returns
    -------
    gpytorch.kernels.ScaleKernel

    Raises
    ------
    ValueError
        For a Matérn ν GPyTorch lacks (it has 1/2, 3/2 and 5/2).
    """
    spec = parse_kernel(kernel)
    if spec.family == "matern" and spec.nu not in _GPYTORCH_NU:
        raise ValueError(f"GPyTorch's MaternKernel has nu in {_GPYTORCH_NU}, got nu={spec.nu}: use one of "
                         "those or RBF.")
    if n_features is not None:
        spec.check_n_features(n_features)
    torch, gpytorch = _require("torch"), _require("gpytorch")
    ard = spec.length_scale.size if spec.is_anisotropic else None
    base = (gpytorch.kernels.RBFKernel(ard_num_dims=ard) if spec.family == "rbf"
            else gpytorch.kernels.MaternKernel(nu=spec.nu, ard_num_dims=ard))
    scaled = gpytorch.kernels.ScaleKernel(base)
    dtype = torch.get_default_dtype() if dtype is None else dtype
    scaled = scaled.to(dtype)
    lengthscale = torch.tensor(np.broadcast_to(spec.length_scale, (ard or 1,)).copy(), dtype=dtype)
    base.lengthscale = lengthscale.reshape(1, -1)
    scaled.outputscale = torch.as_tensor(spec.amplitude, dtype=dtype)
    return scaled


@dataclass(frozen=True)
class GPyTorchInducing:
    """What :func:`to_gpytorch` returns.

    Attributes
    ----------
    inducing_points : torch.Tensor of shape (m, d)
        ``X[indices]`` in the requested dtype.
    indices : ndarray of int, shape (m,)
        Distinct, sorted training rows.
    kernel : gpytorch.kernels.ScaleKernel
        :func:`gpytorch_kernel` of the sampler's kernel.
    noise : float
        :func:`likelihood_noise`, :math:`n\\lambda`.
    """

    inducing_points: Any
    indices: np.ndarray
    kernel: Any
    noise: float


def _torch_dtype(X, dtype):
    """dtype, else the dtype of X (a tensor's, or a NumPy float32/float64 array's), else float64."""
    if dtype is not None:
        return dtype
    torch = _require("torch")
    if isinstance(X, torch.Tensor):
        return X.dtype
    return torch.float32 if getattr(X, "dtype", None) == np.float32 else torch.float64


def to_gpytorch(sampler: LeverageSampler, X, n_inducing: int, *, random_state=None,
                dtype=None) -> GPyTorchInducing:
    """Inducing points, kernel and noise for GPyTorch from a leverage sampler fitted on X.

    The ``n_inducing`` inducing points are distinct rows of X drawn without replacement in
    proportion to the sampler's scores (as :class:`~spectral_leverage.LeverageNystroem` draws its
    components). Use them as ``InducingPointKernel(result.kernel, inducing_points=...,
    likelihood=...)`` (SGPR) or ``VariationalStrategy(model, inducing_points=..., ...)``, with
    ``GaussianLikelihood`` whose ``noise`` is ``result.noise``; GPyTorch then trains from there.

    Parameters
    ----------
    sampler : LeverageSampler
        Fitted on X, with ``kernel`` and ``reg`` (e.g. :class:`~spectral_leverage.SpectralLeverage`).
    X : array_like or torch.Tensor of shape (n, d)
        The training inputs the sampler was fitted on.
    n_inducing : int
        Number of inducing points, 1 <= m <= n.
    random_state : int, numpy Generator or None, default=None
    dtype : torch.dtype or None, default=None
        None matches X: a tensor's dtype, float32 for a float32 array, else float64.

    Returns
    -------
    GPyTorchInducing
    """
    check_is_fitted(sampler, "scores_")
    if not (hasattr(sampler, "kernel") and hasattr(sampler, "reg")):
        raise ValueError(f"sampler must carry its kernel and reg (e.g. SpectralLeverage); got "
                         f"{type(sampler).__name__}.")
    torch = _require("torch")
    dtype = _torch_dtype(X, dtype)
    values = check_data(X.detach().cpu().numpy() if isinstance(X, torch.Tensor) else X)
    n = values.shape[0]
    if np.shape(sampler.scores_) != (n,):
        raise ValueError(f"sampler was fitted on {np.shape(sampler.scores_)[0]} points, X has {n}: "
                         "fit it on X.")
    indices = np.sort(sampler.sample(check_samples(n_inducing, "n_inducing"), replace=False,
                                     random_state=random_state))
    return GPyTorchInducing(
        inducing_points=torch.as_tensor(values[indices], dtype=dtype),
        indices=indices,
        kernel=gpytorch_kernel(resolve_kernel(sampler.kernel), values.shape[1], dtype=dtype),
        noise=likelihood_noise(sampler.reg, n),
    )

"""Hand-offs to the libraries people already use: GPyTorch inducing points, kernels and noise
(:mod:`~spectral_leverage.interop.gpytorch_inducing`) and a Falkon centre selector
(:mod:`~spectral_leverage.interop.falkon_selector`).

Optional: torch and gpytorch (``pip install torch==2.13.0`` then ``pip install
"spectral_leverage[interop]"``) are imported inside the functions that need them, never when this
package or ``spectral_leverage`` is imported. Falkon is not on PyPI; the selector follows its
protocol without importing it.
"""

from .falkon_selector import LeverageCenterSelector
from .gpytorch_inducing import GPyTorchInducing, gpytorch_kernel, likelihood_noise, to_gpytorch

__all__ = ["GPyTorchInducing", "LeverageCenterSelector", "gpytorch_kernel", "likelihood_noise",
           "to_gpytorch"]

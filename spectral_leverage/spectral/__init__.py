"""The spectral-analysis scores: the SA integral h(p), the boundary correction, SpectralLeverage."""

from .leverage import SpectralLeverage

__all__ = ["SpectralLeverage"]

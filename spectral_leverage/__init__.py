"""spectral_leverage: near-linear-time ridge leverage scores and Nyström KRR for stationary kernels.

Conventions (stated once, used everywhere): data :math:`x_1..x_n \\in R^d`, regulariser
:math:`\\lambda` (``reg``), ridge leverage :math:`l_i = [K(K + n\\lambda I)^{-1}]_{ii}`, rescaled
scores :math:`n\\,l_i`. Kernels are scikit-learn's ``Matern`` / ``RBF`` (times ``ConstantKernel``).
"""

from .base import LeverageSampler
from .density import BinnedDensity, TreeDensity
from .kernels import parse_kernel, spectral_density
from .krr import (
    LeverageNystroem,
    NystromKernelPCA,
    NystromKRR,
    NystromKRRCV,
    RandomFourierKRR,
    SketchedKRR,
    sample_centers,
)
from .samplers import (
    BLESS,
    SAMPLERS,
    SQUEAK,
    AlaouiMahoneySampler,
    ExactLeverage,
    RecursiveRLS,
    UniformSampler,
    exact_leverage,
    leverage_scores,
    make_sampler,
    merge_squeak,
)
from .spectral import SpectralLeverage

__all__ = [
    "BLESS",
    "SAMPLERS",
    "SQUEAK",
    "AlaouiMahoneySampler",
    "BinnedDensity",
    "ExactLeverage",
    "LeverageNystroem",
    "LeverageSampler",
    "NystromKRR",
    "NystromKRRCV",
    "NystromKernelPCA",
    "RandomFourierKRR",
    "RecursiveRLS",
    "SketchedKRR",
    "SpectralLeverage",
    "TreeDensity",
    "UniformSampler",
    "exact_leverage",
    "leverage_scores",
    "make_sampler",
    "merge_squeak",
    "parse_kernel",
    "sample_centers",
    "spectral_density",
]

__version__ = "0.1.0"

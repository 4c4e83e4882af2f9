"""Kernel ridge regression solvers: Nyström (leverage-sampled centres), sketched, random features;
kernel PCA on the same features."""

from .centers import sample_centers
from .cv import NystromKRRCV
from .kernel_pca import NystromKernelPCA
from .leverage_nystroem import LeverageNystroem
from .nystrom import NystromKRR
from .random_features import RandomFourierKRR
from .sketched import SketchedKRR

__all__ = ["LeverageNystroem", "NystromKRR", "NystromKRRCV", "NystromKernelPCA", "RandomFourierKRR",
           "SketchedKRR", "sample_centers"]

"""Kernel ridge regression solvers: Nyström (leverage-sampled centres), sketched, random features."""

from .centers import sample_centers
from .cv import NystromKRRCV
from .nystrom import LeverageNystroem, NystromKRR
from .random_features import RandomFourierKRR
from .sketched import SketchedKRR

__all__ = ["LeverageNystroem", "NystromKRR", "NystromKRRCV", "RandomFourierKRR", "SketchedKRR",
           "sample_centers"]

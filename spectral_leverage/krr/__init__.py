"""Kernel ridge regression solvers: Nyström (leverage-sampled centres), sketched, random features."""

from .centers import sample_centers
from .nystrom import LeverageNystroem, NystromKRR
from .random_features import RandomFourierKRR
from .sketched import SketchedKRR

__all__ = ["LeverageNystroem", "NystromKRR", "RandomFourierKRR", "SketchedKRR", "sample_centers"]

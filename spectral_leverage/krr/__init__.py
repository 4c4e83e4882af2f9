"""Kernel ridge regression solvers: Nyström (leverage-sampled centres), sketched, random features."""

from .nystrom import LeverageNystroem, NystromKRR, sample_centers
from .sketch import RandomFourierKRR, SketchedKRR

__all__ = ["LeverageNystroem", "NystromKRR", "RandomFourierKRR", "SketchedKRR", "sample_centers"]

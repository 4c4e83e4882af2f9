"""Kernel ridge regression solvers: Nyström (leverage-sampled centres), sketched, random features."""

from .centers import sample_centers
from .nystrom import LeverageNystroem, NystromKRR
from .sketch import RandomFourierKRR, SketchedKRR

__all__ = ["LeverageNystroem", "NystromKRR", "RandomFourierKRR", "SketchedKRR", "sample_centers"]

"""Density estimators of the inputs: the first stage of the spectral scores.

Gaussian kernel density estimates (binned on a grid in low dimension, KD-tree with anchors
otherwise), a k-nearest-neighbour density in an intrinsic dimension, the bandwidth rules, and the
Levina–Bickel intrinsic-dimension estimate.
"""

from .bandwidth import (
    _anchor_draw,
    _anchor_indices,
    _anchor_keys,
    bandwidth_factor,
    check_bandwidth,
    feature_bandwidths,
    robust_range,
    robust_scale,
)
from .binned import FACE_CURVATURE, FACE_SLOPE, BinnedDensity
from .intrinsic import intrinsic_dimension
from .knn import KNNDensity
from .tree import TreeDensity

__all__ = [
    "FACE_CURVATURE",
    "FACE_SLOPE",
    "BinnedDensity",
    "KNNDensity",
    "TreeDensity",
    "_anchor_draw",
    "_anchor_indices",
    "_anchor_keys",
    "bandwidth_factor",
    "check_bandwidth",
    "feature_bandwidths",
    "intrinsic_dimension",
    "robust_range",
    "robust_scale",
]

"""What the sketched and random-feature regressors share: their input check and the ridge solve."""

from __future__ import annotations

import numpy as np
import scipy.linalg
from sklearn.utils import check_array, check_consistent_length

from .._validation import check_data
from ..kernels import StationaryKernel, parse_kernel, resolve_kernel

__all__ = ["check_fit_data", "ridge_solve"]


def check_fit_data(X, y, kernel) -> tuple[np.ndarray, np.ndarray, StationaryKernel]:
    """(X, y, parsed kernel) checked for a regressor's fit: finite, y of shape (n,) or (n, t)."""
    if y is None:
        raise ValueError("this estimator requires y to be passed, but the target y is None.")
    X = check_data(X)
    y = check_array(y, dtype=np.float64, ensure_2d=False, allow_nd=True, ensure_all_finite=True,
                    input_name="y")
    if y.ndim not in (1, 2):
        raise ValueError(f"y must be 1-D (n,) or 2-D (n, n_outputs), got shape {y.shape}.")
    check_consistent_length(X, y)
    parsed = parse_kernel(resolve_kernel(kernel))
    parsed.check_n_features(X.shape[1])
    return X, y, parsed


def ridge_solve(gram: np.ndarray, rhs: np.ndarray, shift: float) -> np.ndarray:
    """Solve ``(gram + shift·I) w = rhs`` by Cholesky (gram symmetric PSD, shift > 0)."""
    A = gram + shift * np.eye(gram.shape[0])
    try:
        factor = scipy.linalg.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError as err:  # only reachable through severe round-off
        raise np.linalg.LinAlgError(
            "Cholesky of the regularised Gram matrix failed; increase reg."
        ) from err
    return scipy.linalg.cho_solve(factor, rhs, check_finite=False)

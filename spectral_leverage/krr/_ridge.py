"""What the sketched and random-feature regressors share: their input check and the ridge solve."""

from __future__ import annotations

import numpy as np
import scipy.linalg
from sklearn.utils import check_consistent_length
from sklearn.utils.validation import validate_data

from .._spd import cholesky
from .._validation import check_target
from ..kernels import StationaryKernel, parse_kernel, resolve_kernel

__all__ = ["check_fit_data", "ridge_solve"]


def check_fit_data(estimator, X, y) -> tuple[np.ndarray, np.ndarray, StationaryKernel]:
    """(X, y, parsed kernel) checked for ``estimator``'s fit by scikit-learn's ``validate_data``
    (which also records ``n_features_in_`` and ``feature_names_in_``): finite float64, n >= 2, y of
    shape (n,) or (n, t)."""
    X, y = validate_data(estimator, X, check_target(y), validate_separately=(
        dict(dtype=np.float64, ensure_2d=True, ensure_all_finite=True, ensure_min_samples=2),
        dict(dtype=np.float64, ensure_2d=False, allow_nd=True, ensure_all_finite=True),
    ))
    if y.ndim not in (1, 2):
        raise ValueError(f"y must be 1-D (n,) or 2-D (n, n_outputs), got shape {y.shape}.")
    check_consistent_length(X, y)
    parsed = parse_kernel(resolve_kernel(estimator.kernel))
    parsed.check_inputs(X)
    return X, y, parsed


def ridge_solve(gram: np.ndarray, rhs: np.ndarray, shift: float) -> np.ndarray:
    """Solve ``(gram + shift·I) w = rhs`` by Cholesky (gram symmetric PSD, shift > 0)."""
    A = gram + shift * np.eye(gram.shape[0])
    try:
        factor = cholesky(A, lower=True, overwrite_a=True), True
    except np.linalg.LinAlgError as err:  # only reachable through severe round-off
        raise np.linalg.LinAlgError(
            "Cholesky of the regularised Gram matrix failed; increase reg."
        ) from err
    return scipy.linalg.cho_solve(factor, rhs, check_finite=False)

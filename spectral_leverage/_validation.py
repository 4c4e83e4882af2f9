"""Input checks shared by every public entry point.

Thin wrappers over scikit-learn's own validators, so every estimator reports bad input with the
same clear messages: the argument's name, what was wrong and how to fix it.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_array, check_scalar
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = [
    "DEFAULT_REG",
    "KERNEL",
    "MEMORY_BUDGET",
    "N_JOBS",
    "POSITIVE",
    "POSITIVE_INT",
    "RANDOM_STATE",
    "NumericInterval",
    "check_bandwidth_range",
    "check_data",
    "check_density_range",
    "check_fitted_data",
    "check_kernel_range",
    "check_positive",
    "check_random_state",
    "check_samples",
    "check_target",
    "expected_failed_checks",
    "is_dask_collection",
    "renamed",
    "validate_params",
    "warn_constant_features",
]

#: Default λ of every estimator built without one: n^{-3/4} at n = 10^4, the order of the
#: paper's rate on standardised data; cross-validate it for real use.
DEFAULT_REG = 1e-3


class NumericInterval(Interval):
    """scikit-learn's ``Interval`` without the bools: ``Interval(Real, ...)`` and
    ``Interval(Integral, ...)`` take ``True`` as 1, so ``reg=True`` would run as λ = 1. Every
    numeric entry of the package's ``_parameter_constraints`` is one of these."""

    def is_satisfied_by(self, val) -> bool:
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)

    def __str__(self) -> str:
        return f"{super().__str__()} (not a bool)"


# Entries of scikit-learn's ``_parameter_constraints``, shared by every estimator of the package.
#: a kernel object, or None for the default of :func:`~spectral_leverage.kernels.resolve_kernel`:
#: checked in ``fit`` by :func:`~spectral_leverage.kernels.parse_kernel` (a Matérn or RBF kernel,
#: its message names them) where the spectral density is needed, and by
#: :func:`~spectral_leverage.samplers._dictionary.check_kernel` (any scikit-learn kernel object)
#: in the dictionary samplers and the selectors, which only evaluate it
KERNEL = "no_validation"
#: a finite float > 0 (λ, bandwidths, dimensions)
POSITIVE = [NumericInterval(Real, 0, None, closed="neither")]
#: an int >= 1 (sizes, counts)
POSITIVE_INT = [NumericInterval(Integral, 1, None, closed="left")]
#: bytes of temporaries in all (one block of rows takes at most min(budget, 64 MiB))
MEMORY_BUDGET = [NumericInterval(Real, 1, None, closed="left")]
#: joblib's ``n_jobs``: None, -1 and below (all cores but ...), or a count >= 1; not 0
N_JOBS = [NumericInterval(Integral, None, -1, closed="right"),
          NumericInterval(Integral, 1, None, closed="left"), None]
#: what :func:`check_random_state` takes
RANDOM_STATE = [None, NumericInterval(Integral, 0, None, closed="left"), np.random.Generator,
                np.random.RandomState, np.random.SeedSequence]


def expected_failed_checks(estimator) -> dict[str, str]:
    """The scikit-learn estimator checks ``estimator`` is known to fail, each with its reason: its
    class's ``_expected_failed_checks`` (empty if it has none), kept beside the estimator, for
    ``parametrize_with_checks(..., expected_failed_checks=expected_failed_checks)`` and
    ``check_estimator(estimator, expected_failed_checks=expected_failed_checks(estimator))``."""
    return dict(getattr(type(estimator), "_expected_failed_checks", {}))


def validate_params(estimator) -> None:
    """Check ``estimator``'s parameters against its ``_parameter_constraints``: an
    ``InvalidParameterError`` (a ``ValueError`` and ``TypeError``) naming the parameter, its
    allowed values and what was given. The one call into scikit-learn's parameter validation."""
    estimator._validate_params()


def is_dask_collection(X) -> bool:
    """Whether X is a Dask array or DataFrame, decided without importing Dask (the estimators then
    run on the Dask backend, :mod:`spectral_leverage.backends.dask`)."""
    return type(X).__module__.split(".")[0] in ("dask", "dask_expr")


def check_data(X, *, name: str = "X", min_samples: int = 2) -> np.ndarray:
    """Return ``X`` as a finite float64 array of shape (n, d) with n >= ``min_samples``.

    Raises ``ValueError`` naming ``name`` for NaN/inf, a 1-D or 3-D array, empty data or too few
    rows (scikit-learn's messages, which already say how to reshape).
    """
    return check_array(
        X,
        dtype=np.float64,
        ensure_2d=True,
        ensure_all_finite=True,
        ensure_min_samples=min_samples,
        input_name=name,
    )


def check_target(y, *, name: str = "y"):
    """``y`` as given when it holds numbers (an object array of numbers as float64); a one-line
    ``ValueError`` naming ``name`` for strings and other labels. scikit-learn's
    ``validate_data(..., y_numeric=True)`` converts only object arrays and lets a string array
    through, which then failed deep inside a fit (a ``UFuncTypeError`` after the centres were
    drawn). Dask collections are checked by their dtype, without computing them; None is left
    to scikit-learn's message."""
    if y is None:
        return y
    dtype = getattr(y, "dtype", None)
    if dtype is None:
        y = np.asarray(y)
        dtype = y.dtype
    kind = getattr(dtype, "kind", "O")
    if kind in "biufc":
        return y
    if kind == "O" and not is_dask_collection(y):
        try:
            return np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            pass
    raise ValueError(f"{name} must hold numbers (a regression target), got dtype {dtype}: convert it "
                     f"to floats ({name}.astype(float)) or, for class labels, use a classifier.")


def check_fitted_data(estimator, X, *, fitted_attribute: str = "n_features_in_") -> np.ndarray:
    """Query data for a fitted estimator: ``NotFittedError`` before ``fit``, then a finite float64
    array (one row suffices) with the features seen in ``fit`` (scikit-learn's ``validate_data``)."""
    check_is_fitted(estimator, fitted_attribute)
    return validate_data(estimator, X, reset=False, dtype=np.float64, ensure_min_samples=1)


#: |log10| bounds on the features' spreads for densities in X's units: each spread (squared
#: distances stay in float64's normal range) and their product (the density's volume factor)
MAX_LOG10_SPREAD, MAX_LOG10_VOLUME = 150.0, 250.0


def check_density_range(X: np.ndarray, *, name: str = "X") -> None:
    """Refuse ``X`` whose densities, in X's units, leave float64: a feature's spread beyond
    1e±150 (its squared distances under- or overflow) or the product of the spreads beyond
    1e±250 (the density's volume factor). A ``ValueError`` naming the fix, instead of infinite
    densities."""
    std = np.std(X, axis=0)
    with np.errstate(divide="ignore"):
        log_spread = np.log10(std[std > 0])
    if log_spread.size and (np.max(np.abs(log_spread)) > MAX_LOG10_SPREAD
                            or abs(float(np.sum(log_spread))) > MAX_LOG10_VOLUME):
        raise ValueError(
            f"{name}'s spread (standard deviations {np.min(std[std > 0]):.3g}..{np.max(std):.3g}) is too "
            f"extreme for float64 densities: standardise {name}."
        )


#: most bandwidths a feature's range may span: beyond, the Gaussian KDE's exponent r²/2 (r the
#: distance in bandwidths) is rounded by more than log(float max), so its densities say nothing
MAX_BANDWIDTH_SPAN = float(np.sqrt(np.log(np.finfo(float).max) / np.finfo(float).eps))


def check_bandwidth_range(bandwidth: float, low, high, *, name: str = "bandwidth") -> None:
    """Refuse a KDE bandwidth (a float in X's units) that leaves float64 relative to X, whose
    features run from ``low`` to ``high``: a volume factor :math:`h^d` beyond 1e±250 (the densities
    over- or underflow: ``bandwidth=1e-300`` raised an ``OverflowError`` laying out the grid) or a
    range of more than :data:`MAX_BANDWIDTH_SPAN` bandwidths (about 1.8e9). A one-line
    ``ValueError`` naming ``name`` and the fix."""
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        extent = float(np.max(high - low, initial=0.0))
        span = extent / bandwidth
    if abs(low.size * np.log10(bandwidth)) > MAX_LOG10_VOLUME or not span <= MAX_BANDWIDTH_SPAN:
        raise ValueError(
            f"{name}={bandwidth:.3g} is too extreme for float64 densities of X (features' ranges up "
            f"to {extent:.3g}): pass a {name} near X's spread, or {name}='scott'."
        )


def check_kernel_range(X: np.ndarray, length_scale, nu: float, *, name: str = "X") -> None:
    r"""Refuse ``X`` whose distances in the kernel's units, :math:`r = \|x - x'\| / \ell`, leave
    float64 kernel values: :math:`r^2` overflows beyond about 1e154, and scikit-learn's general-ν
    Matérn formula, :math:`(\sqrt{2\nu} r)^\nu K_\nu(\sqrt{2\nu} r)`, gives ``inf * 0 = NaN``
    once the power overflows or underflows (ν other than 1/2, 3/2, 5/2 and ∞). The largest
    distance is bounded by the features' ranges; such data (magnitudes like 1e140 or 1e-110, a
    length scale 1e-100 of the spread) get a one-line ``ValueError`` naming the fix instead of a
    NaN or a LAPACK error deep inside."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        extent = np.ptp(X, axis=0) / np.asarray(length_scale, dtype=float)
        top = float(np.max(extent, initial=0.0))
        r = top * float(np.sqrt(np.sum((extent / top) ** 2))) if 0 < top < np.inf else top
        log_r = float(np.log10(r)) if r > 0 else -np.inf
    low, high = -np.inf, 150.0
    if nu not in (0.5, 1.5, 2.5, np.inf):
        log_unit = float(np.log10(np.sqrt(2 * nu)))
        low, high = -250 / nu - log_unit, min(high, 300 / nu - log_unit)
    if r > 0 and not low < log_r < high:
        raise ValueError(
            f"{name}'s range in the kernel's units (largest distance / length scale = {r:.3g}, outside "
            f"1e{low:.0f}..1e{high:.0f}) is too extreme for float64 kernel values: standardise {name} "
            "and choose a length scale near its spread."
        )


def renamed(estimator, old: str, new: str, removed_in: str):
    """The value of parameter ``new``, or of its deprecated alias ``old`` (with a ``FutureWarning``)
    when the caller set that one: an alias left at its default, the string ``"deprecated"``."""
    if getattr(estimator, old) == "deprecated":
        return getattr(estimator, new)
    warnings.warn(f"{old} was renamed {new} and will be removed in {removed_in}; pass {new} instead.",
                  FutureWarning, stacklevel=3)
    return getattr(estimator, old)


def warn_constant_features(std: np.ndarray, names=None) -> None:
    """Warn when features have zero variance: they carry nothing, and in density-based scores they
    stand for a dimension the data do not fill. ``names`` label them (default: 0-based indices)."""
    constant = np.flatnonzero(np.asarray(std) == 0)
    if constant.size and constant.size < np.size(std):
        labels = [str(names[j]) for j in constant] if names is not None else constant.tolist()
        warnings.warn(f"features {labels} are constant (zero variance) and carry nothing: drop them.",
                      UserWarning, stacklevel=3)


def _refuse_bool(value, name: str, kind: str) -> None:
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be {kind}, not a bool; got {value!r}.")


def check_positive(value, name: str) -> float:
    """``value`` as a float > 0 and finite; ``TypeError``/``ValueError`` naming ``name`` otherwise
    (a bool is refused: ``True`` is not λ = 1)."""
    _refuse_bool(value, name, "a float > 0")
    value = check_scalar(value, name, Real, min_val=0.0, include_boundaries="neither")
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}.")
    return float(value)


def check_samples(n_samples, name: str = "n_samples") -> int:
    """``n_samples`` as an int >= 1; ``TypeError``/``ValueError`` naming it otherwise (a bool too)."""
    _refuse_bool(n_samples, name, "an int >= 1")
    return int(check_scalar(n_samples, name, Integral, min_val=1))


def check_random_state(random_state) -> np.random.Generator:
    """A numpy ``Generator`` from None, an int, a ``SeedSequence``, a ``Generator`` (returned as is)
    or a legacy ``RandomState`` (seeds a new Generator from it)."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2**31 - 1))
    if random_state is None or isinstance(random_state, (Integral, np.random.Generator,
                                                         np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    raise TypeError(
        f"random_state must be None, an int or a numpy Generator, got {random_state!r}."
    )

"""Every public estimator of the package follows scikit-learn's rules: it builds with no arguments,
declares ``_parameter_constraints`` for exactly its parameters, and rejects a bad value by name."""

import inspect

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

import spectral_leverage
from spectral_leverage import SpectralLeverage
from spectral_leverage._validation import (
    NumericInterval,
    check_positive,
    check_samples,
    expected_failed_checks,
    validate_params,
)
from spectral_leverage.density import BinnedDensity, KNNDensity, TreeDensity

ESTIMATORS = sorted(
    {obj for obj in (*vars(spectral_leverage).values(), KNNDensity)
     if inspect.isclass(obj) and issubclass(obj, BaseEstimator) and not inspect.isabstract(obj)
     and obj.__name__ != "LeverageSampler"},
    key=lambda cls: cls.__name__,
)


def test_every_public_estimator_is_listed():
    names = {cls.__name__ for cls in ESTIMATORS}
    assert {"SpectralLeverage", "NystromKRR", "LeverageNystroem", "BinnedDensity", "TreeDensity",
            "KNNDensity", "ExactLeverage", "UniformSampler", "RecursiveRLS", "BLESS", "SQUEAK",
            "AlaouiMahoneySampler", "SketchedKRR", "RandomFourierKRR"} <= names


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_builds_without_arguments_and_constrains_every_parameter(cls):
    estimator = cls()
    assert set(cls._parameter_constraints) == set(estimator.get_params(deep=False))


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_a_bad_parameter_is_refused_by_name(cls):
    name = next(p for p, c in cls._parameter_constraints.items() if c != "no_validation")
    X = np.random.default_rng(0).uniform(size=(50, 2))
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of {cls.__name__}"):
        cls().set_params(**{name: object()}).fit(X, X[:, 0])


# SpectralLeverage with its defaults, on both ambient KDEs (the other samplers, the regressors and
# the transformer are checked beside their own tests, with parameters suited to the check data)
@parametrize_with_checks([
    SpectralLeverage(random_state=0),
    SpectralLeverage(kde="tree", intrinsic_dim=None, random_state=0),
], expected_failed_checks=expected_failed_checks)
def test_spectral_leverage_is_a_scikit_learn_estimator(estimator, check):
    check(estimator)


@parametrize_with_checks([BinnedDensity(), TreeDensity(random_state=0), KNNDensity(random_state=0)],
                         expected_failed_checks=expected_failed_checks)
def test_density_estimators_are_scikit_learn_estimators(estimator, check):
    check(estimator)


def _numeric_parameters(cls) -> list[str]:
    """Parameters with a numeric range among their constraints and no bool option."""
    return [name for name, constraints in cls._parameter_constraints.items()
            if isinstance(constraints, list) and "boolean" not in constraints
            and any(isinstance(c, NumericInterval) for c in constraints)]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_reg_true_is_refused(cls):
    # finding 8: scikit-learn's Interval(Real, ...) takes True as 1, so reg=True ran as λ = 1
    names = _numeric_parameters(cls)
    assert names
    for name in names:
        with pytest.raises(InvalidParameterError, match=rf"'{name}' parameter .*not a bool"):
            validate_params(cls().set_params(**{name: True}))


def test_check_positive_and_check_samples_refuse_bools():
    with pytest.raises(TypeError, match="reg must be a float > 0, not a bool"):
        check_positive(True, "reg")
    with pytest.raises(TypeError, match="n_centers must be an int >= 1, not a bool"):
        check_samples(np.True_, "n_centers")


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_expected_failed_checks_are_scikit_learn_checks_with_reasons(cls):
    # finding 11: the checks an estimator fails by design are listed beside it, each with its reason
    from sklearn.utils import estimator_checks

    for name, reason in expected_failed_checks(cls()).items():
        assert callable(getattr(estimator_checks, name, None)), name
        assert isinstance(reason, str) and len(reason) > 40

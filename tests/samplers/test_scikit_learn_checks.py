"""Every sampler of this package passes scikit-learn's estimator checks, with its defaults, but for
the checks listed with a reason beside the sampler (``_validation.expected_failed_checks``)."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from spectral_leverage._validation import expected_failed_checks
from spectral_leverage.samplers import (
    BLESS,
    SQUEAK,
    AdaptiveCholesky,
    AlaouiMahoneySampler,
    ExactLeverage,
    GreedyCholesky,
    KMeansCenters,
    RecursiveRLS,
    RPCholeskyCenters,
    SpectralGreedy,
    UniformSampler,
)


@parametrize_with_checks([
    ExactLeverage(random_state=0),
    UniformSampler(random_state=0),
    AlaouiMahoneySampler(random_state=0),
    RecursiveRLS(random_state=0),
    SQUEAK(random_state=0),
    BLESS(random_state=0),
    KMeansCenters(random_state=0),
    GreedyCholesky(random_state=0),
    RPCholeskyCenters(random_state=0),
    SpectralGreedy(random_state=0),
    AdaptiveCholesky(random_state=0),
], expected_failed_checks=expected_failed_checks)
def test_sampler_passes_the_estimator_checks(estimator, check):
    check(estimator)

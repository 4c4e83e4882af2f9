"""Every sampler of this package passes scikit-learn's estimator checks, with its defaults."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from spectral_leverage.samplers import (
    BLESS,
    SQUEAK,
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
])
def test_sampler_passes_the_estimator_checks(estimator, check):
    check(estimator)

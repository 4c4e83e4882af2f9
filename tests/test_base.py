"""The sampler protocol: attributes from the scores, and draws with the scores' probabilities."""

import warnings

import numpy as np
import pytest
from scipy.stats import chisquare
from sklearn.gaussian_process.kernels import Matern

from spectral_leverage.base import LeverageSampler
from spectral_leverage.samplers import make_sampler


class GivenScores(LeverageSampler):
    def __init__(self, scores=None, random_state=None):
        self.scores = scores
        self.random_state = random_state

    def fit(self, X=None, y=None):
        self._set_scores(np.asarray(self.scores, dtype=float))
        return self


def test_attributes_follow_from_the_scores():
    scores = np.array([1.0, 3.0, 0.0, 4.0])
    s = GivenScores(scores).fit()
    np.testing.assert_array_equal(s.leverage_, [0.25, 0.75, 0.0, 1.0])
    np.testing.assert_array_equal(s.probabilities_, [0.125, 0.375, 0.0, 0.5])
    assert s.effective_dimension_ == 2.0


@pytest.mark.parametrize("n", [5, 3 * 2**16 + 7], ids=["one segment", "several segments"])
def test_draws_have_the_probabilities_of_the_scores(n):
    # the two-level inverse CDF against the probabilities themselves: a chi-square test on 400 000
    # draws (the scores repeat a pattern of five weights, one zero, so that every cell is populous)
    pattern = np.array([1.0, 2.0, 0.0, 3.0, 4.0])
    scores = np.resize(pattern, n)
    draws = GivenScores(scores).fit().sample(400_000, random_state=0)
    assert scores[draws].min() > 0  # a zero score is never drawn
    observed = np.bincount(draws % 5, minlength=5)[[0, 1, 3, 4]]
    weights = np.bincount(np.arange(n) % 5, weights=scores, minlength=5)[[0, 1, 3, 4]]
    assert chisquare(observed, 400_000 * weights / weights.sum()).pvalue > 1e-4


def test_draws_without_replacement_are_distinct_and_refused_beyond_the_positive_mass():
    s = GivenScores([1.0, 0.0, 2.0, 5.0]).fit()
    assert sorted(s.sample(3, replace=False, random_state=0)) == [0, 2, 3]
    with pytest.raises(ValueError, match="non-zero probability"):
        s.sample(4, replace=False)


@pytest.mark.parametrize("scores", [[1.0, np.nan], [1.0, -1.0], [0.0, 0.0], [1.0, np.inf]])
def test_invalid_scores_are_a_clear_error(scores):
    with pytest.raises(RuntimeError, match="invalid scores"):
        GivenScores(scores).fit()


# degenerate answers warn and name the fix, for every sampler that estimates leverage (issue 24)
@pytest.mark.parametrize("scale, length, reg, message", [
    (100.0, 0.01, 1e-3, r"over 90% of the bound .* most points are isolated .* standardise X"),
    (1.0, 1.0, 7e-4, r"at least half of n = 200: .* use a larger reg or a longer length scale"),
    (1.0, 100.0, 1e-1, r"at most 1: the kernel sees the data as about one point .* smaller reg"),
])
@pytest.mark.parametrize("method", ["exact", "spectral", "recursive-rls"])
def test_a_degenerate_effective_dimension_warns_with_the_fix(method, scale, length, reg, message):
    X = np.random.default_rng(0).normal(size=(200, 3)) * scale
    with pytest.warns(UserWarning, match=message):
        make_sampler(method, kernel=Matern(length, nu=1.5), reg=reg, random_state=0).fit(X)


def test_a_sound_answer_and_uniform_sampling_do_not_warn():
    X = np.random.default_rng(0).normal(size=(200, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_sampler("exact", kernel=Matern(1.0, nu=1.5), reg=1e-2).fit(X)
        make_sampler("uniform", kernel=Matern(100.0, nu=1.5), reg=1e-1).fit(X)

"""The dictionary samplers' shared estimators against the dense formula."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from sampler_problems import KERNEL
from sklearn.gaussian_process.kernels import (
    RBF,
    ConstantKernel,
    DotProduct,
    ExpSineSquared,
    Matern,
    RationalQuadratic,
    WhiteKernel,
)

from spectral_leverage import make_sampler
from spectral_leverage.samplers._dictionary import (
    PREDICTION_MARGIN,
    dictionary_scores,
    most_centres,
    nystrom_leverage,
    plan_blocks,
    predicted_effective_dimension,
    weighted_rls,
)


def test_row_blocks_do_not_change_the_estimators():
    X = np.random.default_rng(0).uniform(size=(300, 2))
    centres, probs = X[::7], np.linspace(0.2, 1.0, X[::7].shape[0])
    small = 700_000  # bytes: the 43×43 factors and blocks of 278 rows, so two blocks
    assert len(plan_blocks(300, 43, small)) == 2
    for func, args in ((weighted_rls, (centres, probs, 0.5)), (nystrom_leverage, (centres, 0.5))):
        whole = func(X, KERNEL, *args)
        blocked = func(X, KERNEL, *args, memory_budget=small)
        np.testing.assert_allclose(blocked, whole, rtol=1e-10)
    K = KERNEL(X)
    exact = np.diag(K @ np.linalg.inv(K + 0.5 * np.eye(300)))
    for scoring in ("nystrom", "weighted"):
        ours = dictionary_scores(X, KERNEL, X, np.ones(300), 0.5, scoring)
        np.testing.assert_allclose(ours, exact, rtol=1e-6, atol=1e-9)


def test_estimators_match_their_dense_formulas_on_a_partial_dictionary():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(120, 2))
    J = np.sort(rng.choice(120, size=25, replace=False))
    probs, gamma = rng.uniform(0.3, 1.0, size=25), 0.2
    K = KERNEL(X)
    # weighted: γ^{-1}(k_ii − k_iJ (K_JJ + γP)^{-1} k_Ji), P = diag(p_j), clipped to [0, 1]
    inner = np.linalg.solve(K[np.ix_(J, J)] + gamma * np.diag(probs), K[J])
    weighted = np.clip((np.diag(K) - np.einsum("ji,ji->i", K[J], inner)) / gamma, 0.0, 1.0)
    np.testing.assert_allclose(weighted_rls(X, KERNEL, X[J], probs, gamma), weighted, rtol=1e-8, atol=1e-10)
    # Nyström: diag of L(L + γI)^{-1}, L = K_nJ K_JJ^+ K_Jn
    L = K[:, J] @ np.linalg.pinv(K[np.ix_(J, J)], hermitian=True) @ K[J]
    nystrom = np.diag(np.linalg.solve(L + gamma * np.eye(120), L))
    np.testing.assert_allclose(nystrom_leverage(X, KERNEL, X[J], gamma), nystrom, rtol=1e-6, atol=1e-10)


def test_a_dictionary_past_the_budget_is_refused_before_it_is_built():
    X = np.random.default_rng(2).uniform(size=(500, 2))
    # 500 centres: 16 · 500² bytes of factors alone, 3.8 MiB, more than 2 MiB
    for func, args in ((weighted_rls, (X, np.ones(500), 0.5)), (nystrom_leverage, (X, 0.5))):
        with pytest.raises(ValueError, match=r"m=500 centres.*memory_budget=2097152.*at least \d+"):
            func(X, KERNEL, *args, memory_budget=2 * 2**20)


def test_an_indefinite_kernel_matrix_names_the_cause_and_the_fix():
    """The ci property profile's case (issue 24): three rows within 1e-16 of each other, scikit-learn's
    Matern at nu = 1/16 (inexact between nearly coincident rows, so K is indefinite), reg = 1e-3:
    scipy's bare "3-th leading minor of the array is not positive definite" came out of BLESS."""
    X = np.array([[6.36961687e-17], [2.69786714e-17], [4.09735239e-18]])
    sampler = make_sampler("bless", kernel=Matern(1.0, nu=0.0625), reg=1e-3, random_state=0)
    with pytest.raises(np.linalg.LinAlgError,
                       match=r"not positive semi-definite\. .* drop duplicated rows, standardise X"):
        sampler.fit(X)


@pytest.mark.parametrize("name", ["bless", "squeak", "recursive-rls"])
def test_dictionary_exp_sine_squared_is_not_blamed_on_matern(name):
    # finding 7: the dictionary samplers take any scikit-learn kernel (they only evaluate it); a
    # kernel that is not positive definite on X (ExpSineSquared of two features) was blamed on
    # scikit-learn's Matern at a general nu
    X = np.random.default_rng(0).normal(size=(200, 2))
    match = r"kernel ExpSineSquared\(.*\) is not positive definite"
    with pytest.raises(np.linalg.LinAlgError, match=match) as err:
        make_sampler(name, kernel=ExpSineSquared(), reg=1e-3, random_state=0).fit(X)
    assert "Matern at a nu" not in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["bless", "squeak", "recursive-rls", "alaoui-mahoney"])
@pytest.mark.parametrize("kernel", [ExpSineSquared(), DotProduct(), RationalQuadratic(),
                                    Matern(nu=1.5) + RBF()], ids=repr)
def test_dictionary_samplers_take_any_kernel_on_one_feature(name, kernel):
    # positive definite kernels (ExpSineSquared is, on one feature) give scores in (0, 1]
    X = np.random.default_rng(0).normal(size=(200, 1))
    sampler = make_sampler(name, kernel=kernel, reg=1e-2, random_state=0).fit(X)
    assert np.all(np.isfinite(sampler.leverage_)) and np.all(sampler.leverage_ > 0)


@pytest.mark.parametrize("name", ["bless", "squeak", "recursive-rls", "alaoui-mahoney"])
def test_dictionary_negative_amplitude_is_refused_by_name(name):
    X = np.random.default_rng(0).normal(size=(50, 1))
    with pytest.raises(ValueError, match=r"k\(x, x\) = -2 on X.*amplitude > 0"):
        make_sampler(name, kernel=ConstantKernel(-2.0) * ExpSineSquared(), reg=1e-2).fit(X)


@pytest.mark.parametrize("name", ["bless", "squeak", "recursive-rls", "alaoui-mahoney"])
@pytest.mark.parametrize("kernel", [WhiteKernel(), RBF() + WhiteKernel(0.5)], ids=repr)
def test_white_kernel_is_refused_not_scored_near_zero(name, kernel):
    """Issue 38: WhiteKernel (alone or in a sum) reached scores of 1e-295 against an exact d_eff of
    333, with a misleading "at most 1" warning: kernel(X, Y) is 0 for it, so every cross-kernel
    missed the noise. It is now refused, naming reg as the place for the noise."""
    X = np.random.default_rng(0).normal(size=(100, 2))
    with pytest.raises(ValueError, match=r"as WhiteKernel does.*give the noise as reg"):
        make_sampler(name, kernel=kernel, reg=1e-3, random_state=0).fit(X)


def test_nystrom_leverage_when_syevr_fails():
    """Property suite (issue 38's designs): LAPACK's syevr raised "Internal Error" on the kernel of
    Recursive-RLS's dictionary (0.01 * Matern(nu=0.5), 262 rows in 8-D on mixed scales); the
    eigenvectors then come from QR iteration (syev), and the scores are the same."""
    from scipy.linalg import eigh as scipy_eigh

    import spectral_leverage.samplers._dictionary as dictionary

    X = np.random.default_rng(0).uniform(size=(60, 2))
    expected = nystrom_leverage(X, KERNEL, X[:20], 0.1)

    def failing_evr(a, *args, driver=None, **kwargs):
        if driver == "evr":
            raise np.linalg.LinAlgError("Internal Error.")
        return scipy_eigh(a, *args, driver=driver, **kwargs)

    with mock.patch.object(dictionary, "eigh", failing_evr):
        np.testing.assert_allclose(nystrom_leverage(X, KERNEL, X[:20], 0.1), expected, rtol=1e-8)


@pytest.mark.parametrize("name", ["squeak", "bless", "recursive-rls"])
def test_slow_before_refusing_a_dictionary_sure_to_outgrow_the_budget(name):
    # finding 4 of the hostile-input campaign: at λ = 1e-8 SQUEAK ran 312 s on 20 000 rows before
    # its dictionary passed the budget. Here the budget holds 232 centres of 3000 rows and the
    # density formula predicts d_eff ≈ 3000: refused before any dictionary is scored.
    X = np.random.default_rng(1).normal(size=(3000, 6))
    sampler = make_sampler(name, kernel=Matern(1.0, nu=1.5), reg=1e-8, random_state=0,
                           memory_budget=4 * 2**20)
    module = type(sampler).__module__
    with mock.patch(f"{module}.weighted_rls", side_effect=AssertionError("a dictionary was scored")), \
            pytest.raises(ValueError, match=r"predicts an effective dimension of about \d+.*232"):
        sampler.fit(X)


def test_the_prediction_refuses_no_dictionary_that_fits():
    # λ = 1e-2: d_eff 77 of 3000 rows (exact; predicted 72); the dictionaries hold 178-344 centres,
    # within the 403 the budget holds: the prediction runs (3000 > 2 x 403) and lets the fits run
    X = np.random.default_rng(1).normal(size=(3000, 6))
    budget = 8 * 2**20
    for name in ("squeak", "bless", "recursive-rls"):
        sampler = make_sampler(name, kernel=Matern(1.0, nu=1.5), reg=1e-2, random_state=0,
                               memory_budget=budget).fit(X)
        assert sampler.dictionary_indices_.size <= most_centres(3000, budget)


def test_the_predicted_effective_dimension_is_within_the_margin_of_the_exact_one():
    # the refusal's premise: the density formula on an evenly spaced subsample (800 of 2400 rows)
    # reads d_eff within PREDICTION_MARGIN of the exact one, from the density regime to saturation
    rng = np.random.default_rng(2)
    X = rng.normal(size=(2400, 4))
    for kernel in (Matern(1.0, nu=0.5), Matern(1.0, nu=2.5), RBF(0.5)):
        eig = np.clip(np.linalg.eigvalsh(kernel(X)), 0.0, None)
        for reg in (1e-3, 1e-5, 1e-7):
            exact = np.sum(eig / (eig + 2400 * reg))
            with mock.patch("spectral_leverage.samplers._dictionary.PREDICTION_ROWS", 800):
                predicted = predicted_effective_dimension(X, kernel, reg, 2**30)
            assert 1 / PREDICTION_MARGIN < predicted / exact < PREDICTION_MARGIN, (kernel, reg)

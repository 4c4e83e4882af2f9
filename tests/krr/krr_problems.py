"""Problems shared by the KRR tests."""

import numpy as np
import pytest
import scipy.linalg
from sklearn.gaussian_process.kernels import Matern
from threadpoolctl import threadpool_limits

from spectral_leverage import exact_leverage
from spectral_leverage.base import LeverageSampler


@pytest.fixture(scope="module")
def single_threaded_blas():
    """Small dense problems: multi-threaded OpenBLAS only adds spin-wait overhead (2-3x on a busy box)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def exact_krr(K, y, reg):
    n = K.shape[0]
    return scipy.linalg.cho_solve(scipy.linalg.cho_factor(K + n * reg * np.eye(n)), y)


def small_problem(n=300, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.sin(5 * X[:, 0]) + X[:, -1] + 0.2 * rng.normal(size=n)
    return X, y


@pytest.fixture(scope="module")
def mixture_problem():
    """X ~ 0.97·U[0,1]³ + 0.03·U[2,3]³, f* = sin(4x₁) + x₂² − x₃, σ = 0.5, n = 4000, λ = n^{-3/4}."""
    n = 4000
    rng = np.random.default_rng(2017)
    far = rng.uniform(size=n) < 0.03
    X = np.where(far[:, None], rng.uniform(2.0, 3.0, (n, 3)), rng.uniform(size=(n, 3)))
    f_star = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 - X[:, 2]
    y = f_star + 0.5 * rng.normal(size=n)
    kernel, reg = Matern(length_scale=0.5, nu=1.5), n ** -0.75
    K = kernel(X)
    risk_exact = np.mean((K @ exact_krr(K, y, reg) - f_star) ** 2)
    d_eff = exact_leverage(X, kernel, reg).sum()
    return dict(X=X, y=y, f_star=f_star, kernel=kernel, reg=reg, K=K, risk_exact=risk_exact, d_eff=d_eff)


def smooth_data(n, d=2, seed=0, t=None, noise=0.3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    f = np.sin(4 * X[:, 0]) + X[:, 1] ** 2
    eps = rng.normal(size=(n,) if t is None else (n, t))
    y = (f if t is None else f[:, None] * np.arange(1, t + 1)) + noise * eps
    return X, y


class FixedScores(LeverageSampler):
    """A sampler with given scores (e.g. exact leverage computed elsewhere)."""

    def __init__(self, scores=None, random_state=None):
        self.scores = scores
        self.random_state = random_state

    def fit(self, X, y=None):
        self.n_features_in_ = np.asarray(X).shape[1]
        self._set_scores(self.scores)
        return self


def path_problem(n=300, seed=0, t=None, weighted=False):
    """(X, Y (n, t) with an offset of 20, weights or None, 40 distinct rows as centres)."""
    X, y = smooth_data(n, seed=seed, t=t)
    y = y + 20.0
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.3, 3.0, size=n) if weighted else None
    centers = X[np.sort(rng.choice(n, 40, replace=False))]
    return X, y.reshape(n, -1), w, centers

r"""Built-in synthetic designs (no download): the test, demo, benchmark and validation data.

* :func:`make_bimodal`: :math:`0.9\,U[0,1]^d + 0.1\,N((1.5,\dots,1.5), 0.05^2 I)`, the bimodal design
  of Chen & Yang (2021): a dense, narrow mode beside a uniform bulk.
* :func:`make_beta`: a 1-D :math:`\mathrm{Beta}(a, b)` design (uniform for :math:`a = b = 1`); with
  :math:`a, b > 1` the density vanishes at the boundary, where leverage is largest.
* :func:`make_sparse_mode`: :math:`0.97\,U[0,1]^3 + 0.03\,U[2,3]^3`, a small, sparse second mode,
  where leverage sampling matters for Nyström KRR.
* :func:`make_embedded`: :math:`U[0,1]^k` carried into :math:`\mathbb{R}^d` by a random orthonormal
  map, plus :math:`N(0, \sigma^2 I_d)` noise: intrinsic dimension k in d features.
* :func:`make_regression_target`: :math:`f^*(x) = \sin(4x_1) + x_2^2 - x_3` and
  :math:`y = f^* + \sigma\varepsilon`.

A numpy ``Generator`` passed as ``random_state`` is used as is, so one generator can draw X and
then the noise.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_data, check_positive, check_random_state, check_samples

__all__ = ["make_beta", "make_bimodal", "make_embedded", "make_regression_target", "make_sparse_mode"]


def make_bimodal(n_samples: int, n_features: int = 1, *, random_state=None) -> np.ndarray:
    """Bimodal design: each point uniform on [0, 1]^d (prob. 0.9) or N(1.5, 0.05²·I) (prob. 0.1).

    Examples
    --------
    >>> make_bimodal(1000, 3, random_state=0).shape
    (1000, 3)
    """
    n, d = check_samples(n_samples, "n_samples"), check_samples(n_features, "n_features")
    rng = check_random_state(random_state)
    in_mode = rng.uniform(size=n) < 0.1
    return np.where(in_mode[:, None], rng.normal(1.5, 0.05, (n, d)), rng.uniform(size=(n, d)))


def make_beta(n_samples: int, a: float = 2.0, b: float = 2.0, *, random_state=None) -> np.ndarray:
    """1-D Beta(a, b) design on [0, 1], shape (n, 1); ``a = b = 1`` is the uniform design.

    Examples
    --------
    >>> X = make_beta(1000, 2.0, 2.0, random_state=0)
    >>> X.shape, bool((X > 0).all() and (X < 1).all())
    ((1000, 1), True)
    """
    n = check_samples(n_samples, "n_samples")
    a, b = check_positive(a, "a"), check_positive(b, "b")
    return check_random_state(random_state).beta(a, b, size=(n, 1))


def make_sparse_mode(n_samples: int, *, random_state=None) -> np.ndarray:
    """Sparse-mode design in 3-D: U[0, 1]³ (prob. 0.97) or U[2, 3]³ (prob. 0.03).

    Examples
    --------
    >>> X = make_sparse_mode(1000, random_state=0)
    >>> bool((X > 2).all(axis=1).mean() < 0.1)
    True
    """
    n = check_samples(n_samples, "n_samples")
    rng = check_random_state(random_state)
    far = rng.uniform(size=n) < 0.03
    return np.where(far[:, None], rng.uniform(2, 3, size=(n, 3)), rng.uniform(size=(n, 3)))


def make_embedded(n_samples: int, n_features: int, *, n_latent: int = 3, noise: float = 0.01,
                  random_state=None) -> np.ndarray:
    """A k = ``n_latent`` dimensional cube in d = ``n_features`` dimensions: U[0, 1]^k times the
    transpose of a random d × k orthonormal basis, plus N(0, ``noise``² I) in every feature.

    Examples
    --------
    >>> X = make_embedded(500, 16, n_latent=4, random_state=0)
    >>> X.shape, int(np.sum(np.linalg.svd(X - X.mean(axis=0), compute_uv=False) > 1.0))
    ((500, 16), 4)
    """
    n = check_samples(n_samples, "n_samples")
    d = check_samples(n_features, "n_features")
    k = check_samples(n_latent, "n_latent")
    if k > d:
        raise ValueError(f"n_latent={k} exceeds n_features={d}; give n_latent <= n_features.")
    noise = check_positive(noise, "noise")
    rng = check_random_state(random_state)
    basis, _ = np.linalg.qr(rng.normal(size=(d, k)))
    return rng.uniform(size=(n, k)) @ basis.T + noise * rng.normal(size=(n, d))


def make_regression_target(X, *, noise: float = 0.5, random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """Noise-free target f*(x) = sin(4x₁) + x₂² − x₃ and noisy y = f* + noise·N(0, 1).

    Parameters
    ----------
    X : array_like of shape (n, d), d >= 3
    noise : float, default=0.5
    random_state : int, numpy Generator or None

    Returns
    -------
    f : ndarray of shape (n,)
    y : ndarray of shape (n,)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> f, y = make_regression_target(make_sparse_mode(500, random_state=rng), random_state=rng)
    >>> f.shape, y.shape
    ((500,), (500,))
    """
    X = check_data(X, min_samples=1)
    if X.shape[1] < 3:
        raise ValueError(f"X needs at least 3 features for f*(x) = sin(4x1) + x2^2 - x3, got {X.shape[1]}.")
    noise = check_positive(noise, "noise")
    f = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 - X[:, 2]
    return f, f + noise * check_random_state(random_state).normal(size=X.shape[0])

"""Inverses of symmetric positive definite matrices by Cholesky, against LU's."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from spectral_leverage._spd import inverse_diagonal, spd_inverse_lower, trailing_inverse_diagonal


def spd(n: int, seed: int, condition: float = 1e6) -> np.ndarray:
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return (Q * np.geomspace(1.0, 1.0 / condition, n)) @ Q.T


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 60), seed=st.integers(0, 2**16), c=st.integers(1, 60))
def test_the_inverse_and_its_trailing_diagonal_equal_lu(n, seed, c):
    A = spd(n, seed)
    c = min(c, n)
    exact = np.linalg.inv(A)
    np.testing.assert_allclose(np.tril(spd_inverse_lower(A)), np.tril(exact), rtol=1e-6,
                               atol=1e-8 * np.abs(exact).max())
    np.testing.assert_allclose(trailing_inverse_diagonal(A, c), np.diag(exact)[n - c:], rtol=1e-8)


def test_only_the_lower_triangle_is_read():
    A = spd(30, 1)
    garbled = np.tril(A) + np.triu(np.full_like(A, np.nan), 1)
    np.testing.assert_allclose(np.tril(spd_inverse_lower(garbled)), np.tril(np.linalg.inv(A)), rtol=1e-7,
                               atol=1e-9)
    np.testing.assert_allclose(trailing_inverse_diagonal(garbled, 5), np.diag(np.linalg.inv(A))[-5:],
                               rtol=1e-9)


def test_lu_answers_where_cholesky_fails():
    # symmetric and invertible but indefinite: potrf refuses it, LU does not
    A = spd(20, 2, condition=10.0)
    A[0, 0] = -1.0
    exact = np.linalg.inv(A)
    np.testing.assert_allclose(np.tril(spd_inverse_lower(A)), np.tril(exact), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(trailing_inverse_diagonal(A, 20), np.diag(exact), rtol=1e-9)


def test_inverse_diagonal_sums_columns_of_the_inverse_factor_by_blocks():
    A = spd(70, 3)
    root = np.linalg.inv(np.linalg.cholesky(A))
    np.testing.assert_allclose(inverse_diagonal(root, block=16), np.diag(np.linalg.inv(A)), rtol=1e-8)

"""Inverses of symmetric positive definite matrices by Cholesky, against LU's; the Cholesky
factorisation every part of the package calls."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from threadpoolctl import threadpool_limits

from spectral_leverage import _lapack, _spd
from spectral_leverage._spd import (
    THREADED_CHOLESKY_LIMIT,
    cholesky,
    factor_in_place,
    inverse_diagonal,
    inverse_quadratic,
    invert_lower_in_place,
    lower_factor,
    lower_solve,
    potrf,
    solve_lower_in_place,
    spd_invert_in_place,
    spd_solve,
    trailing_inverse_diagonals,
)


def spd(n: int, seed: int, condition: float = 1e6) -> np.ndarray:
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return (Q * np.geomspace(1.0, 1.0 / condition, n)) @ Q.T


def inverted(A: np.ndarray) -> np.ndarray | None:
    """A's inverse by spd_invert_in_place on a Fortran-ordered copy, its lower triangle; None where
    the routine says A is not positive definite."""
    inverse = np.array(A, order="F")
    return np.tril(inverse) if spd_invert_in_place(inverse) else None


def trailing(A: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray]:
    """trailing_inverse_diagonals of A's factor, in a stack of three (the others unrelated)."""
    stack = np.stack([spd(len(A), 99), A, spd(len(A), 98)]).swapaxes(1, 2)  # each Fortran-ordered
    assert all(factor_in_place(block) for block in stack)
    diagonal, root = trailing_inverse_diagonals(stack, c)
    return diagonal[1], root[1]


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 60), seed=st.integers(0, 2**16), c=st.integers(1, 60))
def test_the_inverse_and_its_trailing_diagonal_equal_lu(n, seed, c):
    A = spd(n, seed)
    A = (A + A.T) / 2
    c = min(c, n)
    exact = np.linalg.inv(A)
    np.testing.assert_allclose(inverted(A), np.tril(exact), rtol=1e-6, atol=1e-8 * np.abs(exact).max())
    diagonal, root = trailing(A, c)
    np.testing.assert_allclose(diagonal, np.diag(exact)[n - c:], rtol=1e-8)
    # L^{-1}'s trailing block is the inverse of L's own, its upper triangle zero
    L = np.linalg.cholesky(A)
    np.testing.assert_allclose(root, np.linalg.inv(L)[n - c:, n - c:], rtol=1e-7, atol=1e-9)
    assert not np.triu(root, 1).any()


def test_only_the_lower_triangle_is_read():
    A = spd(30, 1)
    garbled = np.tril(A) + np.triu(np.full_like(A, np.nan), 1)
    np.testing.assert_allclose(inverted(garbled), np.tril(np.linalg.inv(A)), rtol=1e-7, atol=1e-9)
    chol = np.array(garbled, order="F")
    assert factor_in_place(chol) and np.isnan(chol[0, 1])  # the upper triangle left as it was
    diagonal, _ = trailing_inverse_diagonals(chol[None], 5)
    np.testing.assert_allclose(diagonal[0], np.diag(np.linalg.inv(A))[-5:], rtol=1e-9)


def test_the_routines_say_where_cholesky_fails_and_a_solve_takes_another_factorisation():
    # symmetric and invertible but indefinite: potrf refuses it, and the caller takes its other route
    A = spd(20, 2, condition=10.0)
    A[0, 0] = -1.0
    assert inverted(A) is None and not factor_in_place(np.array(A, order="F"))
    # a solve falls back to the symmetric indefinite factorisation
    B = np.random.default_rng(0).normal(size=(20, 3))
    np.testing.assert_allclose(spd_solve(A, B), np.linalg.solve(A, B), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(spd_solve(spd(20, 2), B), np.linalg.solve(spd(20, 2), B), rtol=1e-6)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 60), k=st.integers(0, 7), seed=st.integers(0, 2**16))
def test_the_solves_from_the_lower_factor_equal_numpys(n, k, seed):
    A = spd(n, seed, condition=1e4)
    B = np.random.default_rng(seed).standard_normal((n, k))
    chol = lower_factor(np.tril(A) + np.triu(np.full_like(A, np.nan), 1))  # the lower triangle only
    L = np.linalg.cholesky(A)
    np.testing.assert_allclose(np.tril(chol), L, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lower_solve(chol, B), np.linalg.solve(L, B), rtol=1e-7, atol=1e-9)
    exact = np.linalg.solve(L, B)
    single = lower_solve(chol, B, np.float32)  # within n x float32's rounding x L's condition (1e2)
    assert single.dtype == np.float32 and single.flags.f_contiguous
    np.testing.assert_allclose(single, exact, atol=n * 6e-8 * 1e2 * np.abs(exact).max(initial=1e-30))
    np.testing.assert_allclose(inverse_quadratic(A, B), np.diag(B.T @ np.linalg.solve(A, B)), rtol=1e-6,
                               atol=1e-9)


def test_the_solves_answer_where_cholesky_fails():
    A = spd(20, 2, condition=10.0)
    A[0, 0] = -1.0  # symmetric, invertible, indefinite
    B = np.random.default_rng(1).standard_normal((20, 4))
    assert lower_factor(A) is None
    np.testing.assert_allclose(inverse_quadratic(A, B), np.diag(B.T @ np.linalg.solve(A, B)), rtol=1e-9)


def test_inverse_diagonal_sums_columns_of_the_inverse_factor_by_blocks():
    A = spd(70, 3)
    root = np.linalg.inv(np.linalg.cholesky(A))
    np.testing.assert_allclose(inverse_diagonal(root, block=16), np.diag(np.linalg.inv(A)), rtol=1e-8)


def test_cholesky_matches_scipy_and_refuses_an_indefinite_matrix():
    import scipy.linalg

    A = spd(40, 3)
    for lower in (True, False):
        np.testing.assert_allclose(cholesky(A, lower=lower), scipy.linalg.cholesky(A, lower=lower),
                                   rtol=1e-12, atol=1e-14)
    A[5, 5] = -1.0
    assert potrf(A, lower=True)[1] == 6
    with pytest.raises(np.linalg.LinAlgError, match="6-th leading minor"):
        cholesky(A, lower=True)


@pytest.mark.skipif(not _lapack.AVAILABLE, reason="SciPy's Cython LAPACK not found")
def test_the_routines_without_the_gil_give_scipys_bits(monkeypatch):
    # LAPACK called with the GIL released (spectral_leverage._lapack) on a Fortran-ordered copy, as
    # SciPy's wrappers copy it: the same arithmetic, so the same scores as before to the bit
    A = spd(300, 4, condition=1e3)  # over the 256 rows zeroed at a time
    routes = {}
    for available in (False, True):
        monkeypatch.setattr(_spd, "_GIL_FREE", available)
        routes[available] = (potrf(A, lower=True)[0], potrf(A, lower=False)[0],
                             inverted(A), *trailing(A, 7),
                             lower_solve(potrf(A, lower=True)[0], A[:, :5]), inverse_quadratic(A, A[:, :5]),
                             lower_solve(potrf(A, lower=True)[0], A[:, :5], np.float32))
    for scipys, ours in zip(routes[False], routes[True], strict=True):
        np.testing.assert_array_equal(ours, scipys)
    lower, upper = routes[True][:2]
    assert not np.triu(lower, 1).any() and not np.tril(upper, -1).any()  # the other triangle zeroed


@pytest.mark.parametrize("gil_free", [False, True])
def test_the_routines_in_place_work_on_views_of_a_batch_and_give_scipys_bits(monkeypatch, gil_free):
    """The near field's batches hand each block to LAPACK as a Fortran-ordered view of a C-ordered
    stack (its transpose; the blocks are symmetric): each routine works in that view, reads one
    triangle only and leaves the other blocks alone, with SciPy's own wrappers or without the GIL."""
    import scipy.linalg

    if gil_free and not _lapack.AVAILABLE:
        pytest.skip("SciPy's Cython LAPACK not found")
    monkeypatch.setattr(_spd, "_GIL_FREE", gil_free)
    stack = np.stack([spd(40, seed, condition=1e3) for seed in range(3)])
    stack = (stack + stack.swapaxes(1, 2)) / 2  # exactly symmetric, as the near field's blocks are
    A = stack[1].copy()
    stack[1] += np.triu(np.full((40, 40), 7.0), 1).T  # the lower triangle of the C-ordered block
    views = stack.swapaxes(1, 2)  # ... is the upper one of the Fortran-ordered view: never read
    assert factor_in_place(views[1]) and views[1].flags.f_contiguous
    chol = scipy.linalg.lapack.dpotrf(A, lower=True)[0]
    np.testing.assert_array_equal(np.tril(views[1]), chol)
    np.testing.assert_array_equal(stack[0], (spd(40, 0, condition=1e3) + spd(40, 0, condition=1e3).T) / 2)
    for dtype in (np.float64, np.float32):
        rhs = np.ascontiguousarray(A[:, :6].T, dtype=dtype)  # B's transpose: B Fortran-ordered
        solve_lower_in_place(np.asarray(views[1], dtype=dtype, order="F"), rhs.T)
        solve = scipy.linalg.blas.strsm if dtype == np.float32 else scipy.linalg.blas.dtrsm
        expected = solve(1.0, chol.astype(dtype), A[:, :6].astype(dtype), lower=True)
        np.testing.assert_array_equal(rhs.T, expected)
    root = np.array(views[1][-5:, -5:], order="F")
    invert_lower_in_place(root)
    np.testing.assert_array_equal(np.tril(root), scipy.linalg.lapack.dtrtri(chol[-5:, -5:], lower=True)[0])
    indefinite = np.array(np.diag([1.0, -1.0, 2.0]), order="F")
    assert not factor_in_place(indefinite)


def test_potrf_overwrites_a_fortran_ordered_matrix_in_place_as_scipy_does():
    import scipy.linalg

    A = spd(50, 5, condition=1e3)
    expected = scipy.linalg.lapack.dpotrf(A, lower=True)[0]
    for order in ("F", "C"):
        B = np.array(A, order=order)
        factor, info = potrf(B, lower=True, overwrite_a=True)
        assert info == 0 and (factor is B) == (order == "F" and _lapack.AVAILABLE)
        np.testing.assert_array_equal(factor, expected)
    untouched = A.copy()
    potrf(untouched, lower=True)
    np.testing.assert_array_equal(untouched, A)


def test_a_large_cholesky_survives_threaded_blas():
    # OpenBLAS's threaded potrf killed the process (SIGSEGV) from about 15 750 rows on this
    # machine's OpenBLAS builds (2-8 threads), so exact leverage scores past that died whenever BLAS
    # had two threads; above the limit the factorisation runs on one thread. A matrix whose factor is
    # known: A = n I + 0.5 (1 1^T), with the closed form of its first column.
    n = 16_000
    assert n > THREADED_CHOLESKY_LIMIT
    A = np.full((n, n), 0.5, order="F")
    A[np.diag_indices(n)] += n
    with threadpool_limits(2, user_api="blas"):
        factor = cholesky(A, lower=True, overwrite_a=True)
    first = np.full(n, 0.5 / np.sqrt(n + 0.5))
    first[0] = np.sqrt(n + 0.5)
    np.testing.assert_allclose(factor[:, 0], first, rtol=1e-12)
    assert np.all(np.isfinite(np.diag(factor))) and np.all(np.diag(factor) > 0)

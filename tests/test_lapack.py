"""LAPACK's Cholesky routines with the GIL released, against SciPy's wrappers of the same routines:
the same bits, in place on a Fortran-ordered matrix."""

import numpy as np
import pytest
from scipy.linalg import lapack

from spectral_leverage import _lapack

pytestmark = pytest.mark.skipif(not _lapack.AVAILABLE, reason="SciPy's Cython LAPACK not found")


def spd(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n + 5))
    return B @ B.T / n + np.eye(n)


@pytest.mark.parametrize("lower", [True, False])
def test_routines_match_scipy(lower):
    A = spd(37, 0)
    triangle = np.tril if lower else np.triu
    factor = np.asfortranarray(A)
    assert _lapack.potrf(factor, lower) == 0
    expected = lapack.dpotrf(A, lower=lower)[0]
    np.testing.assert_array_equal(triangle(factor), expected)
    inverse = factor.copy(order="F")
    assert _lapack.potri(inverse, lower) == 0
    np.testing.assert_array_equal(triangle(inverse), triangle(lapack.dpotri(expected, lower=lower)[0]))
    np.testing.assert_allclose(triangle(inverse), triangle(np.linalg.inv(A)), rtol=1e-10, atol=1e-12)
    root = factor.copy(order="F")
    assert _lapack.trtri(root, lower) == 0
    np.testing.assert_array_equal(triangle(root), triangle(lapack.dtrtri(expected, lower=lower)[0]))
    np.testing.assert_allclose(triangle(root) @ triangle(factor), np.eye(37), atol=1e-12)


def test_the_other_triangle_is_left_alone_and_failures_are_reported():
    A = spd(12, 1)
    marked = np.asfortranarray(np.tril(A) + np.triu(np.full_like(A, 7.0), 1))
    assert _lapack.potrf(marked, True) == 0
    np.testing.assert_array_equal(np.triu(marked, 1), np.triu(np.full_like(A, 7.0), 1))
    indefinite = np.asfortranarray(spd(12, 1))
    indefinite[4, 4] = -1.0
    assert _lapack.potrf(indefinite, True) == 5  # LAPACK's info: the leading minor of order 5
    singular = np.asfortranarray(np.tril(np.ones((3, 3))))
    singular[1, 1] = 0.0
    assert _lapack.trtri(singular, True) == 2


@pytest.mark.parametrize("bad", [np.ones((3, 3), dtype=np.float32, order="F"), np.ones((3, 4), order="F"),
                                 np.ones((6, 6), order="F")[::2, ::2], np.ones((3, 3)) + np.eye(3)])
def test_refuses_what_lapack_cannot_take_in_place(bad):
    with pytest.raises(ValueError, match=r"float64|Fortran-contiguous|square"):
        _lapack.potrf(bad, True)
    frozen = np.eye(3, order="F")
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        _lapack.potrf(frozen, True)


def test_an_empty_matrix_is_no_error():
    for routine in (_lapack.potrf, _lapack.potri, _lapack.trtri):
        assert routine(np.empty((0, 0), order="F"), True) == 0
    _lapack.trsm(np.empty((0, 0), order="F"), np.empty((0, 3), order="F"), True)
    _lapack.trsm(np.eye(3, order="F"), np.empty((3, 0), order="F"), True)


@pytest.mark.parametrize("dtype, tolerance", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("lower", [True, False])
def test_the_triangular_solve_matches_scipy_and_reads_one_triangle(lower, dtype, tolerance):
    from scipy.linalg import blas

    factor = lapack.dpotrf(spd(41, 2), lower=lower)[0].astype(dtype)
    B = np.random.default_rng(3).standard_normal((41, 9)).astype(dtype)
    other = np.triu(np.full((41, 41), np.nan, dtype=dtype), 1)
    marked = np.asfortranarray(factor + (other if lower else other.T))
    solved = np.asfortranarray(B)
    _lapack.trsm(marked, solved, lower)
    scipys = (blas.dtrsm if dtype == np.float64 else blas.strsm)(1.0, factor, B, lower=lower)
    np.testing.assert_array_equal(solved, scipys)
    np.testing.assert_allclose(factor.astype(float) @ solved, B, atol=tolerance)
    frozen = np.asfortranarray(factor)
    frozen.flags.writeable = False  # the triangle is only read
    _lapack.trsm(frozen, np.asfortranarray(B), lower)


@pytest.mark.parametrize("bad", [np.ones((41, 9)), np.ones((40, 9), order="F"),
                                 np.ones((41, 9), np.float32, order="F")])  # the last: a is float64
def test_the_triangular_solve_refuses_a_right_side_it_cannot_overwrite(bad):
    with pytest.raises(ValueError, match=r"b (must be Fortran|must be a writeable float64|needs 41 rows)"):
        _lapack.trsm(np.eye(41, order="F"), bad, True)

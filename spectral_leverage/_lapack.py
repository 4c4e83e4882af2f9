"""LAPACK's Cholesky routines (``dpotrf``, ``dpotri``, ``dtrtri``) called with the GIL released.

The near field factors one small matrix per group of rows (about 190 rows, 130 000 of them at 10⁶
rows in 8-D), from the package's worker threads (:func:`~spectral_leverage._blocks.on_all_cores`).
SciPy's wrappers of these routines (``scipy.linalg.lapack``, 1.17) hold the GIL while LAPACK runs,
so two threads factor no faster than one (``dpotrf`` + ``dpotri`` of order 190: 0.97x on two
threads of an idle two-core machine, against 1.83x for the same routines here). The routines here
are the very ones SciPy exports for Cython (:mod:`scipy.linalg.cython_lapack`, its public C API,
the same OpenBLAS build), called through :mod:`ctypes`, which releases the GIL for the call.

Each routine works in place on a Fortran-ordered float64 array, as SciPy's wrappers work on their
Fortran-ordered copy: the same arithmetic, to the bit. Where the capsules
cannot be read (a SciPy without them) :data:`AVAILABLE` is False and the callers use
``scipy.linalg.lapack`` instead.
"""

from __future__ import annotations

import ctypes

import numpy as np

__all__ = ["AVAILABLE", "potrf", "potri", "trtri"]


def _routine(name: str, n_args: int):
    """The C function ``name`` of :mod:`scipy.linalg.cython_lapack` (all pointer arguments), or None."""
    try:
        from scipy.linalg import cython_lapack

        capsule = cython_lapack.__pyx_capi__[name]
        get_name = ctypes.pythonapi.PyCapsule_GetName
        get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        address = get_pointer(capsule, get_name(capsule))
    except (ImportError, AttributeError, KeyError, ValueError):
        return None
    return ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * n_args)(address) if address else None


_POTRF, _POTRI, _TRTRI = _routine("dpotrf", 5), _routine("dpotri", 5), _routine("dtrtri", 6)
#: Whether the routines below can be called (SciPy's Cython LAPACK found).
AVAILABLE = None not in (_POTRF, _POTRI, _TRTRI)


def _sizes(a: np.ndarray) -> tuple[ctypes.c_int, ctypes.c_int, ctypes.c_int]:
    """(order, leading dimension, info) for LAPACK: the leading dimension at least 1, as LAPACK
    requires of an empty matrix too."""
    return ctypes.c_int(a.shape[0]), ctypes.c_int(max(1, a.shape[0])), ctypes.c_int(0)


def _fortran_triangle(a: np.ndarray, lower: bool) -> ctypes.c_char:
    """LAPACK's ``uplo`` for the triangle ``lower`` of a, after checking that LAPACK can work on a
    in place."""
    if a.dtype != np.float64 or a.ndim != 2 or a.shape[0] != a.shape[1] or not a.flags.writeable:
        raise ValueError(f"a square, writeable float64 matrix is needed, got {a.dtype} of shape {a.shape}")
    if not a.flags.f_contiguous:
        raise ValueError("a Fortran-contiguous matrix is needed: np.asfortranarray(a)")
    return ctypes.c_char(b"L" if lower else b"U")


def potrf(a: np.ndarray, lower: bool) -> int:
    """Cholesky factor of a (n, n) in its triangle ``lower``, in place from that triangle (the other
    one untouched); LAPACK's ``info`` (> 0: not positive definite to rounding)."""
    uplo, (n, lda, info) = _fortran_triangle(a, lower), _sizes(a)
    _POTRF(ctypes.byref(uplo), ctypes.byref(n), a.ctypes.data, ctypes.byref(lda), ctypes.byref(info))
    return info.value


def potri(a: np.ndarray, lower: bool) -> int:
    r"""The inverse of :math:`LL^\top` in the triangle ``lower`` of a, in place from its Cholesky
    factor L there (:func:`potrf`); LAPACK's ``info``."""
    uplo, (n, lda, info) = _fortran_triangle(a, lower), _sizes(a)
    _POTRI(ctypes.byref(uplo), ctypes.byref(n), a.ctypes.data, ctypes.byref(lda), ctypes.byref(info))
    return info.value


def trtri(a: np.ndarray, lower: bool) -> int:
    """The inverse of the triangular matrix in the triangle ``lower`` of a (non-unit diagonal), in
    place; LAPACK's ``info`` (> 0: singular)."""
    uplo, (n, lda, info), diag = _fortran_triangle(a, lower), _sizes(a), ctypes.c_char(b"N")
    _TRTRI(ctypes.byref(uplo), ctypes.byref(diag), ctypes.byref(n), a.ctypes.data, ctypes.byref(lda),
           ctypes.byref(info))
    return info.value

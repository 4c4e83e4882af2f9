"""LAPACK's Cholesky routines (``dpotrf``, ``dpotri``, ``dtrtri``) and BLAS's triangular solve
(``dtrsm``) called with the GIL released.

The near field factors one small matrix per group of rows (about 190 rows, 130 000 of them at 10⁶
rows in 8-D), from the package's worker threads (:func:`~spectral_leverage._blocks.on_all_cores`).
SciPy's wrappers of these routines (``scipy.linalg.lapack``, 1.17) hold the GIL while LAPACK runs,
so two threads factor no faster than one (``dpotrf`` + ``dpotri`` of order 190: 0.97x on two
threads of an idle two-core machine, against 1.83x for the same routines here). The routines here
are the very ones SciPy exports for Cython (:mod:`scipy.linalg.cython_lapack` and
:mod:`scipy.linalg.cython_blas`, its public C API, the same OpenBLAS build), called through
:mod:`ctypes`, which releases the GIL for the call.

Each routine works in place on a Fortran-ordered float64 array, as SciPy's wrappers work on their
Fortran-ordered copy: the same arithmetic, to the bit. Where the capsules
cannot be read (a SciPy without them) :data:`AVAILABLE` is False and the callers use
``scipy.linalg.lapack`` instead.
"""

from __future__ import annotations

import ctypes
import importlib

import numpy as np

__all__ = ["AVAILABLE", "potrf", "potri", "trsm", "trtri"]


def _routine(library: str, name: str, n_args: int):
    """The C function ``name`` of ``scipy.linalg.cython_<library>`` (all pointer arguments), or None."""
    try:
        module = importlib.import_module(f"scipy.linalg.cython_{library}")
        capsule = module.__pyx_capi__[name]
        get_name = ctypes.pythonapi.PyCapsule_GetName
        get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        address = get_pointer(capsule, get_name(capsule))
    except (ImportError, AttributeError, KeyError, ValueError):
        return None
    return ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * n_args)(address) if address else None


_POTRF, _POTRI = _routine("lapack", "dpotrf", 5), _routine("lapack", "dpotri", 5)
_TRTRI = _routine("lapack", "dtrtri", 6)
_TRSM = {np.dtype(np.float64): _routine("blas", "dtrsm", 11),
         np.dtype(np.float32): _routine("blas", "strsm", 11)}
#: Whether the routines below can be called (SciPy's Cython LAPACK and BLAS found).
AVAILABLE = None not in (_POTRF, _POTRI, _TRTRI, *_TRSM.values())


def _sizes(a: np.ndarray) -> tuple[ctypes.c_int, ctypes.c_int, ctypes.c_int]:
    """(order, leading dimension, info) for LAPACK: the leading dimension at least 1, as LAPACK
    requires of an empty matrix too."""
    return ctypes.c_int(a.shape[0]), ctypes.c_int(max(1, a.shape[0])), ctypes.c_int(0)


def _fortran_triangle(a: np.ndarray, lower: bool, writeable: bool = True, dtype=np.float64) -> ctypes.c_char:
    """LAPACK's ``uplo`` for the triangle ``lower`` of a, after checking that LAPACK can read a (and
    work on it in place if ``writeable``)."""
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"a square matrix is needed, got shape {a.shape}")
    _check_fortran(a, "a", writeable, dtype)
    return ctypes.c_char(b"L" if lower else b"U")


def _check_fortran(a: np.ndarray, name: str, writeable: bool = True, dtype=np.float64) -> None:
    """Raise unless a is a Fortran-contiguous matrix of ``dtype``, writeable if ``writeable``."""
    if a.dtype != dtype or a.ndim != 2 or (writeable and not a.flags.writeable):
        raise ValueError(f"{name} must be a {'writeable ' if writeable else ''}{np.dtype(dtype)} matrix, got "
                         f"{a.dtype} of shape {a.shape}{'' if a.flags.writeable else ', read-only'}")
    if not a.flags.f_contiguous:
        raise ValueError(f"{name} must be Fortran-contiguous: np.asfortranarray({name})")


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


def trsm(a: np.ndarray, b: np.ndarray, lower: bool) -> None:
    """b (n, k) overwritten by :math:`T^{-1}b`, T the triangular matrix in the triangle ``lower`` of
    a (n, n) (non-unit diagonal; the other triangle is not read), both float64 (``dtrsm``) or both
    float32 (``strsm``). No check for a singular T: BLAS divides by its diagonal."""
    dtype = np.float32 if a.dtype == np.float32 else np.float64
    uplo = _fortran_triangle(a, lower, writeable=False, dtype=dtype)
    _check_fortran(b, "b", dtype=dtype)
    if b.shape[0] != a.shape[0]:
        raise ValueError(f"b needs {a.shape[0]} rows, as a has, got shape {b.shape}")
    side, no, diag = ctypes.c_char(b"L"), ctypes.c_char(b"N"), ctypes.c_char(b"N")
    one = (ctypes.c_float if dtype == np.float32 else ctypes.c_double)(1.0)
    n, lda, _ = _sizes(a)
    k, ldb = ctypes.c_int(b.shape[1]), ctypes.c_int(max(1, b.shape[0]))
    _TRSM[np.dtype(dtype)](*map(ctypes.byref, (side, uplo, no, diag, n, k, one)), a.ctypes.data,
                           ctypes.byref(lda), b.ctypes.data, ctypes.byref(ldb))

r"""Shared numerics of the dictionary-based samplers: leverage estimates of many points from few centres.

Two estimators, both evaluated in row blocks so that memory stays within ``memory_budget``: at
most two :math:`m \times m` matrices (:data:`FACTOR_BYTES_PER_ENTRY`) plus one block of rows of the
cross-kernel (never an :math:`n \times n` or a full :math:`n \times m` matrix; the kernel of the
centres is filled by blocks too). A dictionary whose factors leave no room for a block of
:data:`MIN_BLOCK_ROWS` rows is refused with a ValueError (:func:`plan_blocks`) before anything is
allocated: at a small ``reg`` the dictionary of an adaptive sampler can grow to every point, and
its dense factors would outgrow the machine. The budget also bounds the time, :math:`O(n m^2)`.
Where the dictionary is sure to outgrow it, :func:`check_dictionary_fits` refuses before the
first centre is drawn (SQUEAK at λ = 1e-8 on 20 000 rows spent 312 s reaching the budget).

With :math:`\gamma = n\lambda` (the un-normalised regulariser of the literature):

* :func:`weighted_rls` — the weighted-dictionary estimator of Calandriello, Lazaric & Valko (2017,
  eq. 4 with :math:`\varepsilon = 0`), also used by Recursive-RLS and BLESS. For a dictionary
  :math:`J` whose centre :math:`j` was kept with probability :math:`p_j` (importance weight
  :math:`1/p_j`),

  .. math:: \tilde l_i = \gamma^{-1}\bigl(k_{ii} - k_{iJ}(K_{JJ} + \gamma P)^{-1}k_{Ji}\bigr),
     \qquad P = \mathrm{diag}(p_j),

  computed stably as :math:`\gamma^{-1}(k_{ii} - \|L^{-1} S k_{Ji}\|^2)` with
  :math:`S = P^{-1/2}` and :math:`LL^\top = S K_{JJ} S + \gamma I` (eigenvalues :math:`\ge \gamma`).
  With every point in :math:`J` and :math:`p_j = 1` it equals the exact
  :math:`[K(K + \gamma I)^{-1}]_{ii}`.

* :func:`nystrom_leverage` — the leverage of the Nyström approximation
  :math:`\tilde K = K_{nJ} K_{JJ}^{+} K_{Jn}` itself (El Alaoui & Mahoney 2015),
  :math:`[\tilde K(\tilde K + \gamma I)^{-1}]_{ii} = b_i^\top(B^\top B + \gamma I)^{-1} b_i` with
  :math:`B = K_{nJ} K_{JJ}^{+1/2}`: two passes over the rows (accumulate :math:`B^\top B`, then the
  quadratic forms), :math:`O(n m^2)` time.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.linalg import eigh, solve_triangular

from .._blocks import DEFAULT_MEMORY_BUDGET, KERNEL_BYTES_PER_ENTRY, row_chunks
from .._spd import cholesky
from ..kernels import MIN_NU, indefinite_kernel_error, parse_kernel
from ..spectral import SpectralLeverage

__all__ = [
    "FACTOR_BYTES_PER_ENTRY",
    "MIN_BLOCK_ROWS",
    "PREDICTION_MARGIN",
    "PREDICTION_ROWS",
    "SCORINGS",
    "check_dictionary_fits",
    "check_kernel",
    "check_scoring",
    "dictionary_scores",
    "indefinite_dictionary_error",
    "most_centres",
    "nystrom_leverage",
    "plan_blocks",
    "predicted_effective_dimension",
    "weighted_rls",
]

#: Final estimators a dictionary sampler can score all n points with (see :func:`dictionary_scores`).
SCORINGS = ("nystrom", "weighted")

#: Bytes per entry of the m×m matrices alive at once: two float64 (the kernel of the centres and
#: its eigenvectors in :func:`nystrom_leverage`; the eigenvectors and the Gram matrix after it).
FACTOR_BYTES_PER_ENTRY = 16.0
#: Bytes per entry of a row block of the cross-kernel: the kernel with its temporaries, and the
#: block after a product or a triangular solve.
BLOCK_BYTES_PER_ENTRY = KERNEL_BYTES_PER_ENTRY + 16.0
#: Fewest rows per block a dictionary must leave room for (fewer would make the passes crawl).
MIN_BLOCK_ROWS = 256
#: Most rows of the evenly spaced subsample the density formula predicts d_eff from.
PREDICTION_ROWS = 4096
#: A dictionary is refused upfront where the predicted d_eff is over this multiple of the centres
#: the budget holds: the prediction reads at most 1.72x the exact d_eff where it has been measured
#: (:func:`predicted_effective_dimension`), and the dictionaries hold 2.3x d_eff centres or more.
PREDICTION_MARGIN = 2.0


def check_kernel(kernel, X=None):
    """``kernel`` if it is a scikit-learn-style kernel object (callable with a ``diag`` method), else
    a ``TypeError`` naming the kernel objects accepted (a string such as ``'rbf'`` included). With
    X, a Matérn or RBF kernel's values on X must fit float64
    (:meth:`~spectral_leverage.kernels.StationaryKernel.check_inputs`) and its amplitude be > 0
    (:func:`~spectral_leverage.kernels.parse_kernel`); any other kernel is used as is, once its
    diagonal :math:`k(x, x)` on X is finite and >= 0 (a negative ``ConstantKernel`` amplitude, say,
    is refused by name)."""
    if not (callable(kernel) and callable(getattr(kernel, "diag", None))):
        raise TypeError(
            "kernel must be a scikit-learn kernel object, e.g. Matern(length_scale=1.0, nu=1.5) or "
            "RBF(1.0) from sklearn.gaussian_process.kernels (any object with kernel(X, Y) and "
            f"kernel.diag(X)), got {kernel!r}."
        )
    if X is not None:
        try:
            spec = parse_kernel(kernel)
        except TypeError:
            diag = np.asarray(kernel.diag(X), dtype=float)
            if not np.all(np.isfinite(diag)):
                raise ValueError(f"kernel {kernel!r} has a non-finite k(x, x) on X: standardise X, or "
                                 "give the kernel finite parameters.") from None
            if not np.all(diag >= 0):
                raise ValueError(
                    f"kernel {kernel!r} has k(x, x) = {np.min(diag):.3g} on X, but a kernel's diagonal is "
                    "finite and >= 0: give ConstantKernel an amplitude > 0.") from None
            _check_pointwise(kernel, X[:8], diag[:8])
            return kernel
        spec.check_inputs(X)
    return kernel


def indefinite_dictionary_error(kernel, what: str) -> np.linalg.LinAlgError:
    """The error for a dictionary matrix that Cholesky cannot factor: a Matérn or RBF kernel's
    (:func:`~spectral_leverage.kernels.indefinite_kernel_error`: scikit-learn's ``Matern`` at a
    general ν), or one naming any other kernel, which the dictionary samplers accept but which may
    not be positive definite on X (``ExpSineSquared`` of more than one feature is not)."""
    try:
        parse_kernel(kernel)
    except (TypeError, ValueError):
        return np.linalg.LinAlgError(
            f"{what}: the matrix is not positive semi-definite, so kernel {kernel!r} is not positive "
            "definite on X (ExpSineSquared of several features is not): use a positive definite "
            "kernel such as Matern or RBF."
        )
    return indefinite_kernel_error(what)


def _check_pointwise(kernel, rows: np.ndarray, diag: np.ndarray) -> None:
    """``ValueError`` for a kernel whose value between two copies of a row is not its diagonal:
    scikit-learn's ``WhiteKernel`` (alone or in a sum) adds noise to the diagonal of the training
    matrix only, ``kernel(X, Y)`` is 0 for it, and every cross-kernel the samplers evaluate would
    miss it (scores of 1e-297 against an exact effective dimension of 333)."""
    cross = np.diag(np.asarray(kernel(rows, rows.copy()), dtype=float))
    if not np.allclose(cross, diag, rtol=1e-9, atol=0.0):
        raise ValueError(
            f"kernel {kernel!r} gives k(x, x') = {cross[0]:.3g} between two copies of a row but "
            f"k(x, x) = {diag[0]:.3g} on the diagonal, as WhiteKernel does: it is noise on the training "
            "matrix, not a kernel between points. Drop WhiteKernel and give the noise as reg "
            "(K + n reg I).")


def check_scoring(scoring) -> str:
    """``scoring`` if it is one of :data:`SCORINGS`, else ValueError naming it."""
    if not isinstance(scoring, str) or scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {SCORINGS}, got {scoring!r}.")
    return scoring


def plan_blocks(n: int, m: int, memory_budget: float) -> list[slice]:
    """Row blocks of an n×m pass next to the m×m factors, within ``memory_budget`` bytes.

    Raises
    ------
    ValueError
        If the factors of m centres and a block of ``min(n, MIN_BLOCK_ROWS)`` rows exceed
        ``memory_budget``; the message gives the budget that would do and the other fixes.
    """
    factors = FACTOR_BYTES_PER_ENTRY * m * m
    row = BLOCK_BYTES_PER_ENTRY * max(m, 1)
    need = factors + row * min(n, MIN_BLOCK_ROWS)
    if need > memory_budget:
        raise ValueError(
            f"the dictionary holds m={m} centres: its m×m factors and row blocks need "
            f"{need / 2**20:.1f} MiB, more than memory_budget={memory_budget:.0f} bytes "
            f"({memory_budget / 2**20:.1f} MiB). Raise memory_budget to at least {int(np.ceil(need))}, "
            "or raise reg (the dictionary grows with the effective dimension, up to every point when "
            "reg is tiny), or use method='spectral'."
        )
    return list(row_chunks(n, row, memory_budget - factors))


def most_centres(n: int, memory_budget: float) -> int:
    """The most centres whose factors and a block of ``min(n, MIN_BLOCK_ROWS)`` rows fit
    ``memory_budget`` (:func:`plan_blocks`'s test, solved for m).

    Examples
    --------
    >>> most_centres(20_000, 2**30)
    7756
    """
    a, b = FACTOR_BYTES_PER_ENTRY, BLOCK_BYTES_PER_ENTRY * min(n, MIN_BLOCK_ROWS)
    return int((np.sqrt(b * b + 4.0 * a * memory_budget) - b) / (2.0 * a))


def predicted_effective_dimension(X: np.ndarray, kernel, reg: float, memory_budget: float) -> float | None:
    r"""The density formula's effective dimension of the n rows of X, or None for a kernel it does
    not cover (not Matérn or RBF, or Matérn :math:`\nu <` :data:`~spectral_leverage.kernels.MIN_NU`).

    :class:`~spectral_leverage.spectral.SpectralLeverage` (``algorithm="density"``) is fitted on at
    most :data:`PREDICTION_ROWS` evenly spaced rows and scored for all n
    (:meth:`~spectral_leverage.spectral.SpectralLeverage.score_samples` with ``n_rows``): a second
    or less. Against exact eigenvalues (n = 4000, d = 3 and 8, normal and bimodal designs, Matérn
    ½-5/2 and RBF × ℓ ∈ {0.5, 1, 2} × λ ∈ {1e-2, ..., 1e-6, 1e-8}) it reads at most 1.72× the exact
    d_eff (most where the kernel's windows hold few rows), and as little as 0.07× (RBF at long
    length scales in 8-D): an over-estimate could refuse a fit that would run, an under-estimate
    only lets :func:`plan_blocks` refuse it later.
    """
    try:
        spec = parse_kernel(kernel)
    except (TypeError, ValueError):
        return None
    if spec.nu < MIN_NU:
        return None
    n = X.shape[0]
    rows = X[:: -(-n // PREDICTION_ROWS)]
    with warnings.catch_warnings():  # the formula's own warnings are about its scores, not d_eff
        warnings.simplefilter("ignore")
        formula = SpectralLeverage(kernel, reg, algorithm="density", memory_budget=memory_budget).fit(rows)
    return float(np.mean(formula.score_samples(rows, n_rows=n)))


def check_dictionary_fits(X: np.ndarray, kernel, reg: float, memory_budget: float, method: str) -> None:
    r"""``ValueError`` before a dictionary is built where it would outgrow ``memory_budget``.

    A dictionary holds :math:`d_\mathrm{eff}(\lambda)` centres or more (2.3-4.5 times as many at
    n = 3000, d = 6, Matérn 3/2: BLESS the fewest, Recursive-RLS the most), and
    :func:`plan_blocks` refuses it only once it has grown past :func:`most_centres`: at a tiny
    ``reg`` that is after minutes of :math:`O(m^3)` steps. The fit is refused upfront where
    :func:`predicted_effective_dimension` passes :data:`PREDICTION_MARGIN` times the centres the
    budget holds (kernels it does not cover are left to :func:`plan_blocks`).
    """
    n = X.shape[0]
    most = most_centres(n, memory_budget)
    if n <= PREDICTION_MARGIN * most:  # d_eff <= n: no prediction could pass the margin
        return
    d_eff = predicted_effective_dimension(X, kernel, reg, memory_budget)
    if d_eff is not None and d_eff > PREDICTION_MARGIN * most:
        raise ValueError(
            f"{method} at reg={reg:g} on {n} rows: the density formula predicts an effective dimension "
            f"of about {d_eff:.0f}, so its dictionary would hold that many centres or more, over "
            f"{PREDICTION_MARGIN:g} x the {most} that memory_budget={memory_budget:.0f} bytes holds. "
            "Raise reg, raise memory_budget (the dictionary's m x m factors need 16 m^2 bytes), or "
            "use method='spectral'."
        )


def _kernel_matrix(kernel, centres: np.ndarray, blocks_of: float) -> np.ndarray:
    """``kernel(centres)``, Fortran-ordered for LAPACK to overwrite, filled by row blocks."""
    m = centres.shape[0]
    K = np.empty((m, m), order="F")
    for rows in row_chunks(m, BLOCK_BYTES_PER_ENTRY * m, blocks_of):
        K[rows] = kernel(centres[rows], centres)
    return K


def weighted_rls(
    X, kernel, centres, probs, gamma: float, *, diag=None, memory_budget: float = DEFAULT_MEMORY_BUDGET
) -> np.ndarray:
    r"""Weighted-dictionary ridge leverage estimates :math:`\tilde l_i` of every row of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Points to score.
    kernel : sklearn kernel
    centres : ndarray of shape (m, d)
        The dictionary's points.
    probs : ndarray of shape (m,)
        Inclusion probabilities :math:`p_j \in (0, 1]` (importance weights :math:`1/p_j`).
    gamma : float
        Un-normalised regulariser :math:`\gamma = n\lambda > 0`.
    diag : ndarray of shape (n,), optional
        ``kernel.diag(X)`` if already known.
    memory_budget : float, default=1 GiB
        Bytes for the factor and the row blocks (see :func:`plan_blocks`).

    Returns
    -------
    ndarray of shape (n,), estimates of :math:`l_i = [K(K + \gamma I)^{-1}]_{ii}` (values in [0, 1]).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> X = np.random.default_rng(0).uniform(size=(50, 1))
    >>> K = RBF(0.2)(X)
    >>> exact = np.diag(K @ np.linalg.inv(K + 0.1 * np.eye(50)))
    >>> bool(np.allclose(weighted_rls(X, RBF(0.2), X, np.ones(50), 0.1), exact))
    True
    """
    X = np.asarray(X, dtype=float)
    centres = np.asarray(centres, dtype=float)
    scale = 1.0 / np.sqrt(np.asarray(probs, dtype=float))
    blocks = plan_blocks(X.shape[0], centres.shape[0], memory_budget)
    diag = kernel.diag(X) if diag is None else np.asarray(diag, dtype=float)
    M = _kernel_matrix(kernel, centres, memory_budget - FACTOR_BYTES_PER_ENTRY * centres.shape[0] ** 2)
    M *= scale[:, None]
    M *= scale[None, :]
    M[np.diag_indices_from(M)] += gamma
    try:
        chol = cholesky(M, lower=True, overwrite_a=True)
    except np.linalg.LinAlgError:
        raise indefinite_dictionary_error(kernel, "Cholesky factorisation of the dictionary's kernel "
                                          f"matrix plus its ridge {gamma:.3g} failed") from None
    out = np.empty(X.shape[0])
    for rows in blocks:
        Z = solve_triangular(
            chol, (kernel(centres, X[rows]) * scale[:, None]), lower=True, check_finite=False
        )
        out[rows] = (diag[rows] - np.einsum("ij,ij->j", Z, Z)) / gamma
    # Rounding can push a tiny estimate below 0; keep every point samplable.
    floor = 1e-12 * diag / (diag + gamma)
    return np.clip(out, floor, 1.0)


def nystrom_leverage(X, kernel, centres, gamma: float, *,
                     memory_budget: float = DEFAULT_MEMORY_BUDGET) -> np.ndarray:
    r"""Ridge leverage of the Nyström approximation :math:`K_{nJ}K_{JJ}^{+}K_{Jn}`, for every row of X.

    Eigenvalues of :math:`K_{JJ}` below ``m · eps · max`` are dropped (pseudo-inverse). The
    eigenvectors come from LAPACK ``syevr`` (workspace O(m), where ``syevd`` needs :math:`2m^2`;
    where it fails, as it can on clustered eigenvalues, from ``syev``'s QR iteration), and
    ``memory_budget`` bounds the factors and row blocks as in :func:`plan_blocks`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> X = np.random.default_rng(0).uniform(size=(40, 1))
    >>> K = Matern(0.3, nu=1.5)(X)
    >>> exact = np.diag(K @ np.linalg.inv(K + 0.1 * np.eye(40)))
    >>> bool(np.allclose(nystrom_leverage(X, Matern(0.3, nu=1.5), X, 0.1), exact, atol=1e-6))
    True
    """
    X = np.asarray(X, dtype=float)
    centres = np.asarray(centres, dtype=float)
    m = centres.shape[0]
    blocks = plan_blocks(X.shape[0], m, memory_budget)
    blocks_of = memory_budget - FACTOR_BYTES_PER_ENTRY * m * m
    driver = "evr"
    try:
        s, U = eigh(_kernel_matrix(kernel, centres, blocks_of), overwrite_a=True, driver=driver,
                    check_finite=False)
    except np.linalg.LinAlgError:  # syevr's "Internal Error" (clustered eigenvalues): QR iteration,
        driver = "ev"              # outside the handler, whose traceback holds the first matrix
    if driver == "ev":
        s, U = eigh(_kernel_matrix(kernel, centres, blocks_of), overwrite_a=True, driver=driver,
                    check_finite=False)
    first = int(np.searchsorted(s, s[-1] * m * np.finfo(float).eps, side="right"))  # s ascends
    R = U[:, first:]  # a view: K_JJ^{+1/2}, shape (m, k), scaled in place
    R /= np.sqrt(s[first:])
    k = R.shape[1]
    G = np.zeros((k, k), order="F")
    for rows in blocks:
        B = kernel(X[rows], centres) @ R
        G += B.T @ B
    G[np.diag_indices_from(G)] += gamma
    chol = cholesky(G, lower=True, overwrite_a=True)
    out = np.empty(X.shape[0])
    for rows in blocks:
        Z = solve_triangular(chol, (kernel(X[rows], centres) @ R).T, lower=True, check_finite=False)
        out[rows] = np.einsum("ij,ij->j", Z, Z)
    return np.clip(out, 1e-12 * out.max(initial=0.0) + 1e-300, 1.0)


def dictionary_scores(
    X, kernel, centres, probs, gamma: float, scoring: str = "nystrom", *, diag=None,
    memory_budget: float = DEFAULT_MEMORY_BUDGET,
) -> np.ndarray:
    r"""Leverage estimates of every row of ``X`` from a weighted dictionary, by either estimator.

    ``"nystrom"`` (:func:`nystrom_leverage`) is the leverage of the dictionary's Nyström
    approximation: it ignores the importance weights (a projection does not depend on them), so it
    has much less variance than ``"weighted"`` (:func:`weighted_rls`, the literature's estimator),
    at the price of a downward bias where the dictionary is thin (:math:`\tilde K \preceq K`);
    ``"weighted"`` is biased upward instead. Both are exact when the dictionary holds every point
    with probability 1. The downward bias grows when the dictionary holds only a few centres per
    effective dimension and the spectrum decays slowly.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> X = np.random.default_rng(0).uniform(size=(30, 2))
    >>> a = dictionary_scores(X, RBF(0.5), X, np.ones(30), 0.1, "nystrom")
    >>> b = dictionary_scores(X, RBF(0.5), X, np.ones(30), 0.1, "weighted")
    >>> bool(np.allclose(a, b, atol=1e-6))
    True
    """
    if check_scoring(scoring) == "nystrom":
        return nystrom_leverage(X, kernel, centres, gamma, memory_budget=memory_budget)
    return weighted_rls(X, kernel, centres, probs, gamma, diag=diag, memory_budget=memory_budget)

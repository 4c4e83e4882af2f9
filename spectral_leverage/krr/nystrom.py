r"""Nyström kernel ridge regression with centres chosen by ridge leverage scores.

Conventions (those of the whole package): data :math:`x_1..x_n \in R^d`, targets
:math:`y \in R^n` (or :math:`R^{n \times t}`), kernel :math:`k`, regulariser :math:`\lambda`
(``reg``). Exact kernel ridge regression (KRR) is

.. math::

    \hat f = \arg\min_f \frac1n \sum_i (y_i - f(x_i))^2 + \lambda \|f\|_H^2,
    \qquad \hat y = K (K + n\lambda I)^{-1} y

(scikit-learn's ``KernelRidge`` uses ``alpha`` :math:`= n\lambda`). Nyström KRR restricts
:math:`f = \sum_{j \in J} \alpha_j k(\cdot, x_j)` to a set :math:`J` of :math:`m` centres drawn with
probabilities proportional to (approximate) ridge leverage scores, and solves the normal equations

.. math::

    (K_{nJ}^\top K_{nJ} + n\lambda K_{JJ})\,\alpha = K_{nJ}^\top y .

Solvers
-------
Both solvers factor :math:`K_{JJ} + \epsilon I = T^\top T` (upper Cholesky factor :math:`T`, small
jitter :math:`\epsilon`) and never hold the :math:`n \times m` matrix :math:`K_{nJ}` for large n: it is
streamed in row blocks sized by ``memory_budget``, so the peak memory is
:math:`O(m^2 + \text{block} \cdot m)`.

* ``"direct"``: with :math:`\beta = T\alpha` the system becomes the well-conditioned SPD system
  :math:`(T^{-\top} K_{nJ}^\top K_{nJ} T^{-1} + n\lambda I)\,\beta = T^{-\top} K_{nJ}^\top y`.
  Its matrix is accumulated block by block as :math:`\sum_b B_b^\top B_b` with
  :math:`B_b = K_{bJ} T^{-1}` (one triangular solve per block; forming :math:`K_{nJ}^\top K_{nJ}`
  first and transforming afterwards would square its condition number), then solved by Cholesky;
  :math:`\alpha = T^{-1}\beta`. Cost :math:`O(n m^2)` time.
* ``"cg"``: conjugate gradient on the same system with the FALKON preconditioner (Rudi, Carratino &
  Rosasco, NeurIPS 2017): :math:`A^\top A = T T^\top / m + \lambda I`, :math:`\alpha = T^{-1}A^{-1}\beta`,
  solving :math:`A^{-\top}(\tfrac1n T^{-\top} K_{nJ}^\top K_{nJ} T^{-1} + \lambda I)A^{-1}\beta
  = \tfrac1n A^{-\top} T^{-\top} K_{nJ}^\top y`. Each iteration streams :math:`K_{nJ}` once
  (:math:`O(nm)` time, cached when it fits in ``memory_budget``); for large m.
"""

from __future__ import annotations

import logging
import time
import warnings

import numpy as np
from scipy.linalg import cho_factor, cho_solve, cholesky, solve_triangular, svd
from scipy.linalg.blas import dsyrk
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    RegressorMixin,
    TransformerMixin,
    clone,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from .._blocks import DEFAULT_MEMORY_BUDGET, KERNEL_BYTES_PER_ENTRY, kernel_block, kernel_product, row_chunks
from .._validation import check_data, check_positive, check_random_state, check_samples, is_dask_collection
from ..kernels import parse_kernel
from ..samplers import make_sampler

__all__ = ["LeverageNystroem", "NystromKRR", "sample_centers"]

logger = logging.getLogger(__name__)

DIRECT_MAX_CENTERS = 5000  # solver="auto" uses the direct solver up to this many centres
_JITTER = 1e-10  # relative to the mean diagonal of K_JJ; raised tenfold while Cholesky fails
_CG_TOL = 1e-10  # relative residual of the preconditioned system
_CG_MAX_ITER = 500


# --------------------------------------------------------------------------------------------
# centre selection
# --------------------------------------------------------------------------------------------


def _draw_centers(X: np.ndarray, n_centers: int, sampler, *, kernel, reg: float, rng,
                  name: str = "n_centers") -> np.ndarray:
    """Unique sorted indices of leverage-sampled centres (all rows when n_centers >= n)."""
    n = X.shape[0]
    if n_centers >= n:
        if n_centers > n:
            warnings.warn(
                f"{name}={n_centers} is larger than the number of samples n={n}: using n, i.e. "
                "every point as a centre.",
                UserWarning,
                stacklevel=3,
            )
        return np.arange(n)
    seed = int(rng.integers(2**31 - 1))
    obj = make_sampler(sampler, kernel=kernel, reg=reg, random_state=seed)
    probabilities = getattr(obj, "probabilities_", None)
    fitted = (
        probabilities is not None
        and np.shape(probabilities) == (n,)
        and getattr(obj, "n_features_in_", X.shape[1]) == X.shape[1]
    )
    if not fitted:
        if not isinstance(sampler, str):
            obj = clone(obj)
        obj.fit(X)
    indices = np.asarray(obj.sample(n_centers, replace=True, random_state=rng), dtype=np.intp)
    return np.unique(indices)


def sample_centers(X, n_centers: int, *, kernel, reg: float, method="spectral",
                   random_state=None) -> np.ndarray:
    r"""Nyström centres drawn by ridge leverage sampling: unique, sorted row indices of X.

    ``n_centers`` indices are drawn with replacement, with probabilities proportional to the
    rescaled ridge leverage scores :math:`n\,l_i`, :math:`l_i = [K(K + n\lambda I)^{-1}]_{ii}`
    (``reg`` :math:`= \lambda`), and de-duplicated, so fewer than ``n_centers`` may come back.
    ``n_centers > n`` warns and returns every index.

    Parameters
    ----------
    X : array_like of shape (n, d)
        Finite inputs, n >= 2.
    n_centers : int
        Number of draws, >= 1.
    kernel : sklearn kernel
        ``Matern`` or ``RBF``, optionally times ``ConstantKernel``.
    reg : float
        :math:`\lambda > 0`.
    method : str or LeverageSampler, default="spectral"
        A name from :data:`spectral_leverage.SAMPLERS` or a sampler object (cloned and fitted on X
        unless already fitted on n points).
    random_state : int, numpy Generator or None

    Returns
    -------
    ndarray of int
        Unique indices in increasing order.

    Notes
    -----
    The indices can seed the fixed-centre (inducing point) selection of other libraries, e.g.
    ``X[idx]`` as the initial inducing points of a GPyTorch ``InducingPointKernel`` or
    ``VariationalStrategy(model, inducing_points=torch.as_tensor(X[idx]), ...)``, or as the centres
    of a Falkon model via its fixed selector
    (``falkon.center_selection.FixedSelector(centers=torch.as_tensor(X[idx]))``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> X = np.random.default_rng(0).uniform(size=(2000, 2))
    >>> idx = sample_centers(X, 50, kernel=Matern(0.5, nu=1.5), reg=1e-3, random_state=0)
    >>> bool(np.all(np.diff(idx) > 0)) and len(idx) <= 50
    True
    """
    X = check_data(X)
    n_centers = check_samples(n_centers, "n_centers")
    reg = check_positive(reg, "reg")
    parse_kernel(kernel).check_n_features(X.shape[1])
    return _draw_centers(X, n_centers, method, kernel=kernel, reg=reg,
                         rng=check_random_state(random_state))


# --------------------------------------------------------------------------------------------
# numerical kernels
# --------------------------------------------------------------------------------------------


def _upper_cholesky(K: np.ndarray) -> tuple[np.ndarray, float]:
    """Upper T with TᵀT = K + εI, the jitter ε raised tenfold until the factorisation succeeds."""
    scale = float(np.mean(np.diag(K))) or 1.0
    jitter = _JITTER * scale
    for _ in range(8):
        try:
            A = K.copy()
            A[np.diag_indices_from(A)] += jitter
            return cholesky(A, lower=False, overwrite_a=True, check_finite=False), jitter
        except np.linalg.LinAlgError:
            jitter *= 10.0
    raise np.linalg.LinAlgError(
        "Cholesky factorisation of the centres' kernel matrix failed even with jitter "
        f"{jitter:.1e}; check the kernel and the data."
    )


def _normal_equations(kernel, X: np.ndarray, Y: np.ndarray, centers: np.ndarray, T: np.ndarray,
                      chunks) -> tuple[np.ndarray, np.ndarray]:
    """(H, c) = (Σ_b B_bᵀ B_b, Σ_b B_bᵀ y_b) with B_b = K_bJ T⁻¹ over the row blocks ``chunks`` of X;
    H holds the upper triangle only. Sums of (H, c) over row sets add up (distributed fits)."""
    m = centers.shape[0]
    H = np.zeros((m, m), order="F")
    c = np.zeros((m, Y.shape[1]))
    for rows in chunks:
        # Bᵀ = T⁻ᵀ K_bJᵀ, shape (m, b): H += Bᵀ B, c += Bᵀ y_b
        Bt = solve_triangular(T, kernel_block(kernel, X[rows], centers).T, trans="T", lower=False,
                              check_finite=False)
        H = dsyrk(1.0, Bt, beta=1.0, c=H, trans=0, lower=0, overwrite_c=1)
        c += Bt @ Y[rows]
    return H, c


def _solve_normal_equations(H: np.ndarray, c: np.ndarray, T: np.ndarray, n_reg: float) -> np.ndarray:
    """α = T⁻¹ (H + nλ I)⁻¹ c, from the upper triangle of H (overwritten)."""
    H[np.diag_indices(H.shape[0])] += n_reg  # dsyrk filled the upper triangle, all cho_factor reads
    beta = cho_solve(cho_factor(H, lower=False, overwrite_a=True, check_finite=False), c,
                     check_finite=False)
    return solve_triangular(T, beta, lower=False, check_finite=False)


def _chunks(n_rows: int, m: int, extra_per_row: float, memory_budget: float) -> list[slice]:
    return list(row_chunks(n_rows, KERNEL_BYTES_PER_ENTRY * m + extra_per_row, memory_budget))


# --------------------------------------------------------------------------------------------
# the regressor
# --------------------------------------------------------------------------------------------


class NystromKRR(RegressorMixin, BaseEstimator):
    r"""Nyström kernel ridge regression with leverage-sampled centres.

    Minimises :math:`\frac1n\|y - K_{nJ}\alpha\|^2 + \lambda\,\alpha^\top K_{JJ}\alpha` over the
    coefficients :math:`\alpha` of :math:`m` centres :math:`J`, i.e. solves
    :math:`(K_{nJ}^\top K_{nJ} + n\lambda K_{JJ})\alpha = K_{nJ}^\top y`; with every point as a
    centre this is exact KRR, :math:`\hat y = K(K + n\lambda I)^{-1}y`. The centres are drawn with
    replacement with probabilities proportional to ridge leverage scores and de-duplicated
    (see :mod:`spectral_leverage.krr.nystrom` for the solvers).

    Parameters
    ----------
    kernel : sklearn kernel
        ``Matern`` or ``RBF``, optionally times ``ConstantKernel``.
    reg : float
        :math:`\lambda > 0` (scikit-learn's ``KernelRidge(alpha=n * reg)`` is the exact analogue).
    n_centers : int
        Number of leverage-sampled draws (>= 1); duplicates are dropped, so ``len(center_indices_)``
        may be smaller. More than n warns and uses every point.
    sampler : str or LeverageSampler, default="spectral"
        A name from :data:`spectral_leverage.SAMPLERS` (``"spectral"``, ``"uniform"``,
        ``"exact"``, ...) or a sampler object: cloned and fitted on X, unless it is already fitted
        on n points, in which case its ``probabilities_`` are used as they are.
    solver : {"auto", "direct", "cg"}, default="auto"
        ``"direct"``: Cholesky, :math:`O(nm^2 + m^3)`. ``"cg"``: FALKON-preconditioned conjugate
        gradient, :math:`O(nm)` per iteration. ``"auto"``: direct for m <= 5000, else cg.
    memory_budget : int, default=256 MiB
        Bytes for the row blocks of :math:`K_{nJ}` (the :math:`m \times m` matrices come on top).
    random_state : int, numpy Generator or None
        Seeds the centre sampling.
    verbose : bool, default=False
        Progress bars over row blocks and stage timings logged (``logging``, INFO) to this module's
        logger.

    Attributes
    ----------
    center_indices_ : ndarray of int, shape (m,)
        Unique, sorted rows of the training X used as centres.
    centers_ : ndarray of shape (m, d)
    coef_ : ndarray of shape (m,) or (m, t)
        :math:`\alpha`; ``predict(X) = kernel(X, centers_) @ coef_``.
    solver_ : str
        The solver used.
    n_iter_ : int
        Conjugate-gradient iterations (0 for the direct solver).
    n_features_in_ : int

    Notes
    -----
    ``fit`` and ``predict`` also take Dask arrays (:mod:`spectral_leverage.distributed`; direct
    solver, spectral sampler): the centres and coefficients are NumPy arrays, equal to an
    in-memory fit with the same sampler and seed; ``predict`` returns a lazy Dask array.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(2000, 2))
    >>> y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=2000)
    >>> model = NystromKRR(Matern(0.5, nu=1.5), reg=1e-4, n_centers=100, random_state=0).fit(X, y)
    >>> model.coef_.shape == (len(model.center_indices_),)
    True
    >>> bool(model.score(X, y) > 0.9)
    True
    """

    def __init__(self, kernel, reg: float, n_centers: int, *, sampler="spectral",
                 solver: str = "auto", memory_budget: int = DEFAULT_MEMORY_BUDGET,
                 random_state=None, verbose: bool = False):
        self.kernel = kernel
        self.reg = reg
        self.n_centers = n_centers
        self.sampler = sampler
        self.solver = solver
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        tags.input_tags.allow_nan = False
        return tags

    def fit(self, X, y) -> NystromKRR:
        """Draw the centres and solve the Nyström normal equations.

        Parameters
        ----------
        X : array_like of shape (n, d)
            Finite inputs, n >= 2.
        y : array_like of shape (n,) or (n, t)
            Finite targets.

        Returns
        -------
        self
        """
        if is_dask_collection(X) or is_dask_collection(y):
            from ..distributed import fit_nystrom

            return fit_nystrom(self, X, y)
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=True, y_numeric=True,
                             ensure_min_samples=2)
        n, d = X.shape
        parse_kernel(self.kernel).check_n_features(d)
        reg = check_positive(self.reg, "reg")
        n_centers = check_samples(self.n_centers, "n_centers")
        budget = check_positive(self.memory_budget, "memory_budget")
        if self.solver not in ("auto", "direct", "cg"):
            raise ValueError(f"solver must be 'auto', 'direct' or 'cg', got {self.solver!r}.")
        rng = check_random_state(self.random_state)

        start = time.perf_counter()
        idx = _draw_centers(X, n_centers, self.sampler, kernel=self.kernel, reg=reg, rng=rng)
        centers = X[idx]
        m = idx.shape[0]
        self._log("centre sampling (%s): %d unique centres of %d draws", start,
                  self.sampler if isinstance(self.sampler, str) else type(self.sampler).__name__,
                  m, min(n_centers, n))

        start = time.perf_counter()
        T, jitter = _upper_cholesky(self.kernel(centers))
        self._log("Cholesky of K_JJ (m=%d, jitter %.1e)", start, m, jitter)

        Y = y.reshape(n, -1)
        solver = self.solver
        if solver == "auto":
            solver = "direct" if m <= DIRECT_MAX_CENTERS else "cg"
        chunks = _chunks(n, m, 8.0 * (d + Y.shape[1] + m), budget)
        if solver == "direct":
            coef, n_iter = self._solve_direct(X, Y, centers, T, reg, chunks), 0
        else:
            coef, n_iter = self._solve_cg(X, Y, centers, T, reg, chunks, budget)

        self.center_indices_ = idx
        self.centers_ = centers
        self.coef_ = coef.ravel() if y.ndim == 1 else coef
        self.solver_ = solver
        self.n_iter_ = n_iter
        return self

    def _log(self, message: str, start: float, *args) -> None:
        if self.verbose:
            logger.info("NystromKRR: " + message + " in %.3fs", *args, time.perf_counter() - start)

    def _solve_direct(self, X, Y, centers, T, reg, chunks) -> np.ndarray:
        start = time.perf_counter()
        H, c = _normal_equations(self.kernel, X, Y, centers, T,
                                 tqdm(chunks, disable=not self.verbose, desc="NystromKRR fit", unit="block"))
        self._log("accumulating T⁻ᵀK_nJᵀK_nJT⁻¹ over %d row blocks", start, len(chunks))
        start = time.perf_counter()
        coef = _solve_normal_equations(H, c, T, X.shape[0] * reg)
        self._log("direct solve", start)
        return coef

    def _solve_cg(self, X, Y, centers, T, reg, chunks, budget) -> tuple[np.ndarray, int]:
        n, m = X.shape[0], centers.shape[0]
        start = time.perf_counter()
        # FALKON preconditioner: AᵀA = T Tᵀ / m + λ I
        A = cholesky(T @ T.T / m + reg * np.eye(m), lower=False, check_finite=False)
        cache = [] if n * m * 8.0 <= budget else None

        def blocks():
            if cache is not None and len(cache) == len(chunks):
                yield from zip(chunks, cache, strict=True)
                return
            for rows in chunks:
                K = kernel_block(self.kernel, X[rows], centers)
                if cache is not None:
                    cache.append(K)
                yield rows, K

        def apply_A_T(V):  # T⁻¹ A⁻¹ V
            return solve_triangular(T, solve_triangular(A, V, check_finite=False),
                                    check_finite=False)

        def apply_At_Tt(V):  # A⁻ᵀ T⁻ᵀ V
            return solve_triangular(A, solve_triangular(T, V, trans="T", check_finite=False),
                                    trans="T", check_finite=False)

        rhs = np.zeros((m, Y.shape[1]))
        for rows, K in blocks():
            rhs += K.T @ Y[rows]
        rhs = apply_At_Tt(rhs) / n

        def matvec(B):
            V = solve_triangular(A, B, check_finite=False)
            U = solve_triangular(T, V, check_finite=False)
            W = np.zeros_like(U)
            for _rows, K in blocks():
                W += K.T @ (K @ U)
            W = solve_triangular(T, W, trans="T", check_finite=False) / n + reg * V
            return solve_triangular(A, W, trans="T", check_finite=False)

        beta = np.zeros_like(rhs)
        r = rhs.copy()
        p = r.copy()
        rs = np.einsum("ij,ij->j", r, r)
        target = (_CG_TOL**2) * np.maximum(np.einsum("ij,ij->j", rhs, rhs), np.finfo(float).tiny)
        n_iter = 0
        progress = tqdm(total=_CG_MAX_ITER, disable=not self.verbose, desc="NystromKRR cg",
                        unit="iter")
        while n_iter < _CG_MAX_ITER and np.any(rs > target):
            active = rs > target
            Ap = matvec(p)
            pAp = np.einsum("ij,ij->j", p, Ap)
            step = np.where(active, rs / np.where(pAp > 0, pAp, 1.0), 0.0)
            beta += step * p
            r -= step * Ap
            rs_new = np.einsum("ij,ij->j", r, r)
            p = r + np.where(active, rs_new / np.where(rs > 0, rs, 1.0), 0.0) * p
            rs = rs_new
            n_iter += 1
            progress.update(1)
        progress.close()
        if np.any(rs > target):
            warnings.warn(
                f"NystromKRR: conjugate gradient did not reach relative residual {_CG_TOL:g} in "
                f"{_CG_MAX_ITER} iterations (reached {np.sqrt(np.max(rs / target)) * _CG_TOL:.1e}).",
                ConvergenceWarning,
                stacklevel=3,
            )
        coef = apply_A_T(beta)
        self._log("preconditioned conjugate gradient, %d iterations", start, n_iter)
        return coef, n_iter

    def predict(self, X) -> np.ndarray:
        """Predictions :math:`K(X, \\text{centers\\_})\\,\\alpha`, computed in row blocks.

        Parameters
        ----------
        X : array_like of shape (n_new, d)

        Returns
        -------
        ndarray of shape (n_new,) or (n_new, t)
        """
        check_is_fitted(self, "coef_")
        if is_dask_collection(X):
            from ..distributed import predict_nystrom

            return predict_nystrom(self, X)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        start = time.perf_counter()
        out = kernel_product(self.kernel, X, self.centers_, self.coef_,
                             memory_budget=check_positive(self.memory_budget, "memory_budget"),
                             verbose=self.verbose, desc="NystromKRR predict")
        self._log("predict (%d rows)", start, X.shape[0])
        return out


# --------------------------------------------------------------------------------------------
# the transformer
# --------------------------------------------------------------------------------------------


class LeverageNystroem(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Nyström feature map with components chosen by ridge leverage sampling.

    Like :class:`sklearn.kernel_approximation.Nystroem`, but the components are drawn with
    replacement with probabilities proportional to ridge leverage scores :math:`n\,l_i`,
    :math:`l_i = [K(K + n\lambda I)^{-1}]_{ii}` (``reg`` :math:`= \lambda`), and de-duplicated.
    With :math:`K_{JJ} = U S V^\top` (singular values clipped below at 1e-12),
    ``normalization_`` :math:`= U S^{-1/2} V^\top` and
    ``transform(X)`` :math:`= K(X, \text{components\_})\,\text{normalization\_}^\top`, so that
    inner products of the features approximate the kernel. A linear ``Ridge`` on these features is
    Nyström KRR.

    Parameters
    ----------
    kernel : sklearn kernel
        ``Matern`` or ``RBF``, optionally times ``ConstantKernel``.
    reg : float
        :math:`\lambda > 0` of the leverage scores.
    n_components : int
        Number of draws (>= 1); more than n warns and uses every point.
    sampler : str or LeverageSampler, default="spectral"
        As in :class:`NystromKRR`.
    random_state : int, numpy Generator or None

    Attributes
    ----------
    components_ : ndarray of shape (m, d)
    component_indices_ : ndarray of int, shape (m,)
        Unique, sorted training rows.
    normalization_ : ndarray of shape (m, m)
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.pipeline import make_pipeline
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(1000, 2))
    >>> y = np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=1000)
    >>> pipe = make_pipeline(LeverageNystroem(RBF(0.5), reg=1e-4, n_components=50, random_state=0),
    ...                      Ridge(alpha=1e-3)).fit(X, y)
    >>> bool(pipe.score(X, y) > 0.9)
    True
    """

    def __init__(self, kernel, reg: float, n_components: int, *, sampler="spectral",
                 random_state=None):
        self.kernel = kernel
        self.reg = reg
        self.n_components = n_components
        self.sampler = sampler
        self.random_state = random_state

    def fit(self, X, y=None) -> LeverageNystroem:
        """Sample the components and compute the normalisation.

        Parameters
        ----------
        X : array_like of shape (n, d)
            Finite inputs, n >= 2.
        y : ignored

        Returns
        -------
        self
        """
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        parse_kernel(self.kernel).check_n_features(X.shape[1])
        reg = check_positive(self.reg, "reg")
        n_components = check_samples(self.n_components, "n_components")
        idx = _draw_centers(X, n_components, self.sampler, kernel=self.kernel, reg=reg,
                            rng=check_random_state(self.random_state), name="n_components")
        components = X[idx]
        U, S, Vt = svd(self.kernel(components), check_finite=False)
        S = np.maximum(S, 1e-12)
        self.normalization_ = (U / np.sqrt(S)) @ Vt
        self.components_ = components
        self.component_indices_ = idx
        self._n_features_out = idx.shape[0]
        return self

    def transform(self, X) -> np.ndarray:
        """Feature map :math:`K(X, \\text{components\\_})\\,\\text{normalization\\_}^\\top`.

        Parameters
        ----------
        X : array_like of shape (n_new, d)

        Returns
        -------
        ndarray of shape (n_new, m)
        """
        check_is_fitted(self, "normalization_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return kernel_product(self.kernel, X, self.components_, self.normalization_.T,
                              memory_budget=DEFAULT_MEMORY_BUDGET)


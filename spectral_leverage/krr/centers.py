"""Nyström centres drawn by ridge leverage sampling, for the package's estimators and for others."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import _check_sample_weight

from .._blocks import DEFAULT_MEMORY_BUDGET
from .._validation import check_data, check_positive, check_random_state, check_samples
from ..backends import backend_for
from ..kernels import parse_kernel
from ..samplers import SAMPLERS, CenterSelector, make_sampler
from ..spectral import SpectralLeverage

__all__ = ["AUTO_CENTERS_FACTOR", "CAPPED_UNIFORM_SHARE", "auto_centers", "center_budget", "draw_centers",
           "positive_rows", "regressor_sampler", "sample_centers", "select_centers"]

#: ``n_centers="auto"``: m = AUTO_CENTERS_FACTOR · d_eff(λ) (docs/notes/krr-cv.md)
AUTO_CENTERS_FACTOR = 2.0
#: ``n_centers="auto"`` capped by the budget: the uniform share of the draws' probabilities
CAPPED_UNIFORM_SHARE = 0.5
_MIN_AUTO_CENTERS = 20


def positive_rows(X: np.ndarray, sample_weight) -> tuple[np.ndarray, np.ndarray]:
    """(indices of the rows of positive weight, their weights) for in-memory X: zero weights are
    dropped rows, so a fit never sees them (not in the centres' density either). ``ValueError``
    for negative, non-finite or mis-shaped weights and for fewer than two positive ones."""
    weights = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
    if not np.all(np.isfinite(weights)):
        raise ValueError("sample_weight must be finite; drop the rows or give them weight 0.")
    rows = np.flatnonzero(weights > 0)
    if rows.size < 2:
        raise ValueError(
            f"sample_weight has {rows.size} non-zero weight(s): at least two rows need a positive "
            "weight (a zero weight drops its row)."
        )
    return rows, weights[rows]


def regressor_sampler(sampler, in_memory: bool):
    """The regressors' ``sampler="auto"``: ``"adaptive-cholesky"`` (which reads y) for in-memory X,
    ``"spectral"`` on Dask, where only the spectral sampler runs where the data are; any other
    value as given. In memory the target-aware choice wins on error at a cost judged on the whole
    fit (issue 36; docs/notes/centres.md)."""
    if isinstance(sampler, str) and sampler == "auto":
        return "adaptive-cholesky" if in_memory else "spectral"
    return sampler


def center_budget(memory_budget: float) -> int:
    """Most centres whose :math:`m \\times m` matrices (the kernel of the centres, its Cholesky
    factor, the normal equations and their factor: four float64 arrays) fit in ``memory_budget``."""
    return max(1, int(np.sqrt(memory_budget / 32.0)))


def _is_spectral(sampler) -> bool:
    return sampler == "spectral" if isinstance(sampler, str) else isinstance(sampler, SpectralLeverage)


def _spectral_at(X, sampler, kernel, reg: float, seed: int, memory_budget: float) -> SpectralLeverage:
    obj = clone(sampler).set_params(reg=reg) if isinstance(sampler, SpectralLeverage) else \
        SpectralLeverage(kernel, reg, random_state=seed, memory_budget=memory_budget)
    return obj.fit(X)


def auto_centers(X, sampler, *, kernel, reg: float, memory_budget: float, rng,
                 name: str = "n_centers") -> tuple[int, object, float]:
    r"""``n_centers="auto"``: (m, the sampler to draw with, the share of uniform probability to mix in).

    :math:`m = \lceil c\, d_\mathrm{eff}(\lambda) \rceil` with :math:`c` =
    :data:`AUTO_CENTERS_FACTOR` and :math:`d_\mathrm{eff}` the spectral (SA) estimate, at least 20
    and at most n (every row: exact KRR) and :func:`center_budget`. When the budget binds (a
    warning says so) the m draws are made with probabilities :math:`(1-s)\,p_i + s/n`, :math:`s` =
    :data:`CAPPED_UNIFORM_SHARE` (a defensive mixture): with fewer centres than directions,
    i.i.d. leverage draws can leave a dense region without a centre, and the mixture gives every
    region at least half of its uniform share of draws (measurements: docs/notes/krr-cv.md)."""
    n = X.shape[0]
    fitted = _spectral_at(X, sampler, kernel, reg, int(rng.integers(2**31 - 1)), memory_budget)
    target = AUTO_CENTERS_FACTOR * fitted.effective_dimension_
    cap = center_budget(memory_budget)
    chosen = fitted if _is_spectral(sampler) else sampler
    if min(target, n) <= cap:  # every row, when 2 d_eff >= n: exact KRR
        return min(n, max(int(np.ceil(target)), _MIN_AUTO_CENTERS)), chosen, 0.0
    warnings.warn(
        f"{name}='auto': {AUTO_CENTERS_FACTOR:g} x d_eff = {target:.0f} centres exceed the "
        f"{cap} that memory_budget allows; using {cap}, drawn by leverage mixed half and half with "
        "uniform probabilities. Raise memory_budget for more centres.",
        UserWarning, stacklevel=3)
    return cap, chosen, CAPPED_UNIFORM_SHARE


def _draws(X, n_centers, sampler, *, kernel, reg: float, memory_budget: float,
           rng) -> tuple[int, object, float, bool]:
    """(m, the sampler, the uniform share, draw with replacement?) for :func:`draw_centers`: an int
    ``n_centers`` is that many draws with replacement (de-duplicated); ``"auto"`` is
    :func:`auto_centers`' m as m distinct rows in memory (at m near n, i.i.d. draws repeat: 3387
    draws gave 2675 distinct rows on CCPP, and the lost centres cost 0.8 % of test RMSE, see
    docs/notes/krr-cv.md), as m draws on Dask, which draws with replacement only."""
    if n_centers != "auto":
        return n_centers, sampler, 0.0, True
    m, sampler, share = auto_centers(X, sampler, kernel=kernel, reg=reg, memory_budget=memory_budget,
                                     rng=rng)
    return m, sampler, share, not backend_for(X).in_memory


def select_centers(X, n_centers, sampler, *, kernel, reg: float, memory_budget: float, rng,
                   sample_weight: np.ndarray | None = None, y: np.ndarray | None = None,
                   fit_intercept: bool = True):
    """(centres (m, d), their unique sorted row indices or None, number of draws): for ``"auto"``
    m from :func:`auto_centers`, then a selector's m centres
    (:class:`~spectral_leverage.samplers.CenterSelector`; points with None for the indices when
    they are not rows, as k-means'), or :func:`draw_centers`' draws. With ``sample_weight``
    k-means weights the rows (and ``"adaptive-cholesky"`` its GCV errors and its k-means); the
    other selectors choose among the rows of positive weight whatever their weight. A selector
    that reads the target (``"adaptive-cholesky"``) is fitted on X and ``y``, with the
    estimator's ``fit_intercept`` when built by name."""
    n_centers, sampler, share, replace = _draws(X, n_centers, sampler, kernel=kernel, reg=reg,
                                                memory_budget=memory_budget, rng=rng)
    if n_centers < X.shape[0] and _is_selector(sampler):
        backend_for(X).require_in_memory(f"sampler={sampler!r}",
                                         "use sampler='spectral' or a SpectralLeverage")
        obj = _fitted_sampler(X, sampler, kernel, reg, rng, memory_budget, y=y,
                              fit_intercept=fit_intercept)
        centers, idx = obj.select(n_centers, random_state=rng, sample_weight=sample_weight)
        return centers, idx, n_centers
    idx = draw_centers(X, n_centers, sampler, kernel=kernel, reg=reg, rng=rng, replace=replace,
                       sample_weight=sample_weight, memory_budget=memory_budget, uniform_share=share,
                       y=y, fit_intercept=fit_intercept)
    (centers,) = backend_for(X).compute(X[idx])
    return centers, idx, min(n_centers, X.shape[0])


def _is_selector(sampler) -> bool:
    cls = SAMPLERS.get(sampler) if isinstance(sampler, str) else type(sampler)
    return cls is not None and issubclass(cls, CenterSelector)


def _fitted_sampler(X, sampler, kernel, reg, rng, memory_budget=DEFAULT_MEMORY_BUDGET, y=None,
                    fit_intercept: bool = True):
    """The sampler built by name (seeded from rng) or given, fitted on X unless it already is; one
    that reads the target is fitted on X and ``y`` whenever ``y`` is given (a clone, if given; built
    by name, with ``fit_intercept``)."""
    seed = int(rng.integers(2**31 - 1))
    obj = make_sampler(sampler, kernel=kernel, reg=reg, random_state=seed,
                       memory_budget=memory_budget)
    if y is not None and getattr(obj, "_uses_target", False):
        if isinstance(sampler, str):
            return obj.set_params(fit_intercept=fit_intercept).fit(X, y)
        return clone(obj).fit(X, y)
    probabilities = getattr(obj, "probabilities_", None)
    fitted = (
        probabilities is not None
        and np.shape(probabilities) == (X.shape[0],)
        and getattr(obj, "n_features_in_", X.shape[1]) == X.shape[1]
    )
    if not fitted:
        if not isinstance(sampler, str):
            obj = clone(obj)
        obj.fit(X)
    return obj


def draw_centers(X, n_centers: int, sampler, *, kernel, reg: float, rng, name: str = "n_centers",
                 sample_weight: np.ndarray | None = None, replace: bool = True,
                 memory_budget: float = DEFAULT_MEMORY_BUDGET, uniform_share: float = 0.0,
                 y: np.ndarray | None = None, fit_intercept: bool = True) -> np.ndarray:
    r"""Unique sorted indices of leverage-sampled centres of the validated X (NumPy or Dask; all
    rows when n_centers >= n): ``n_centers`` draws, de-duplicated, or with ``replace=False``
    exactly ``n_centers`` distinct rows (each draw among the rows not yet drawn, in proportion to
    their probabilities: the law of drawing with replacement until ``n_centers`` distinct rows have
    come up); a selector's (:class:`~spectral_leverage.samplers.CenterSelector`) ``n_centers``
    distinct rows, whatever ``replace`` and ``sample_weight``. On Dask only the spectral sampler runs
    where the data are.

    With positive ``sample_weight`` (in memory) row i is drawn with probability proportional to
    :math:`w_i s_i`, :math:`s_i` the sampler's score: a row of integer weight :math:`w_i` stands
    for :math:`w_i` repeated rows, each of which has the leverage :math:`s_i` (to the extent that
    repeating rows leaves the sampler's density estimate alone; exact for the uniform sampler).
    With ``uniform_share`` :math:`u > 0` the score :math:`s_i` becomes
    :math:`(1-u)\,s_i + u\,\bar s` (:math:`\bar s` the mean score): the probabilities are
    :math:`(1-u)\,p_i + u/n`. A sampler given by name bounds its temporaries by ``memory_budget``
    bytes. A selector that reads the target (``"adaptive-cholesky"``) is fitted on X and ``y`` when
    ``y`` is given (its GCV with ``fit_intercept``)."""
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
    if not (sampler == "spectral" if isinstance(sampler, str) else isinstance(sampler, SpectralLeverage)):
        backend_for(X).require_in_memory(f"sampler={sampler!r}",
                                         "use sampler='spectral' or a SpectralLeverage")
    obj = _fitted_sampler(X, sampler, kernel, reg, rng, memory_budget, y=y, fit_intercept=fit_intercept)
    if isinstance(obj, CenterSelector) or (sample_weight is None and not uniform_share):
        return np.unique(np.asarray(obj.sample(n_centers, replace=replace, random_state=rng),
                                    dtype=np.intp))
    scores = obj.scores_
    if uniform_share:
        scores = (1.0 - uniform_share) * scores + uniform_share * obj.effective_dimension_
    if sample_weight is not None:
        scores = scores * sample_weight
    backend = backend_for(X)
    if not replace:
        backend.require_in_memory("replace=False with weights or a uniform share", "draw with replacement")
        weighted = np.asarray(scores, dtype=float)
        n_positive = int(np.count_nonzero(weighted > 0))
        if n_centers > n_positive:
            raise ValueError(f"{name}={n_centers} distinct rows asked for, but only {n_positive} have a "
                             "positive weight and score: ask for fewer.")
        indices = rng.choice(n, size=n_centers, replace=False, p=weighted / weighted.sum())
    else:
        scores, _, state = backend.summarise_scores(scores)
        indices = backend.draw(scores, state, rng.random(n_centers))
    return np.unique(np.asarray(indices, dtype=np.intp))


def sample_centers(X, n_centers: int, *, kernel, reg: float, method="spectral",
                   replace: bool = True, random_state=None) -> np.ndarray:
    r"""Nyström centres drawn by ridge leverage sampling: unique, sorted row indices of X.

    ``n_centers`` indices are drawn with probabilities proportional to the rescaled ridge leverage
    scores :math:`n\,l_i`, :math:`l_i = [K(K + n\lambda I)^{-1}]_{ii}` (``reg`` :math:`= \lambda`):
    with replacement (the i.i.d. scheme of the Nyström theory) and de-duplicated, which warns when
    fewer than ``n_centers`` distinct indices come back, or without replacement, which returns
    exactly ``n_centers``. ``n_centers > n`` warns and returns every index.

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
    replace : bool, default=True
        Draw with replacement (repeats of high-leverage rows are dropped, and a warning says how
        many distinct indices remain) or without (exactly ``n_centers`` distinct indices).
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
    parse_kernel(kernel).check_inputs(X)
    if not isinstance(replace, (bool, np.bool_)):
        raise TypeError(f"replace must be True or False, got {replace!r}.")
    indices = draw_centers(X, n_centers, method, kernel=kernel, reg=reg,
                           rng=check_random_state(random_state), replace=bool(replace))
    if indices.size < min(n_centers, X.shape[0]):
        warnings.warn(
            f"{n_centers} draws with replacement gave {indices.size} distinct indices (high-leverage "
            "rows drawn more than once); pass replace=False for exactly n_centers distinct indices.",
            UserWarning, stacklevel=2)
    return indices

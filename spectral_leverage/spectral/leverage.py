r"""Spectral-analysis (SA) ridge leverage scores in near-linear time (Chen & Yang, AISTATS 2021).

For a stationary kernel the rescaled ridge leverage score of a point depends, to first order, only
on the input density there:

.. math::

    n\,l_i \approx h(p(x_i)), \qquad h(p) = \int \frac{d\xi}{p + \lambda / s(\xi)},

with :math:`l_i = [K(K + n\lambda I)^{-1}]_{ii}`, :math:`s` the kernel's spectral density
(:mod:`spectral_leverage.kernels`) and :math:`p` the density of the inputs
(:mod:`spectral_leverage.density`); the integral is :mod:`spectral_leverage.spectral.quadrature`.
The approximation is weakest where the density changes fast on the kernel's scale; near faces of
the support the scores are corrected by a half-space model (:mod:`spectral_leverage.spectral.boundary`),
and every score is capped at the exact bound :math:`n\,l_i \le n\,k(0)/(k(0) + n\lambda)` of an
isolated point.
"""

from __future__ import annotations

import logging
import time
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.utils._param_validation import Hidden, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._blocks import DEFAULT_MEMORY_BUDGET, progress, use_n_jobs
from .._validation import (
    DEFAULT_REG,
    KERNEL,
    MEMORY_BUDGET,
    N_JOBS,
    POSITIVE,
    POSITIVE_INT,
    RANDOM_STATE,
    NumericInterval,
    check_random_state,
    check_samples,
    renamed,
    validate_params,
    warn_constant_features,
)
from ..backends import backend_for
from ..backends._neighbours import SEARCHES
from ..base import LeverageSampler
from ..density import KNNDensity, _anchor_draw
from ..kernels import check_spectral_nu, parse_kernel, resolve_kernel
from ._ambient import capped_scores, check_spread, choose_dimension, given_density
from ._density_step import MAX_SAMPLES, DensityStep
from .full_scale import full_scale_scores
from .plan import full_scale_plan, pivots_for
from .quadrature import INTEGRALS, check_integral, sa_scores, score_function

__all__ = ["SpectralLeverage"]

logger = logging.getLogger(__name__)

#: stages of the fit's progress bar: column statistics, density, integral, scores (density or full-scale)
_STAGES = 4


def _stage(bar, done: str) -> None:
    """One more stage of ``bar`` done, named after it."""
    bar.set_postfix_str(done, refresh=False)
    bar.update(1)


class SpectralLeverage(DensityStep, LeverageSampler):
    r"""Approximate ridge leverage scores from the input density (Chen & Yang, 2021), refined where
    the density formula is out of its regime.

    The density scores are :math:`h(\hat p(x_i))` (module docstring), with :math:`\hat p` a
    density estimate in the kernel's unit-length coordinates, capped at the isolated point's bound:
    a binned KDE (low d), a tree KDE at ``max_samples`` anchors, or a k-NN density in an estimated
    intrinsic dimension, then a few hundred univariate integrals; :math:`O(n \log n)` time and
    :math:`O(n)` memory. Where their effective dimension is small or their mean leverage large,
    ``algorithm="auto"`` replaces them by the full-scale leverage
    (:mod:`spectral_leverage.spectral.full_scale`).

    Parameters
    ----------
    kernel : sklearn kernel or None, default=None
        ``Matern(length_scale, nu)`` or ``RBF(length_scale)``, optionally times ``ConstantKernel``;
        anisotropic length scales are supported. None is ``Matern(length_scale=1.0, nu=1.5)``.
    reg : float, default=1e-3
        :math:`\lambda > 0`; the scores approximate :math:`n\,[K(K + n\lambda I)^{-1}]_{ii}`.
    bandwidth : {"scott", "silverman"} or float, default="scott"
        Bandwidth of the kernel density estimate: a rule on standardised data, or a float in X's
        units.
    algorithm : {"auto", "density", "full-scale"}, default="auto"
        "density": the scores :math:`h(\hat p(x_i))` alone (the paper's method, the fastest).
        "full-scale": :mod:`spectral_leverage.spectral.full_scale` (a pivoted factor, then the SA
        integral above its frequencies or conditioning on the nearest rows), accurate at both ends
        of the spectrum; between them it is no better than the density formula. "auto": the density
        scores, replaced by the full-scale ones out of their regime (:func:`~.plan.full_scale_plan`),
        on Dask input as in memory.
    integral : {"quadrature", "asymptotic", "polylog"}, default="quadrature"
        How to evaluate :math:`h(p)` (:mod:`spectral_leverage.spectral.quadrature`; "polylog" is the
        Gaussian kernel's closed form).
    intrinsic_dim : "auto", float or None, default="auto"
        Dimension :math:`d'` of the density's volume term and of the polar integral. None: the
        ambient d with a Gaussian KDE (the paper's method). A float in [1, d]: that :math:`d'`
        with a k-NN density. "auto": estimate :math:`d'` and the neighbourhoods' flatness
        (:func:`~spectral_leverage.density.intrinsic_dimension`, in the kernel's coordinates);
        below 90 % of d and flat, the data lie near a lower-dimensional set and the k-NN density
        in :math:`d'` is used, otherwise the ambient KDE (``_ambient.choose_dimension``).
    density : None, array_like of shape (n,) or callable, default=None
        A known input density instead of the estimate: the densities at the training points, or a
        callable ``density(X) -> (n,)`` (needed for :meth:`score_samples`), with respect to
        Lebesgue measure in X's units. In-memory data only.
    kde : {"auto", "binned", "tree"}, default="auto"
        Gaussian KDE of the ambient path: :class:`~spectral_leverage.density.BinnedDensity` or
        :class:`~spectral_leverage.density.TreeDensity`; "auto" bins when the grid fits in
        ``memory_budget`` and in
        :data:`~spectral_leverage.spectral._density_step.AUTO_GRID_BYTES` (typically d <= 3):
        the grids the binned path was validated and timed with; larger ones, in 4-D, go to the
        tree.
    boundary : bool, default=True
        Correct the scores near faces of the support by a half-space model read off the KDE's
        slope (:mod:`spectral_leverage.spectral.boundary`), on both ambient KDEs.
    n_neighbors : int, default=50
        Neighbours of the k-NN density (intrinsic path).
    neighbor_search : {"auto", "exact", "approximate"}, default="auto"
        How the full-scale leverage's near field finds each row's nearest rows: "exact" a k-d tree
        (pykdtree); "approximate" faiss's inverted lists (the optional extra
        ``spectral-leverage[ann]``; the search 5x faster for 10^6 rows in 8-D, recall 0.99, the lists'
        centres drawn by ``random_state``); "auto" the latter where faiss is installed and the tree
        is slower, from 25 000 rows in an (intrinsic) dimension of 8 and 150 000 in 7
        (:func:`~spectral_leverage.backends._neighbours.approximate_from`). Dask input: exact.
    max_samples : "auto", int or None, default="auto"
        Size of the anchor subsample of the tree KDE and the k-NN density (and of the intrinsic-
        dimension estimate and the full-scale leverage's pivots); None uses every point (the tree
        KDE then costs :math:`O(n^2)`). "auto": 16384, of which the tree KDE takes
        :data:`~._density_step.HIGH_DIM_KDE_ANCHORS` (4096) in :data:`~._density_step.KDE_ANCHORS_DIM`
        (8) or more dimensions, where more anchors buy little accuracy for their cost.
    memory_budget : int, default=1 GiB
        Bytes of temporaries: the binned KDE's grid (``kde="auto"`` bins only grids within
        min(budget, 256 MiB)), the full-scale factor and its matrices, and the row blocks (each at
        most min(budget, 64 MiB)).
    random_state : int, numpy Generator or None, default=None
        Seeds the anchor subsample and, by default, :meth:`sample`.
    verbose : bool, default=False
        Progress bars on stderr (tqdm): one over the fit's stages, and those of the density
        estimate's and the full-scale leverage's row blocks, whatever the logging configuration.
        Per-stage timings are logged at INFO level in any case.
    n_jobs : int or None, default=None
        Threads of the fit, with joblib's meaning (as in :class:`~spectral_leverage.density.TreeDensity`).
    max_tree_size : int or None
        Deprecated alias of ``max_samples`` (a ``FutureWarning``; removed in 0.3).

    Attributes
    ----------
    scores_, leverage_, probabilities_, effective_dimension_
        See :class:`~spectral_leverage.base.LeverageSampler`.
    density_ : ndarray of shape (n,)
        Input density at the training points (of the non-constant features; with respect to
        :math:`d'`-dimensional volume on the intrinsic path).
    intrinsic_dim_ : float
        The dimension :math:`d'` used.
    algorithm_ : {"density", "full-scale"}
        The scores' algorithm (what "auto" chose).
    neighbor_search_ : {"exact", "approximate"} or None
        How the full-scale leverage found each row's nearest rows (what ``neighbor_search="auto"``
        chose: the scores depend on it, and on whether faiss is installed); None where no row was
        conditioned on its neighbours (the density scores, or the tail integral).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string column names.

    Notes
    -----
    Constant features do not change the kernel matrix and are dropped; if all are, the exact
    scores :math:`n\,l_i = k(0)/(k(0) + \lambda)` are returned.

    ``fit`` runs the same lines on a Dask array or DataFrame (:mod:`spectral_leverage.backends`);
    the results are then Dask arrays with X's row chunks (the full-scale scores persisted), equal to
    the in-memory fit's with the same ``random_state`` (where the in-memory fit takes approximate
    neighbours, ``neighbor_search``, to a few per cent; Dask's are exact). Not on Dask input: ``density``,
    ``max_samples=None``, ``sample(replace=False)``, :meth:`score_samples`.
    :meth:`score_samples` evaluates the density formula at new points, whatever ``algorithm_``.

    References
    ----------
    Y. Chen and Y. Yang. Fast statistical leverage score approximation in kernel ridge regression.
    AISTATS 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> X = np.random.default_rng(0).uniform(size=(4000, 1))
    >>> sl = SpectralLeverage(Matern(length_scale=0.5, nu=1.5), reg=4000 ** -0.75).fit(X)
    >>> sl.scores_.shape, sl.probabilities_.sum().round(12)
    ((4000,), np.float64(1.0))
    >>> centres = sl.sample(100, random_state=0)
    """

    _parameter_constraints: ClassVar[dict] = {
        "kernel": KERNEL,
        "reg": POSITIVE,
        "algorithm": [StrOptions({"auto", "density", "full-scale"})],
        "bandwidth": [StrOptions({"scott", "silverman"}), NumericInterval(Real, 0, None, closed="neither")],
        "integral": [StrOptions(set(INTEGRALS))],
        "intrinsic_dim": [StrOptions({"auto"}), NumericInterval(Real, 1, None, closed="left"), None],
        "density": [NumericInterval(Real, 0, None, closed="neither"), "array-like", callable, None],
        "kde": [StrOptions({"auto", "binned", "tree"})],
        "boundary": ["boolean"],
        "n_neighbors": POSITIVE_INT,
        "neighbor_search": [StrOptions(set(SEARCHES))],
        "max_samples": [StrOptions({"auto"}), NumericInterval(Integral, 1, None, closed="left"), None],
        "max_tree_size": [NumericInterval(Integral, 1, None, closed="left"), None,
                          Hidden(StrOptions({"deprecated"}))],
        "memory_budget": MEMORY_BUDGET,
        "random_state": RANDOM_STATE,
        "verbose": ["boolean"],
        "n_jobs": N_JOBS,
    }

    def __init__(self, kernel=None, reg: float = DEFAULT_REG, *, algorithm: str = "auto", bandwidth="scott",
                 integral: str = "quadrature", intrinsic_dim="auto", density=None, kde: str = "auto",
                 boundary: bool = True, n_neighbors: int = 50, neighbor_search: str = "auto",
                 max_samples: int | str | None = "auto", memory_budget: int = DEFAULT_MEMORY_BUDGET,
                 random_state=None, verbose: bool = False, max_tree_size="deprecated", n_jobs=None):
        self.kernel = kernel
        self.reg = reg
        self.algorithm = algorithm
        self.bandwidth = bandwidth
        self.integral = integral
        self.intrinsic_dim = intrinsic_dim
        self.density = density
        self.kde = kde
        self.boundary = boundary
        self.n_neighbors = n_neighbors
        self.neighbor_search = neighbor_search
        self.max_samples = max_samples
        self.max_tree_size = max_tree_size
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    @use_n_jobs
    def fit(self, X, y=None) -> SpectralLeverage:
        """Estimate the input density at each row of X and turn it into leverage scores.

        Parameters
        ----------
        X : array_like, Dask array or Dask DataFrame of shape (n, d), n >= 2, finite
        y : ignored

        Returns
        -------
        self
        """
        validate_params(self)
        # a bar over the fit's stages (stderr), whatever the logging configuration
        with progress(total=_STAGES, verbose=self.verbose, desc="SpectralLeverage", unit="stage") as bar:
            return self._fit(X, bar)

    def _fit(self, X, bar) -> SpectralLeverage:
        backend = backend_for(X)
        X = backend.validate(self, X)
        n, d = X.shape
        spec, reg = self._setup(d)
        if self.density is not None:
            backend.require_in_memory("density", "the density is estimated from the data; a known "
                                      "density can be passed for in-memory data")
        chosen = renamed(self, "max_tree_size", "max_samples", removed_in="0.3")
        self._auto_samples = isinstance(chosen, str)  # "auto"
        self._max_samples = MAX_SAMPLES if self._auto_samples else chosen
        if self._max_samples is None:
            backend.require_in_memory("max_samples=None", "it evaluates the KDE at every point; "
                                      "give an int (default 16384)")
        self._model = self._ambient = None
        start = time.perf_counter()
        # the anchors (the rows of the tree KDE, the k-NN density and d'), in the statistics' pass
        anchors, keys = _anchor_draw(n, self._max_samples, self.random_state)
        low, high, std, rows = backend.summarise(X, anchors)
        _stage(bar, "column statistics")
        if not self._set_active(high - low):
            logger.info("all features are constant: every point is the same")
            self.intrinsic_dim_, self.algorithm_, self.neighbor_search_ = 0.0, "density", None
            self.density_ = backend.full(X, np.inf)
            self._set_scores(backend.full(X, spec.amplitude / (spec.amplitude + reg)))
            bar.update(bar.total - bar.n)
            return self
        active = self._active
        warn_constant_features(std)
        check_spread(std[active], self._length)
        # the geometry the kernel sees, needed to estimate d' and by the k-NN density
        Z = self._unit(rows) if self.density is None and self.intrinsic_dim is not None else None
        self.intrinsic_dim_, on_manifold = choose_dimension(self.intrinsic_dim, Z, int(active.sum()),
                                                            self.density is not None, self._max_samples,
                                                            self.random_state)
        p_unit, p_score = self._density(backend, X, Z, rows, keys, on_manifold, low, high, std)
        t_density = time.perf_counter() - start
        _stage(bar, "density")
        self.density_ = p_unit / self._mean_length**self.intrinsic_dim_
        p_low, p_high = (float(v) for v in backend.compute(p_score.min(), p_score.max()))
        h = score_function(p_low, p_high, n, spec.unit, reg, self.intrinsic_dim_, self.integral)
        scores = backend.map_rows(capped_scores, p_score, backend.share(h), self._score_cap(n))
        plan, effective_dimension = self._plan(backend, n, scores)
        self.algorithm_ = "density" if plan is None else "full-scale"
        self.neighbor_search_ = None
        _stage(bar, "integral")
        if plan is not None:
            scores, self.algorithm_, self.neighbor_search_ = full_scale_scores(
                X, resolve_kernel(self.kernel), spec, reg, scores, p_score, self.intrinsic_dim_,
                effective_dimension=effective_dimension, plan=plan, forced=self.algorithm == "full-scale",
                max_samples=self._max_samples, memory_budget=self.memory_budget,
                rng=check_random_state(self.random_state), neighbor_search=self.neighbor_search,
                verbose=self.verbose)
        self._set_scores(scores)
        _stage(bar, self.algorithm_)
        logger.info("SpectralLeverage: density %.3fs, integral %.3fs (n=%d, d=%d, d'=%.2f)",
                    t_density, time.perf_counter() - start - t_density, n, d, self.intrinsic_dim_)
        return self

    def _plan(self, backend, n: int, scores) -> tuple[tuple[int, int] | None, float | None]:
        """((pivots, neighbours) of the full-scale leverage, or None for the density scores; the
        density ``scores``' effective dimension it is made from, None where not needed), made once
        here (:func:`~.plan.full_scale_plan`): per ``algorithm``; a forced full-scale fit inside
        the density formula's regime takes the tail integral's plan."""
        if self.algorithm == "density":
            return None, None
        (total,) = backend.compute(scores.sum())
        effective_dimension = float(total) / n
        plan = full_scale_plan(effective_dimension, n, self.intrinsic_dim_)
        if plan is None and self.algorithm == "full-scale":
            plan = (pivots_for(n), 0)
        return plan, effective_dimension

    def _setup(self, d: int) -> tuple:
        """(parsed kernel, reg), checking what the constraints cannot: the kernel (a Matérn ν of at
        least :data:`~spectral_leverage.kernels.MIN_NU`), the integral."""
        spec = parse_kernel(resolve_kernel(self.kernel))
        check_spectral_nu(spec, "spectral scores", "the scores fall short of exact ones by a factor that "
                          "grows as nu falls (measured: 0.51-0.87 of the exact effective dimension at "
                          "nu = 0.01, 0.87-0.98 at 0.03)",
                          ", or an algebraic method (leverage_scores(..., method='bless'))")
        spec.check_n_features(d)
        check_integral(self.integral, spec)
        self._spec, self._reg = spec, float(self.reg)
        return spec, self._reg

    def _set_active(self, ptp: np.ndarray) -> bool:
        """Keep the features of positive range ``ptp`` and their length scales; False if none."""
        self._active = ptp > 0
        if not self._active.any():
            return False
        length = np.broadcast_to(self._spec.length_scale, (ptp.shape[0],))[self._active]
        self._length, self._mean_length = length, float(np.exp(np.mean(np.log(length))))
        return True

    def _unit(self, X: np.ndarray) -> np.ndarray:
        """Active features divided by their length scales: the geometry the kernel sees."""
        return X[:, self._active] / self._length

    def score_samples(self, X, *, n_rows: int | None = None) -> np.ndarray:
        r"""Rescaled scores :math:`h(p(x))` at the rows of X, shape (m, d): an (m,) array on the
        scale of ``scores_`` (in-memory X only).

        ``n_rows`` (default: the fitted rows' count) is the n the scores are for: :math:`h` depends
        on n only through the isolated-point cap :math:`n k(0)/(k(0) + n\lambda)`, so a fit on a
        subsample predicts the scores of n rows drawn like it (and their mean, the effective
        dimension)."""
        check_is_fitted(self, "scores_")
        backend = backend_for(X)
        backend.require_in_memory("score_samples", "compute the new points into memory first")
        X = backend.validate(self, X, reset=False, min_samples=1)
        n = self.scores_.shape[0] if n_rows is None else check_samples(n_rows, "n_rows")
        if not self._active.any():
            return np.full(X.shape[0], self.scores_[0])
        if isinstance(self._model, KNNDensity):
            p_unit = self._model.density(self._unit(X))
        elif self._model is not None:
            p_unit = self._ambient(X[:, self._active])[1]
        elif callable(self.density):
            p_unit = given_density(self.density, X) * self._mean_length**self.intrinsic_dim_
        else:
            raise ValueError(
                "score_samples needs the density at new points: fit with density=None (KDE) or "
                "with a callable density, not an array."
            )
        return self._scores_from_density(p_unit, n)

    def _scores_from_density(self, p_unit: np.ndarray, n: int) -> np.ndarray:
        """h(p) in unit-length-scale coordinates and dimension d', capped at the isolated-point bound."""
        spec, reg = self._spec, self._reg
        scores = sa_scores(p_unit, spec.unit, reg, self.intrinsic_dim_, self.integral)
        return np.minimum(scores, self._score_cap(n))

    def _score_cap(self, n: int) -> float:
        """The exact upper bound of a rescaled ridge leverage score, n k(0) / (k(0) + n λ)."""
        return n * self._spec.amplitude / (self._spec.amplitude + n * self._reg)


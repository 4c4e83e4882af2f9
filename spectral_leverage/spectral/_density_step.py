"""The density step of :class:`~spectral_leverage.spectral.leverage.SpectralLeverage`: p at every row.

Three routes, chosen in its ``fit``:
a density the user gives; the k-NN density in the intrinsic dimension d' on a manifold
(:class:`~spectral_leverage.density.KNNDensity`); else the ambient KDE, binned in low dimension
(:class:`~spectral_leverage.density.BinnedDensity`) or a tree KDE at anchors
(:class:`~spectral_leverage.density.TreeDensity`), boundary-corrected
(:class:`~spectral_leverage.spectral._ambient.AmbientDensity`). Each route maps the rows in blocks
through the backend, so NumPy and Dask run the same lines.
"""

from __future__ import annotations

import numpy as np

from .._keys import smallest_keys
from ..density import (
    BinnedDensity,
    KNNDensity,
    TreeDensity,
    _anchor_keys,
    robust_range,
    robust_scale,
)
from ._ambient import (
    AmbientDensity,
    ambient_block,
    bin_block,
    far_block,
    given_density,
    knn_density_block,
    knn_radius_block,
)
from .plan import LOW_RANK

__all__ = ["AUTO_GRID_BYTES", "HIGH_DIM_KDE_ANCHORS", "KDE_ANCHORS_DIM", "MAX_SAMPLES", "PROBE_ROWS",
           "DensityStep"]

#: ``kde="auto"`` bins only grids of at most this many bytes (three float64 copies, 256 MiB)
AUTO_GRID_BYTES = 2**28
#: The anchor subsample of ``max_samples="auto"`` (the density's, d''s and the pivots')
MAX_SAMPLES = 2**14
#: From this many (active) dimensions the tree KDE of ``max_samples="auto"`` takes
#: :data:`HIGH_DIM_KDE_ANCHORS` of the anchors at the low-rank end (:meth:`DensityStep._tree_density`).
#: Its cost is linear in the anchors m, while with Scott's bandwidth the variance of its log-density
#: falls only as :math:`m^{-4/(d+4)}` (m^-1/3 in 8-D). At the low-rank end the density scores are
#: replaced by the full-scale leverage or kept only inside the bounds its pivots set
#: (:func:`~.plan.neighbours_given_pivots`), and a quarter of the anchors changed little: 20 000
#: standard normal rows in 8-D, λ = n^-1/2, 5th/95th percentiles against exact scores with 4096 and
#: 16384 anchors, the default on the same path at all eight settings measured and within 0.014 (RBF,
#: ℓ = 1: 0.938/1.049 and 0.927/1.035). Elsewhere the density scores are the answer and the anchors
#: matter (32 000 such rows, RBF at ℓ = 1, λ = n^-3/4, the density path: 0.83/1.12 with 16384
#: anchors, 0.82/1.17 with 4096, and 0.76/1.21 with 4096 at the narrower bandwidth of 16384). In
#: 16 and 32 dimensions (8000 standard normal rows, the 16 settings of docs/validation.md's "Many
#: dimensions at n = 8000", six of them at the low-rank end) the default read the same to 0.01.
KDE_ANCHORS_DIM = 8
#: ... (a quarter of :data:`MAX_SAMPLES`) ...
HIGH_DIM_KDE_ANCHORS = 2**12
#: ... where the density formula's effective dimension read at this many of the anchors (with the
#: coarser KDE) is at most :data:`~.plan.LOW_RANK`
PROBE_ROWS = 1024


class DensityStep:
    """Mixin of :class:`~spectral_leverage.spectral.leverage.SpectralLeverage`: the density at every
    row, and the fitted density model kept for ``score_samples`` (``_model``, ``_ambient``). It
    reads the estimator's parameters (``density``, ``bandwidth``, ``kde``, ``boundary``,
    ``n_neighbors``, ``memory_budget``, ``random_state``, ``verbose``) and the state its fit set
    before (``_active``, ``_length``, ``_mean_length``, ``_spec``, ``_reg``, ``_max_samples``,
    ``_auto_samples``, ``intrinsic_dim_``), and turns densities into scores by its
    ``_scores_from_density``."""

    def _density(self, backend, X, Z, rows, keys, on_manifold: bool, low, high, std) -> tuple:
        """(p_unit, p_score): the density at every row of X in unit-length-scale coordinates, and
        the one the scores use (boundary-corrected; the same array without the correction). ``Z``
        is the anchors' geometry for the k-NN route, ``rows`` the anchors and ``keys`` their keys
        (:func:`~spectral_leverage.density._anchor_draw`; None where every row is an anchor),
        ``low``/``high``/``std`` the columns' statistics."""
        n = X.shape[0]
        active = self._active
        if self.density is not None:
            p_unit = p_score = given_density(self.density, X) * self._mean_length**self.intrinsic_dim_
        elif on_manifold:
            self._model = self._density_model(True).fit(Z)
            shared = backend.share(self._model)
            found = backend.persist(backend.map_rows(knn_radius_block, X, shared, active, self._length,
                                                     columns=2))
            (floor,) = backend.compute(np.where(found[:, 0] > 0, found[:, 0], np.inf).min())
            p_unit = p_score = backend.map_rows(knn_density_block, found, shared,
                                                float(floor) if np.isfinite(floor) else None)
        else:
            scale = robust_scale(std[active], rows[:, active])  # the anchors' 0.1 % quantiles
            bulk = robust_range(rows[:, active])
            self._model = self._binned_layout(n, scale, low[active], high[active], bulk)
            if self._model is not None:
                if self._model.has_far_rows_:  # one more pass: the rows outside the grid's box
                    far = backend.select_rows(far_block, X, backend.share(self._model), active)
                    self._model.set_far_rows(far[:, active])
                (counts,) = backend.sum_blocks(bin_block, X, args=(backend.share(self._model), active))
                self._model.smooth(counts, n)
            else:
                # C order: the anchors' standard deviations (bandwidths) depend on summation order
                self._model = self._tree_density(np.ascontiguousarray(rows[:, active]), keys, n)
                if self._model.interpolates(n):  # the anchors' densities made once, before shipping
                    self._model._prepare_interpolation()
            self._ambient = self._ambient_for(self._model).prepare()
            shared = backend.share(self._ambient)
            if self._ambient.boundary is None:
                p_unit = p_score = backend.persist(backend.map_rows(ambient_block, X, shared, active, n))
            else:
                both = backend.persist(backend.map_rows(ambient_block, X, shared, active, n, columns=2))
                p_unit, p_score = both[:, 0], both[:, 1]
        return p_unit, p_score

    def _density_model(self, on_manifold: bool):
        """The unfitted density estimator: k-NN in d' on the manifold path, else the tree KDE."""
        if on_manifold:
            return KNNDensity(
                self.intrinsic_dim_, n_neighbors=self.n_neighbors, max_samples=self._max_samples,
                memory_budget=self.memory_budget, random_state=self.random_state, verbose=self.verbose,
            )
        return TreeDensity(self.bandwidth, max_samples=self._max_samples, memory_budget=self.memory_budget,
                           random_state=self.random_state, verbose=self.verbose)

    def _tree_density(self, anchors: np.ndarray, keys: np.ndarray | None, n: int) -> TreeDensity:
        """The tree KDE fitted on the anchors' active features: with ``max_samples="auto"``, in
        :data:`KDE_ANCHORS_DIM` or more of them, on :data:`HIGH_DIM_KDE_ANCHORS` of the anchors
        where the density formula's effective dimension over n rows, read at :data:`PROBE_ROWS` of
        them, puts the fit at the low-rank end (:data:`~.plan.LOW_RANK`); else on all of them.
        Both subsamples are the anchors of smallest ``keys`` (the anchors' own, from
        :func:`~spectral_leverage.density._anchor_draw`; drawn here where every row is an anchor),
        so they are the ones ``max_samples`` of their size would draw, whatever n: taken by position
        among the anchors, one row entering them shifted every position after it and redrew both."""
        m, d = anchors.shape
        if self._auto_samples and d >= KDE_ANCHORS_DIM and m > HIGH_DIM_KDE_ANCHORS:
            keys = _anchor_keys(m, self.random_state) if keys is None else keys
            model = self._density_model(False).fit(anchors[smallest_keys(keys, HIGH_DIM_KDE_ANCHORS)])
            _, p_score = self._ambient_for(model).prepare()(anchors[smallest_keys(keys, PROBE_ROWS)])
            if float(np.mean(self._scores_from_density(p_score, n))) <= LOW_RANK:
                return model
        return self._density_model(False).fit(anchors)

    def _binned_layout(self, n: int, std, low, high, bulk) -> BinnedDensity | None:
        """The binned KDE with its grid laid out for the active features' statistics, or None when
        the tree KDE is to be used (``kde="tree"``, or "auto" and the grid exceeds the budget)."""
        if self.kde == "tree":
            return None
        binned = BinnedDensity(self.bandwidth, memory_budget=self.memory_budget, verbose=self.verbose)
        binned.set_layout(n, std, low, high, bulk)
        if self.kde == "auto" and not binned.fits_budget(min(self.memory_budget, AUTO_GRID_BYTES)):
            return None
        return binned.check_budget()

    def _ambient_for(self, model: BinnedDensity | TreeDensity) -> AmbientDensity:
        """The fitted ambient KDE ``model`` as the scores see it (boundary-corrected by default)."""
        return AmbientDensity(model, self._length,
                              (self._spec.unit, self._reg, self.intrinsic_dim_) if self.boundary else None)


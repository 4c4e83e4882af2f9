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

from ..density import BinnedDensity, KNNDensity, TreeDensity, robust_range, robust_scale
from ._ambient import (
    AmbientDensity,
    ambient_block,
    bin_block,
    far_block,
    given_density,
    knn_density_block,
    knn_radius_block,
)

__all__ = ["AUTO_GRID_BYTES", "DensityStep"]

#: ``kde="auto"`` bins only grids of at most this many bytes (three float64 copies, 256 MiB)
AUTO_GRID_BYTES = 2**28


class DensityStep:
    """Mixin of :class:`~spectral_leverage.spectral.leverage.SpectralLeverage`: the density at every
    row, and the fitted density model kept for ``score_samples`` (``_model``, ``_ambient``). It
    reads the estimator's parameters (``density``, ``bandwidth``, ``kde``, ``boundary``,
    ``n_neighbors``, ``memory_budget``, ``random_state``, ``verbose``) and the state its fit set
    before (``_active``, ``_length``, ``_mean_length``, ``_spec``, ``_reg``, ``_max_samples``,
    ``intrinsic_dim_``)."""

    def _density(self, backend, X, Z, rows, on_manifold: bool, low, high, std) -> tuple:
        """(p_unit, p_score): the density at every row of X in unit-length-scale coordinates, and
        the one the scores use (boundary-corrected; the same array without the correction). ``Z``
        is the anchors' geometry for the k-NN route, ``rows`` the anchors, ``low``/``high``/``std``
        the columns' statistics."""
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
                self._model = self._density_model(False).fit(np.ascontiguousarray(rows[:, active]))
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
        return TreeDensity(
            self.bandwidth, max_samples=self._max_samples,
            memory_budget=self.memory_budget, random_state=self.random_state, verbose=self.verbose,
        )

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


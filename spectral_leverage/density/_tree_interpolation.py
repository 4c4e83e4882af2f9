"""The tree KDE's interpolated route (:class:`~spectral_leverage.density.TreeDensity`, whose module
docstring states the maths): whether a batch is interpolated, the anchors' own values, and the
second-order Nadaraya–Watson interpolation of them.
"""

from __future__ import annotations

import numpy as np
from pykdtree.kdtree import KDTree

from .._blocks import progress, row_chunks
from ._kde_moments import left_out_moments

__all__: list[str] = []


class _Interpolation:
    """Mixin of :class:`~spectral_leverage.density.TreeDensity`: its interpolated route. Reads the
    fitted anchors (``_anchors``, ``n_tree_``, ``_log_norm``, ``_leave_out_log``) and the direct KDE
    (``_direct``)."""

    #: a row within reach interpolated costs this share of a direct row in 4-D at 16384 anchors
    #: (its k-nearest-anchor query and second-order terms) ...
    INTERPOLATION_COST = 0.08
    #: ... times e^(this (d - 4)), and in proportion to 16384 / m (the direct row's m kernel terms):
    #: the k-d tree's query grows fast with d. Fitted to the two routes' CPU times at 10^5 standard
    #: normal rows (2·10^5 in 6-D), 16384 anchors, the slopes included, float32: 0.08, 0.15, 0.38
    #: and 2.2 in 4, 5, 6 and 8-D
    INTERPOLATION_GROWTH = 0.83

    def interpolates(self, n_batch: int) -> bool:
        r"""Whether a batch of ``n_batch`` queries (the rows of the fitted data, say) is
        interpolated rather than evaluated directly: where it costs less. The anchors' own values
        and Hessians cost about two direct rows an anchor; the rows within reach of an anchor (the
        anchors' own share: an anchor's nearest other anchor lies within
        :data:`MAX_INTERPOLATION_DISTANCE`, as a row's nearest anchor does) each save
        :math:`1 - c` of a direct row, :math:`c` = :data:`INTERPOLATION_COST`
        :math:`e^{g (d - 4)}\, 16384 / m` (:data:`INTERPOLATION_GROWTH`). So it interpolates where
        that share times :math:`(n - m)(1 - c)` exceeds :math:`2m`: at 16384 anchors of standard
        normal rows in 4 or 5 dimensions from about 5·10^4 rows (shares 0.94, 0.80; the
        interpolation took 0.60x and 0.75x the direct route's time at 10^5 rows), in 6-D from
        about 1.2·10^5 (0.53: 1.07x at 10^5, 0.87x at 2·10^5), and from 7-D on never (0.08 in 8-D,
        where it took 1.43x at 10^5). Directly is also exact: the interpolation moves the
        log-density by 0.04-0.09 (90th percentile) in 4-6-D."""
        if self.max_samples is None or n_batch <= self.n_tree_:
            return False
        m, d = self._anchors.shape
        cost = self.INTERPOLATION_COST * np.exp(self.INTERPOLATION_GROWTH * (d - 4)) * 2**14 / m
        return bool(cost < 1 and self._reach_share() * (n_batch - m) * (1 - cost) > 2 * m)

    def _reach_share(self) -> float:
        """Share of the anchors whose nearest other anchor lies within
        :data:`MAX_INTERPOLATION_DISTANCE` (made once; builds the anchors' tree)."""
        if self._near_share is None:
            if self._tree is None:
                self._tree = KDTree(self._anchors)
            reach = self.MAX_INTERPOLATION_DISTANCE
            found, _ = self._tree.query(self._anchors, k=min(2, self.n_tree_),
                                        distance_upper_bound=reach * (1 + 1e-9))
            self._near_share = float(np.mean(found.reshape(self.n_tree_, -1)[:, -1] <= reach))
        return self._near_share

    def _prepare_interpolation(self) -> None:
        """Evaluate the anchors' own log-densities, gradients and curvatures and build their
        KD-tree, once (before a fitted model is shipped to workers, say); :meth:`_interpolate`
        calls it on first use."""
        if self._anchor_log_density is None:
            self._anchor_log_density, self._anchor_gradient, self._anchor_curvature, hessian = \
                self._direct(self._anchors, moments=True, hessian=True, leave_out=False)
            d = self._anchors.shape[1]
            upper = np.triu_indices(d)
            self._anchor_hessian = np.empty((self.n_tree_, d, d))
            self._anchor_hessian[:, upper[0], upper[1]] = hessian
            self._anchor_hessian[:, upper[1], upper[0]] = hessian
            if self._tree is None:
                self._tree = KDTree(self._anchors)

    def _interpolate(self, W: np.ndarray, moments: bool = False) -> tuple:
        """Nadaraya–Watson interpolation of the anchors' log-densities, to first order (module
        docstring), and with ``moments`` of their gradients and curvatures (outliers: direct KDE);
        as :meth:`_direct`."""
        self._prepare_interpolation()
        k = min(self.n_interp, self.n_tree_)
        d = W.shape[1]
        out = np.empty(W.shape[0])
        gradient, along = (np.empty(W.shape), np.empty(W.shape[0])) if moments else (None, None)
        bytes_per_row = 40.0 * k + 8 * d + 8.0 * k * (5 * d + 2 + d * d)
        chunks = list(row_chunks(W.shape[0], bytes_per_row, self.memory_budget))
        reach = self.MAX_INTERPOLATION_DISTANCE
        for rows in progress(chunks, verbose=self.verbose, desc="density", unit="chunk"):
            query = np.ascontiguousarray(W[rows])
            # the rows with an anchor within reach first (a query pruned at the reach: in 8-D most
            # rows have none, and take the direct KDE), then the k nearest anchors of those
            first, nearest = self._tree.query(query, k=1, distance_upper_bound=reach * (1 + 1e-9))
            close, nearest = first.ravel() <= reach, nearest.ravel().astype(np.intp)
            # a row on an anchor (bitwise: the same row) reads the anchor's leave-one-out values
            on = np.flatnonzero(close)
            on = on[(query[on] == self._anchors[nearest[on]]).all(axis=1)]
            log_p, slope, bend, kept = self._left_out(nearest[on])
            out[rows.start + on[kept]] = log_p[kept]
            if moments:
                gradient[rows.start + on[kept]], along[rows.start + on[kept]] = slope[kept], bend[kept]
            close[on] = False
            direct = ~close
            direct[on[~kept]] = True  # an anchor all but alone: its few neighbours' terms directly
            near, far = rows.start + np.flatnonzero(close), rows.start + np.flatnonzero(direct)
            if near.size:
                dist, idx = self._tree.query(query[close], k=k)
                dist, idx = dist.reshape(-1, k), idx.reshape(-1, k).astype(np.intp)
                # weights exp(-r²/(2·0.5²)), shifted by the nearest anchor so they never underflow
                weights = np.exp(-2.0 * (dist**2 - dist[:, :1] ** 2))
                weights /= weights.sum(axis=1, keepdims=True)
                offsets = query[close][:, None, :] - self._anchors[idx]
                anchor_gradient = self._anchor_gradient[idx]
                # to second order: log p(a) + (∇ log p(a) + ∇² log p(a) δ / 2)·δ, δ = w - a
                curved = np.einsum("ijkl,ijl->ijk", self._anchor_hessian[idx], offsets)  # ∇² log p(a) δ
                taylor = np.einsum("ijk,ijk->ij", anchor_gradient + 0.5 * curved, offsets)
                taylor += self._anchor_log_density[idx]
                out[near] = np.einsum("ij,ij->i", weights, taylor)
                if moments:  # the gradient to first order: ∇ log p(a) + ∇² log p(a) δ
                    anchor_gradient += curved
                    gradient[near] = np.einsum("ij,ijk->ik", weights, anchor_gradient)
                    along[near] = np.einsum("ij,ij->i", weights, self._anchor_curvature[idx])
            if far.size:
                values = self._direct(W[far], moments)
                out[far] = values[0]
                if moments:
                    gradient[far], along[far] = values[1:]
        return out, gradient, along

    def _left_out(self, idx: np.ndarray) -> tuple:
        """(log-density, whitened gradient, curvature along it, kept) of anchors ``idx`` without
        their own term, from their full values (:func:`~._kde_moments.left_out_moments`)."""
        log_p = self._anchor_log_density[idx]
        change, gradient, along, kept = left_out_moments(
            np.exp(log_p - self._log_norm), self._anchor_gradient[idx], self._anchor_curvature[idx])
        return log_p + change + self._leave_out_log, gradient, along, kept

    #: queries farther than this (in bandwidths) from every anchor are evaluated directly
    MAX_INTERPOLATION_DISTANCE = 1.5

r"""Rows far outside the bulk of the data, whose kernel sums the binned KDE takes directly.

The binned KDE's grid spans the data it bins plus padding: one row far from the rest stretches it
(a row at 10⁴ beside 20 000 standard normal rows in 3-D: 2·10⁹ cells) past the memory budget,
and :class:`~spectral_leverage.spectral.SpectralLeverage` fell back to the tree KDE, which moved
every other row's score by up to 13-22 % at n = 10⁵. So :class:`~spectral_leverage.density.BinnedDensity`
lays its grid over the rows' winsorized range widened by ``BOX_MARGIN`` bandwidths
(:func:`~spectral_leverage.density.bandwidth.robust_range`), bins the rows inside that box, and
adds the Gaussian kernel sums of the rows outside it, the far rows, here.

Both parts truncate the kernel at ``truncate`` bandwidths along each axis, as the grid's separable
filter does, so the split is exact: a far row adds to the density of the rows within that reach
(found by a KD-tree in the :math:`\ell_\infty` norm), and a row beyond the grid's padding reads
the far rows' sums alone. At the data's own rows (``training``) a far row's own term is left out:
the density the scores need is the population's, and at an isolated row the own term is all of
the estimate (a row at 10⁴ beside standard normal rows, Matérn 3/2, λ = 1/n: with it, scores of
0.60× (n = 20 000) and 0.45× (10⁵) the exact one; without, the isolated-point bound
:math:`n k(0)/(k(0) + n\lambda)`, exact). In the bulk the own term is kept, as the grid keeps it.
With :math:`w = x/h` and n rows in all,

.. math:: \hat p_\mathrm{far}(x) = \frac{1}{n \prod_j h_j} \sum_{f:\ \|w - w_f\|_\infty \le \tau}
   (2\pi)^{-d/2} e^{-\|w - w_f\|^2/2}.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

__all__ = ["FarRows"]


class FarRows:
    """The far rows of a binned KDE, in whitened coordinates (``rows`` of shape (k, d)), each of
    weight ``1 / (n prod(h))``; picklable (the KD-tree is rebuilt where it is used)."""

    def __init__(self, rows: np.ndarray, truncate: float, weight: float):
        self.rows = np.ascontiguousarray(rows, dtype=float)
        self.truncate, self.weight = float(truncate), float(weight)
        self._tree = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_tree": None}

    def __len__(self) -> int:
        return self.rows.shape[0]

    def density(self, W: np.ndarray, training: bool = False) -> np.ndarray:
        """:math:`\\hat p_\\mathrm{far}` at whitened rows W, shape (m,); with ``training`` (W are
        rows of the data) one zero-distance term each, the row's own, is left out."""
        out = np.zeros(W.shape[0])
        if not len(self) or not W.shape[0]:
            return out
        if self._tree is None:
            self._tree = cKDTree(self.rows)
        found = self._tree.query_ball_point(W, r=self.truncate, p=np.inf)
        counts = np.fromiter(map(len, found), dtype=np.intp, count=W.shape[0])
        hit = np.flatnonzero(counts)
        if hit.size:
            far = np.concatenate([found[i] for i in hit]).astype(np.intp)
            query = np.repeat(hit, counts[hit])
            squared = np.einsum("ij,ij->i", W[query] - self.rows[far], W[query] - self.rows[far])
            out += np.bincount(query, weights=np.exp(-0.5 * squared), minlength=W.shape[0])
            if training:
                out -= np.bincount(query, weights=squared == 0, minlength=W.shape[0]) > 0
        return out * (self.weight * (2 * np.pi) ** (-0.5 * W.shape[1]))

"""Cell arithmetic of :class:`~spectral_leverage.density.BinnedDensity`'s grid: the corners and
weights of linear binning and read-back, and the slope and curvature grids of the binned
log-density (the boundary correction reads them), with the values beyond the data that stand in
for them."""

from __future__ import annotations

import numpy as np

from .._blocks import row_chunks

__all__ = ["FACE_CURVATURE", "FACE_SLOPE", "cell_corners", "face_value", "log_slope_grids"]

#: The norm of a Gaussian KDE's log-gradient, in bandwidths, at a face of a half-space of data,
#: φ(0)/Φ(0) = sqrt(2/π), and its log-density's curvature across the face there, -2/π.
FACE_SLOPE = float(np.sqrt(2 / np.pi))
FACE_CURVATURE = float(-2 / np.pi)


def _curvature_along(slab_gradients: dict, norm: np.ndarray, keep: tuple, step: float) -> np.ndarray:
    """ĝᵀ H ĝ on the kept cells of a slab, as the derivative of the gradient's norm ``norm`` along ĝ
    (∇‖g‖ = H g / ‖g‖): d more differences instead of d(d+1)/2."""
    numerator = sum(g[keep] * np.gradient(norm, step, axis=axis)[keep] for axis, g in slab_gradients.items())
    norm = norm[keep]
    return np.divide(numerator, norm, out=np.zeros_like(norm), where=norm > 0)



def face_value(key) -> float:
    """The value beyond the data of the grid ``key``: ``"curvature"``, or a slope's per-axis scale
    factors (the slope at a face, times their geometric mean)."""
    return FACE_CURVATURE if key == "curvature" else FACE_SLOPE * float(np.exp(np.mean(np.log(key))))


def log_slope_grids(grid: np.ndarray, box: tuple, floor: float, step: float, keys: list,
                    slab_bytes: float) -> dict:
    """{key: grid} of :meth:`BinnedDensity.slope_grids
    <spectral_leverage.density.BinnedDensity.slope_grids>` for the density ``grid`` (cells of
    ``step`` bandwidths, floored at ``floor`` before the log), computed over the cells ``box`` (a
    slice per axis) in slabs along the first axis of ``slab_bytes`` of temporaries; elsewhere
    :func:`face_value`."""
    d = grid.ndim
    # two more cells each side, so that the box's own cells get the (second) central
    # differences of the whole grid
    halo = tuple(slice(max(b.start - 2, 0), min(b.stop + 2, size))
                 for b, size in zip(box, grid.shape, strict=True))
    inner = tuple(slice(b.start - h.start, b.stop - h.start) for b, h in zip(box, halo, strict=True))
    new = {key: np.full(grid.shape, face_value(key)) for key in keys}
    bytes_per_row = 8.0 * (2 * d + 6) * np.prod([h.stop - h.start for h in halo[1:]])
    for rows in row_chunks(box[0].stop - box[0].start, bytes_per_row, slab_bytes):
        start, stop = box[0].start + rows.start, box[0].start + rows.stop
        lo, hi = max(start - 2, 0), min(stop + 2, grid.shape[0])
        log_slab = np.log(np.maximum(grid[(slice(lo, hi), *halo[1:])], floor))
        keep = (slice(start - lo, stop - lo), *inner[1:])
        axes = [axis for axis in range(d) if log_slab.shape[axis] > 2]
        slab_gradients = {axis: np.gradient(log_slab, step, axis=axis) for axis in axes}
        norm = np.sqrt(sum(g**2 for g in slab_gradients.values()))  # the whitened slope
        target = (slice(start, stop), *box[1:])
        for key, out in new.items():
            if key == "curvature":
                out[target] = _curvature_along(slab_gradients, norm, keep, step)
            elif set(key) == {1.0}:
                out[target] = norm[keep]
            else:
                out[target] = np.sqrt(sum((key[axis] * g[keep]) ** 2
                                          for axis, g in slab_gradients.items()))
    return new


def cell_corners(cells: np.ndarray, shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Multilinear (linear binning) weights of points at grid coordinates ``cells`` (n, d), in
    cells, each in [0, ``shape - 1``] along its axis: the flat C-order indices of the 2^d corners of
    each point's cell and their weights, both of shape (2^d, n). A point on the grid's last face
    reads the cell below it, at its upper corner."""
    d = cells.shape[1]
    base = np.clip(np.floor(cells), 0, np.asarray(shape) - 2)
    upper = (cells - base).T  # (d, n): weight of the upper neighbour along each axis
    strides = np.cumprod((1, *shape[:0:-1]))[::-1]
    corners = np.indices((2,) * d).reshape(d, -1)  # (d, 2^d), C order
    index = (base.astype(np.intp) @ strides)[None, :] + (strides @ corners)[:, None]
    weight = np.ones((2**d, cells.shape[0]))
    for axis in range(d):
        factors = np.stack([1.0 - upper[axis], upper[axis]])
        weight *= factors[corners[axis]]
    return index, weight

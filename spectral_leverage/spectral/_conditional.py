r"""The full-scale leverage's per-row algebra (:mod:`spectral_leverage.spectral.full_scale`, whose
module docstring states it): the far field's factor rows and residual variances of any rows, the
posterior variance of a row given the far field alone or with its near block, and the functions
mapped over row blocks (the same on every backend).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .._blocks import progress, row_chunks

__all__ = ["Factor", "NearField", "far_field", "near_leverage", "tail_leverage", "unlearned"]


class Factor:
    r"""The far field's factor rows :math:`f_j = K_{jP}K_{PP}^{+1/2}` and residual prior variances
    :math:`r_{jj} = k_{jj} - f_j^\top f_j` of any rows, from the pivots' rows and
    :math:`K_{PP}^{+1/2}` (``root``)."""

    def __init__(self, kernel, pivot_rows: np.ndarray, root: np.ndarray):
        self.kernel, self.pivot_rows, self.root = kernel, pivot_rows, root
        self.rank = root.shape[1]

    def rows(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(F, r) of the rows of X."""
        F = self.kernel(X, self.pivot_rows) @ self.root
        return F, self.residual(X, F)

    def residual(self, X: np.ndarray, F: np.ndarray) -> np.ndarray:
        """r of the rows of X (any leading shape) of factor rows F."""
        return np.maximum(np.asarray(self.kernel.diag(X.reshape(-1, X.shape[-1])), dtype=float)
                          .reshape(X.shape[:-1]) - np.einsum("...j,...j->...", F, F), 0.0)


class NearField:
    r""":math:`\sigma_i^2` of the first row of each near block (:mod:`.full_scale`'s docstring), given
    the far field.

    ``kept``: None, or the factor rows F of all n rows in ``kept[0]``, whose solves G
    (:math:`GG^\top = FA^{-1}F^\top`) are then made once into ``kept[1]``; without it each block
    recomputes those of its rows."""

    def __init__(self, spec, factor: Factor, chol, gamma, kept):
        self.spec, self.factor, self.chol, self.gamma, self.kept = spec, factor, chol, gamma, kept
        if kept is not None:
            kept[1] = scipy.linalg.solve_triangular(chol, kept[0].T, lower=True).T
        # G = K_{:P} root L^{-T} in one product for the rows alone
        self.to_solved = scipy.linalg.solve_triangular(chol, factor.root.T, lower=True).T

    def variance_alone(self, X: np.ndarray, tail, density: np.ndarray) -> np.ndarray:
        r""":math:`\sigma_i^2` of each row of X given the far field only (no neighbours), its residual
        learned down to :math:`\tau` = ``tail(density, r)``: with :math:`s = g_i^\top g_i`,
        :math:`\tau_i + s + s^2 / (r_{ii} + \gamma - s)`."""
        K = self.factor.kernel(X, self.factor.pivot_rows)
        r = self.factor.residual(X, K @ self.factor.root)
        G = K @ self.to_solved
        s = np.einsum("ij,ij->i", G, G)
        return np.maximum(tail(density, r) + s + s * s / (r + self.gamma - s), 1e-300)

    def variance(self, points: np.ndarray, near: np.ndarray) -> np.ndarray:
        """Of the near blocks of rows ``near`` (b, k+1), the rows ``points`` (b, k+1, d)."""
        if self.kept is None:
            _, first, position = np.unique(near, return_index=True, return_inverse=True)
            F_rows, _ = self.factor.rows(points.reshape(-1, points.shape[-1])[first])
            G_rows = scipy.linalg.solve_triangular(self.chol, F_rows.T, lower=True).T
            F_B, G_B = F_rows[position.reshape(near.shape)], G_rows[position.reshape(near.shape)]
        else:
            F_B, G_B = self.kept[0][near], self.kept[1][near]  # (b, k+1, rank)
        residual = self.factor.residual(points, F_B)
        S = G_B @ G_B.transpose(0, 2, 1)
        if near.shape[1] > 1:
            Z = self.spec.rescale(points)
            gaps = Z[:, :, None, :] - Z[:, None, :, :]
            distance = np.sqrt(np.einsum("bijd,bijd->bij", gaps, gaps))
            local = self.spec.amplitude * self.spec.correlation(distance)
            local -= F_B @ F_B.transpose(0, 2, 1)  # R_BB
        else:
            local = residual[:, :, None]
        W = -S
        diagonal = np.arange(near.shape[1])
        W[:, diagonal, diagonal] += residual + self.gamma
        C = local + S + S @ np.linalg.solve(W, S)
        variance = C[:, 0, 0]
        if near.shape[1] > 1:
            c_in = C[:, 0, 1:]
            C_nn = C[:, 1:, 1:]
            C_nn[:, diagonal[:-1], diagonal[:-1]] += self.gamma
            variance = variance - np.einsum("bi,bi->b", c_in, np.linalg.solve(C_nn, c_in[..., None])[..., 0])
        return np.clip(variance, 1e-300, np.maximum(C[:, 0, 0], 1e-300))


def unlearned(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    """The tail's posterior variance where there is no tail: its prior r (zero)."""
    return r


def far_field(X: np.ndarray, factor: Factor, gamma: float, per_row: float, budget: float, verbose: bool,
              kept: np.ndarray | None, start: tuple) -> tuple[np.ndarray, float]:
    r"""``start`` plus (:math:`\sum_j f_j f_j^\top / (r_j + \gamma)`, :math:`\sum_j r_j / (r_j + \gamma)`)
    over the rows of X, in row blocks of ``per_row`` bytes within ``budget``; F into ``kept[0]`` if
    given."""
    weighted, left = start[0].copy(), start[1]
    for rows in progress(list(row_chunks(X.shape[0], per_row, budget)), verbose=verbose,
                         desc="full-scale far field", unit="block"):
        F, residual = factor.rows(X[rows])
        weighted += (F / (residual + gamma)[:, None]).T @ F
        left += float(np.sum(residual / (residual + gamma)))
        if kept is not None:
            kept[0, rows] = F
    return weighted, left


def tail_leverage(X: np.ndarray, density: np.ndarray, shared: tuple, per_row: float, budget: float,
                  verbose: bool) -> np.ndarray:
    """Leverage of the rows of X given the far field, the residual learned by the tail integral."""
    near_field, tail = shared
    variance = np.empty(X.shape[0])
    for rows in progress(list(row_chunks(X.shape[0], per_row, budget)), verbose=verbose,
                         desc="full-scale tail", unit="block"):
        variance[rows] = near_field.variance_alone(X[rows], tail, density[rows, 0])
    return variance / (variance + near_field.gamma)


def near_leverage(points: np.ndarray, near: np.ndarray, near_field: NearField) -> np.ndarray:
    """Leverage of the first row of each near block (``points`` (b, k+1, d), row ids ``near``)."""
    variance = near_field.variance(points, near)
    return variance / (variance + near_field.gamma)

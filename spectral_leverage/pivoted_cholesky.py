r"""Randomly pivoted Cholesky: a low-rank factor :math:`K \approx FF^\top` from a few kernel columns.

Block RPCholesky (Chen, Epperly, Tropp & Webber, 2023) draws pivots with probability proportional
to the residual diagonal :math:`r = \mathrm{diag}(K - FF^\top)`, appends the drawn rows' residual
columns to :math:`F` and updates :math:`r`. Drawing by the residual spends pivots where the factor
is worst, so the trace error :math:`\sum_i r_i` is near the best rank-m error after few pivots, and
the pivots are diverse rows of X (never near-duplicates of one another).

Only :math:`O(nm)` memory is used (the factor); no n×n matrix is formed.

References
----------
Y. Chen, E. N. Epperly, J. A. Tropp and R. J. Webber. Randomly pivoted Cholesky: practical
approximation of a kernel matrix with few entry evaluations. Comm. Pure Appl. Math., 2024
(arXiv:2207.06503).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._blocks import DEFAULT_MEMORY_BUDGET, KERNEL_BYTES_PER_ENTRY, row_chunks
from ._keys import smallest_drawn

__all__ = ["Subsample", "inverse_sqrt", "rp_cholesky", "subsample_pivots"]

#: The rounds stop once the residual holds this share of the factor's ridge degrees of freedom.
RESIDUAL_SHARE = 0.01

#: Largest block of pivots drawn in one round; rounds start at 16 and double up to it, so that an
#: easy kernel stops after few pivots.
PIVOT_BLOCK = 128

#: Candidates per round of greedy pivoting: the rows of largest residual, of which
#: :func:`_certified_greedy` keeps those certain to be greedy's next pivots. The first round has
#: GREEDY_START; each next one twice the pivots the last kept, within [GREEDY_START / 2, GREEDY_BLOCK]:
#: a candidate's residual row costs a kernel row and a product with the factor, wasted if it drops out.
GREEDY_START, GREEDY_BLOCK = 8, 32


def inverse_sqrt(K: np.ndarray) -> np.ndarray:
    r""":math:`K^{+1/2}` of a symmetric PSD matrix as :math:`U_k / \sqrt{s_k}`, shape (m, rank).

    Eigenvalues below :math:`m \cdot \varepsilon \cdot \max s` are dropped, so a rank-deficient
    block (near-duplicate pivots) gives a narrower factor instead of an unstable one.

    Examples
    --------
    >>> W = inverse_sqrt(np.array([[4.0, 0.0], [0.0, 0.0]]))
    >>> W.shape, float(abs(W[0, 0]))
    ((2, 1), 0.5)
    """
    s, U = np.linalg.eigh(K)
    keep = s > s.max(initial=0.0) * s.shape[0] * np.finfo(float).eps
    return U[:, keep] / np.sqrt(s[keep])


def _finite(values: np.ndarray, kernel) -> np.ndarray:
    """``values`` (kernel values on X) if all finite, else the package's one-line refusal of X whose
    distances leave float64 kernel values, instead of a NaN that no eigensolver survives
    (scikit-learn's general-ν Matérn is ``inf * 0`` at distances beyond about 1e100 length scales)."""
    if not np.isfinite(values).all():
        raise ValueError(
            f"{kernel!r} gives NaN or infinite values on X: X's range in the kernel's units is too "
            "extreme for float64 kernel values: standardise X and choose a length scale near its spread."
        )
    return values


def rp_cholesky(X: np.ndarray, kernel, max_pivots: int, rng: np.random.Generator, *,
                gamma: float | None = None, represents: int | None = None,
                memory_budget: float = DEFAULT_MEMORY_BUDGET, greedy: bool = False,
                weights: np.ndarray | None = None,
                row_ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""Pivots and factor of block randomly pivoted (or greedy) Cholesky on the rows of X.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    kernel : scikit-learn kernel
        Called as ``kernel(A, B)`` and ``kernel.diag(A)``.
    max_pivots : int
        Most pivots m.
    rng : numpy Generator
    gamma : float or None, default=None
        Ridge :math:`\gamma = n\lambda` of a leverage computation. When given, the rounds stop once
        the residual's own ridge degrees of freedom :math:`\sum_i r_i / (r_i + \gamma)` are at most
        1 % of the factor's, :math:`\sum_j s_j / (s_j + \gamma)` over the eigenvalues of
        :math:`F^\top F`: the factor then holds nearly all the leverage there is to find (a 1 %
        share keeps the Nyström leverage within a few per cent of the exact one pointwise).
        None: run to ``max_pivots`` (or until the residual is zero).
    represents : int or None, default=None
        Rows of the full data that X is a uniform subsample of: the stopping rule's sum is scaled
        by ``represents / n``. None: X is the whole data.
    memory_budget : float, default=1 GiB
        Bytes of kernel temporaries per block of rows (the factor itself, n × m, comes on top).
    greedy : bool, default=False
        Greedy pivoting instead: each pivot the row of largest (weighted) residual, ties to the
        lowest index (greedy conditional variance; Burt, Rasmussen & van der Wilk 2020, and Chen et
        al.'s "greedy" baseline), found in blocks (:func:`_certified_greedy`): the same pivots as
        one at a time (up to rounding between copies of a row), at the cost of block RPCholesky's
        matrix products; it stops early once every residual is rounding. ``rng`` is then unused.
    weights : ndarray of shape (n,) or None, default=None
        Non-negative pivot weights :math:`w`: pivots are drawn with probability proportional to
        :math:`w_i r_i` (or, greedy, the largest :math:`w_i r_i`). None: all 1.
    row_ids : ndarray of int, shape (n,), or None, default=None
        Stable draws (common random numbers): the rows' ids in the full data (increasing; ``arange(n)``
        for X itself). Each round then draws every row independently, row i with the probability
        :math:`1 - (1 - p_i)^b` that b draws with replacement (probabilities :math:`p_i`) include it
        (Poisson sampling; at least one row), from a uniform keyed by its id and the round, all from
        one seed taken from ``rng`` first. Rows appended to the data, or a subsample that gains or
        loses a row, leave the other rows' uniforms as they were, so few pivots change (rows
        inserted or reordered change the ids behind them): with i.i.d.
        draws one far row added to 2276 normal rows in 5-D moved the full-scale scores of the
        others as much as another ``random_state`` (5th/95th percentile 0.94/1.04). None: b draws
        with replacement.

    Returns
    -------
    pivots : ndarray of int, shape (m,)
        Distinct row indices, in the order chosen.
    factor : ndarray of shape (n, rank)
        :math:`F` with :math:`FF^\top = K_{:P}K_{PP}^{+}K_{P:}`, the Nyström approximation at the
        pivots; rank <= m (fewer where a block was numerically rank-deficient).

    Raises
    ------
    ValueError
        Where a kernel value on X is NaN or infinite (X's distances leave float64 kernel values):
        a one-line refusal naming the fix, before the eigensolver.

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> X = np.random.default_rng(0).uniform(size=(500, 1))
    >>> piv, F = rp_cholesky(X, RBF(0.5), 200, np.random.default_rng(0), gamma=0.5)
    >>> len(piv) < 50   # a smooth kernel on an interval: a few pivots resolve it
    True
    """
    n = X.shape[0]
    scale = 1.0 if represents is None else represents / n
    residual = _finite(np.asarray(kernel.diag(X), dtype=float).copy(), kernel)
    width = min(int(max_pivots), n)
    factor = np.zeros((width, n))  # F^T: a factor column per row, so that a block's rows are contiguous
    gram = np.zeros((width, width))  # F^T F, grown block by block
    pivots: list[int] = []
    rank, size = 0, 16
    block = GREEDY_START
    floor = 16 * np.finfo(float).eps * residual.max(initial=0.0)  # greedy: residuals below are rounding
    kept, kept_rows = np.zeros(0, dtype=np.intp), np.zeros((0, n))  # greedy: candidates' residual rows
    seed, rounds = (int(rng.integers(2**63 - 1)), 0) if row_ids is not None and not greedy else (None, 0)
    while len(pivots) < width and residual.sum() > 0:
        if gamma is not None and rank and _resolved(residual, gram[:rank, :rank], gamma, scale):
            break
        mass = residual if weights is None else residual * weights
        if not mass.sum() > 0:
            break
        if greedy:
            candidates, tau = _largest(mass, block)
            rows = np.empty((candidates.size, n))
            old = np.isin(candidates, kept)
            rows[old] = kept_rows[np.searchsorted(kept, candidates[old])]  # kept is sorted
            rows[~old] = _residual_rows(X, kernel, factor[:rank], candidates[~old], memory_budget)
            w = np.ones(candidates.size) if weights is None else weights[candidates]
            chosen = _certified_greedy(rows[:, candidates], w, tau, width - len(pivots), floor)
            if not chosen.size:  # the candidates' residuals are zero to rounding
                residual[candidates] = 0.0
                kept, kept_rows = kept[:0], kept_rows[:0]
                continue
            block = int(np.clip(2 * chosen.size, GREEDY_START // 2, GREEDY_BLOCK))
            drawn, rest = candidates[chosen], np.delete(np.arange(candidates.size), chosen)
            kept, kept_rows, rows = candidates[rest], rows[rest], rows[chosen]
        else:
            size = min(size, PIVOT_BLOCK, width - len(pivots))
            if seed is None:
                drawn = np.unique(rng.choice(n, size=size, p=mass / mass.sum()))
            else:
                drawn = _stable_draw(mass, size, width - len(pivots), row_ids, (seed, rounds))
                rounds += 1
            drawn = drawn[residual[drawn] > 0]
            rows = _residual_rows(X, kernel, factor[:rank], drawn, memory_budget)
            size *= 2
        new = inverse_sqrt(rows[:, drawn]).T @ rows  # (k, n), k <= len(drawn)
        if greedy:  # the other candidates' rows, up to date for the next round
            kept_rows -= new[:, kept].T @ new
        grown = rank + new.shape[0]
        factor[rank:grown] = new
        if gamma is not None:  # F^T F serves only the stopping rule
            gram[:grown, rank:grown] = factor[:grown] @ new.T
            gram[rank:grown, :grown] = gram[:grown, rank:grown].T
        rank = grown
        pivots.extend(drawn.tolist())
        residual = np.maximum(residual - np.einsum("ij,ij->j", new, new), 0.0)
    return np.asarray(pivots, dtype=np.intp), factor[:rank].T


def _stable_draw(mass: np.ndarray, size: int, most: int, row_ids: np.ndarray, key: tuple) -> np.ndarray:
    """Rows (sorted) of one round of stable draws (:func:`rp_cholesky`'s ``row_ids``): each row in
    with probability 1 - (1 - p)^size, p = mass / sum, by a uniform keyed by its id and ``key``;
    the ``most`` of smallest uniform-to-probability ratio if more, the one of smallest ratio if none."""
    u = np.random.default_rng(key).random(int(row_ids[-1]) + 1)[row_ids]
    p = mass / mass.sum()
    with np.errstate(divide="ignore"):
        ratio = u / -np.expm1(size * np.log1p(-np.minimum(p, 1.0)))  # inf where p = 0
    drawn = np.flatnonzero(ratio < 1.0)
    if drawn.size > most or not drawn.size:
        drawn = np.sort(np.argsort(ratio, kind="stable")[:max(1, min(most, drawn.size))])
    return drawn


def _residual_rows(X: np.ndarray, kernel, factor: np.ndarray, rows: np.ndarray,
                   memory_budget: float) -> np.ndarray:
    """(len(rows), n): the residual kernel :math:`K_{R:} - F_R F^\\top` at ``rows`` R, ``factor``
    being :math:`F^\\top`, in column blocks of ``memory_budget`` bytes of kernel temporaries."""
    n = X.shape[0]
    out = np.empty((rows.size, n))
    for cols in row_chunks(n, KERNEL_BYTES_PER_ENTRY * rows.size, memory_budget):
        out[:, cols] = kernel(X[rows], X[cols]) - factor[:, rows].T @ factor[:, cols]
    return _finite(out, kernel)


def _largest(mass: np.ndarray, b: int) -> tuple[np.ndarray, float]:
    """(the b rows of largest ``mass``, ties to the lowest index, sorted; the largest mass of the
    other rows, 0 when there are none)."""
    n = mass.size
    if b >= n:
        return np.arange(n), 0.0
    top = -np.partition(-mass, [b - 1, b])
    above = np.flatnonzero(mass > top[b - 1])
    tied = np.flatnonzero(mass == top[b - 1])[: b - above.size]
    return np.sort(np.concatenate([above, tied])), float(top[b])


def _certified_greedy(block: np.ndarray, w: np.ndarray, tau: float, most: int,
                      floor: float = 0.0) -> np.ndarray:
    r"""Positions in ``block`` of the next pivots of greedy pivoting, as far as they are certain.

    ``block`` is the residual kernel among b candidate rows (sorted by index), ``w`` their weights,
    ``tau`` the largest weighted residual of every other row. Pivoting on the block greedily updates
    the candidates' residuals exactly; the other rows' residuals only fall, so a candidate whose
    updated :math:`w_i r_i` still exceeds ``tau`` is the global argmax. The first pivot always is
    (the candidates are the b largest). Stops at the first candidate that is not certain, at a
    residual at most ``floor`` (rounding: the factor is then the kernel's to working precision and
    a further pivot would add a column of noise), or after ``most`` pivots; O(b^2) a pivot, on top of
    the b residual rows. Ties go to the lowest index where they are exact in floating point; two
    copies of one row may differ by rounding in the two residuals compared (the maintained one that
    chose the candidates and the block's), and then either copy can come first.
    """
    S = block.copy()
    d = np.diag(S).copy()
    free = np.ones(d.size, dtype=bool)
    chosen: list[int] = []
    while len(chosen) < most:
        score = np.where(free & (d > floor) & (w > 0), w * d, -np.inf)
        j = int(np.argmax(score))  # ties to the lowest index, as the candidates are sorted
        if score[j] == -np.inf or (chosen and not score[j] > tau):
            break
        chosen.append(j)
        free[j] = False
        column = S[:, j] / np.sqrt(d[j])
        S -= np.outer(column, column)
        d = np.diag(S).copy()
    return np.asarray(chosen, dtype=np.intp)


class Subsample(NamedTuple):
    """What :func:`subsample_pivots` draws and counts."""

    #: the pivots, rows of X
    pivots: np.ndarray
    #: ``X[pivots]``, a NumPy array of shape (m, d)
    rows: np.ndarray
    #: the factor's ridge degrees of freedom
    captured: float
    #: the residual's, taken as unlearned
    left: float
    #: the subsample's rows (a uniform draw of rows of X, in row order), a NumPy array
    sample: np.ndarray


def subsample_pivots(X: np.ndarray, kernel, reg: float, *, max_pivots: int, max_samples: int | None,
                     memory_budget: float, rng: np.random.Generator, take=None) -> Subsample:
    r"""Pivots by :func:`rp_cholesky` on a uniform subsample of the rows of X, and the ridge degrees
    of freedom (:math:`\gamma = n\lambda`) that the factor and its residual, taken as unlearned, hold:
    :math:`\sum_j s_j/(s_j + \gamma)` over the eigenvalues of :math:`F^\top F` and
    :math:`\sum_i r_{ii}/(r_{ii} + \gamma)`, both from the subsample scaled to all n rows.

    Parameters
    ----------
    X : ndarray of shape (n, d), or any array ``take`` reads
        The subsample and the draws are made here, whatever holds X; only its rows are read.
    kernel : scikit-learn kernel
    reg : float
        :math:`\lambda`.
    max_pivots : int
        Most pivots (fewer to fit the budget, or once the residual is resolved).
    max_samples : int or None
        Most rows of the subsample (None: as many as the budget holds).
    memory_budget : float
        Bytes: a quarter of it holds the subsample's factor and kernel blocks.
    rng : numpy Generator
    take : callable or None, default=None
        ``take(X, rows)``: the rows ``rows`` (sorted) of X as a NumPy array; the full-scale leverage
        passes its backend's, which gathers a Dask array's rows in one pass. None: ``X[rows]``.

    Returns
    -------
    Subsample
        The pivots (rows of X) and their rows (taken with the subsample), the factor's and the
        residual's ridge degrees of freedom, and the subsample's rows.
    """
    n = X.shape[0]
    gamma, quarter = n * reg, memory_budget / 4
    max_pivots = max(1, min(max_pivots, int(np.sqrt(quarter / 64.0))))
    n_sub = min(n, max(max_pivots, int(quarter // (8.0 * (max_pivots + PIVOT_BLOCK)))))
    n_sub = n_sub if max_samples is None else min(n_sub, max_samples)
    # common random numbers (rp_cholesky's row_ids): the pivots' seed first, then one key per row, so
    # that a row added to X leaves the other rows' subsample membership and draws as they were
    pivot_rng = np.random.default_rng(int(rng.integers(2**63 - 1)))
    sub = smallest_drawn(rng, n, n_sub)[0] if n_sub < n else np.arange(n)
    rows = X[sub] if take is None else take(X, sub)
    drawn, factor = rp_cholesky(rows, kernel, max_pivots, pivot_rng, gamma=gamma, represents=n,
                                memory_budget=quarter, row_ids=sub)
    scale = n / n_sub
    diagonal = np.asarray(kernel.diag(rows), dtype=float)
    residual = np.maximum(diagonal - np.einsum("ij,ij->i", factor, factor), 0.0)
    eigenvalues = scale * np.linalg.eigvalsh(factor.T @ factor)
    captured = float(np.sum(eigenvalues / (eigenvalues + gamma)))
    left = float(scale * np.sum(residual / (residual + gamma)))
    return Subsample(sub[drawn], rows[drawn], captured, left, rows)


def _resolved(residual: np.ndarray, gram: np.ndarray, gamma: float, scale: float) -> bool:
    """Whether the residual's ridge degrees of freedom are at most RESIDUAL_SHARE of the factor's
    (both for the full data that the rows stand for, ``scale`` rows each)."""
    s = scale * np.linalg.eigvalsh(gram)
    captured = np.sum(s / (s + gamma))
    return scale * np.sum(residual / (residual + gamma)) <= RESIDUAL_SHARE * max(captured, 1.0)

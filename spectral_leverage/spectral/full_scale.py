r"""Full-scale ridge leverage: a pivoted low-rank factor for the far field, and for the rest the SA
integral over the frequencies the pivots miss or exact conditioning on the nearest rows. Used where
the density formula's assumptions fail (:func:`~.plan.full_scale_plan`).

The ridge leverage of row :math:`i` is a Schur complement of :math:`K + \gamma I`
(:math:`\gamma = n\lambda`):

.. math::

    l_i = \frac{\sigma_i^2}{\sigma_i^2 + \gamma}, \qquad
    \sigma_i^2 = k_{ii} - k_{iS}(K_{SS} + \gamma I)^{-1}k_{Si},

the posterior variance at :math:`x_i` of a Gaussian process with covariance :math:`k`, given
observations with noise variance :math:`\gamma` at every other row :math:`S`.

**Why the density formula fails at both ends.** :math:`h(p(x_i))` treats the equivalent kernel
(the weights :math:`k_{iS}(K_{SS} + \gamma I)^{-1}`) as a window over a smooth density. When the
effective dimension is small (smooth kernel, wide :math:`\ell`, large :math:`\lambda`), the window is
as wide as the data and a few global eigenfunctions shape :math:`\sigma_i^2`; when the mean leverage
:math:`d_\mathrm{eff}/n` is large (rough kernel, small :math:`\lambda`), the window holds a handful of
rows and :math:`\sigma_i^2` depends on where exactly they lie. The decomposition below is exact in
both limits.

**The approximation.** Split :math:`K = FF^\top + R` with :math:`F = K_{:P}K_{PP}^{+1/2}` the
Nyström factor at pivots P chosen by randomly pivoted Cholesky
(:mod:`spectral_leverage.pivoted_cholesky`) and :math:`R` the short-ranged residual, whose diagonal
:math:`r_{jj}` is its prior variance at row j.

* Far rows enter through the factor's weights :math:`w \sim N(0, I)` only: row :math:`j` observes
  :math:`f_j^\top w` with noise :math:`r_{jj} + \gamma` (its residual's correlation with row
  :math:`i` dropped). Their precision is :math:`A = I + \sum_j f_j f_j^\top / (r_{jj} + \gamma)`,
  and the factor's part of :math:`\sigma_i^2` is the leave-one-out variance
  :math:`f_i^\top A_{-i}^{-1} f_i`.
* **Where the windows hold many rows** (the low-rank end), the residual is what the pivots miss:
  the kernel's spectrum above a cut-off. The data learn part of it, and the SA integral over those
  frequencies says how much: :math:`\sigma_i^2 \approx \tau_i + f_i^\top A_{-i}^{-1} f_i` with
  :math:`\tau_i = \tau(p(x_i), r_{ii}) \le r_{ii}` (:mod:`spectral_leverage.spectral.tail`;
  ``n_neighbors=0``).
* **Where they hold few rows** (:func:`~.plan.full_scale_plan`: a mean leverage of
  :data:`~.plan.DISCRETE_LEVERAGE` or more), the residual is learned from the rows close by, which
  no density resolves: they enter exactly. The rows nearest one pivot (a group;
  :class:`~._near_groups.AnchorGroups` and :func:`group_anchors`, at most :data:`GROUP_ROWS` of
  them) share one block :math:`U`: their own rows and the k nearest rows of each. With
  :math:`S_U = F_U A^{-1}F_U^\top` and :math:`W_U = \mathrm{diag}(r_{UU} + \gamma)`, removing U's
  own terms from :math:`A` (Woodbury) gives
  :math:`F_U A_{-U}^{-1}F_U^\top = S_U + S_U(W_U - S_U)^{-1}S_U`; the covariance of :math:`f_U`
  given the far rows is :math:`C = R_{UU} + F_U A_{-U}^{-1}F_U^\top`, and each row of the group
  given all the other rows of U has :math:`\sigma_i^2 + \gamma = 1/[(C + \gamma I)^{-1}]_{ii}`,
  one factorisation for the group. Sharing the block conditions each row on its group and their
  neighbours (100-250 rows in 4-8 dimensions), not on its own k nearest alone, at about the same
  cost: a residual reaching n/m rows is learned from its rows where it is at most
  :data:`~.plan.DENSE_ROWS_PER_PIVOT` (CASP, d = 8, n = 8000, λ = 1/n, 512 pivots: 95th percentiles
  1.03-1.15 against exact scores, 1.14-1.35 with a block of 32 neighbours per row).

With :math:`R = 0` (effective rank below the number of pivots) both are the leave-one-out variance of
the Nyström model, its exact leverage; with :math:`F = 0` the first is the density formula's
posterior variance (:math:`\tau = \lambda h(p)`, so :math:`l = h/(n + h)`, the formula's
:math:`h/n` to first order) and the second conditioning on the group's block, exact when the
equivalent kernel's window holds no more rows than it. The second combines the two as the full-scale
approximation of spatial statistics does (Sang & Huang, 2012); identical rows are each other's
neighbours and share their leverage as the exact scores do.

Why not both: with the neighbours on some rows and the tail integral on the others, the two
estimates' different biases show as a spread between the two groups of rows (measured on CCPP and
CASP at n = 4000: a 95th percentile of 1.21 against 1.10 for the tail integral alone, 64 pivots);
at the low-rank end the tail integral alone is within a few per cent of exact leverage.

Cost: pivots on a subsample (:math:`O(n_s m^2)`); two passes over the rows for :math:`A` and the
leave-one-out variances (:math:`O(nm^2)`), the tail integral's table once (:math:`O(1)` per row); with
neighbours, a k-nearest-neighbour query and, per group of c rows sharing a block of u rows (u at
most :data:`BLOCK_NEAR_BLOCKS` (k + 1)), :math:`O(u^2 m + u^3)` by the downdate or
:math:`O(u^3/3 + u^2 m + u m^2 + m^3/3)` given every row, whichever costs less
(:data:`~._conditional.GIVEN_ALL_RATIO`). Memory: quarters of
``memory_budget`` for the m×m matrices, the pivot subsample, its kernel blocks and each pass's row
blocks (m and k shrink to fit a small budget).

On a Dask array the same lines run over the row chunks (:mod:`spectral_leverage.backends`): the
subsample's rows gathered to the caller, the far field a sum over chunks, the scores a map over
them; the neighbours are exact (by cells of space with halo rows, each group in the cell of its
pivot: :mod:`spectral_leverage.backends._cells`), so the scores equal the in-memory ones to
rounding, or to about 1e-5 where the in-memory fit keeps every row's factor rows in float32
(:data:`SINGLE_GAMMA`; the blocks on Dask make theirs in float64, and multiply them in float32
alike), except where the in-memory fit takes approximate neighbours
(``neighbor_search``; :mod:`spectral_leverage.backends._neighbours`): there a few per cent at the
1st and 99th percentiles.

References
----------
H. Sang and J. Z. Huang. A full scale approximation of covariance functions for large spatial data
sets. J. R. Stat. Soc. B 74(1), 2012.

A. V. Vecchia. Estimation and model identification for continuous spatial processes. J. R. Stat.
Soc. B 50(2), 1988.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import scipy.linalg

from .._blocks import KERNEL_BYTES_PER_ENTRY, MAX_BLOCK_BYTES, max_threads, row_chunks
from ..backends import backend_for
from ..backends._neighbours import resolve_search
from ..pivoted_cholesky import Subsample, inverse_sqrt, subsample_pivots
from ._conditional import Factor, NearField, far_field, tail_leverage, unlearned
from ._near_groups import AnchorGroups, near_leverage
from .plan import neighbours_given_pivots, tail_share, tail_too_large, tail_trusted
from .tail import TailVariance

__all__ = ["full_scale_leverage", "full_scale_scores", "group_anchors"]

logger = logging.getLogger(__name__)

#: The rows of a near field's group (those nearest one pivot) share one block, their own rows and
#: their neighbours: one factorisation for the group, each row given all the others; at most this
#: many rows a group ...
GROUP_ROWS = 64
#: ... and eight near blocks' rows in its block (a group split in halves until they fit: in 8-D the
#: near blocks of a group share few rows, and the block's cost grows as its rows squared).
BLOCK_NEAR_BLOCKS = 8
#: A group is held whole (its rows' near blocks in memory at once; on Dask, in one cell of space),
#: so where the pivots are sparser than this many rows each (on the neighbours' path past about
#: 165 000 rows; 64 pivots over 10^7 rows would make groups of 156 000 rows) the groups gather
#: around evenly spaced rows of the pivots' subsample instead (:func:`group_anchors`).
ANCHOR_ROWS = 512
#: The near field keeps every row's factor rows in float32, and multiplies its blocks' factor rows
#: in float32, where n lambda is at least this many times the kernel's prior variance: their
#: rounding (float32's 6e-8 of the prior) reaches the scores divided by n lambda. Largest change of
#: any score against float64 from the kept rows, n = 3000 standard normal rows, 400 pivots, 32
#: neighbours, at n lambda = 1 / 0.1 / 0.01: 3-D Matérn 3/2 at ℓ = 0.3, 1.4e-7 / 7.8e-7 / 6.0e-6;
#: 8-D Matérn 3/2 at ℓ = 1, 4.8e-8 / 3.1e-7 / 3.4e-6; 8-D RBF at ℓ = 2, 1.7e-6 / 1.0e-5 / 1.7e-5
#: (7e-4 at 1e-4); the products add at most 5.5e-6 at n lambda >= 0.1. Half the bytes: in 8-D at the
#: default budget the factor rows of up to about 40 000 rows fit at 1667 pivots, where float64 fit
#: 20 000; and the products take half the time (n = 30 000 in 8-D: 0.81x the fit's CPU time).
SINGLE_GAMMA = 0.1


def group_anchors(drawn: Subsample, n: int) -> np.ndarray:
    """The rows whose nearest rows of X form the near field's groups: the pivots ``drawn.rows``, or
    where n is over :data:`ANCHOR_ROWS` times their count, ``ceil(n / ANCHOR_ROWS)`` evenly spaced
    rows of their uniform subsample ``drawn.sample`` (all of it if it holds fewer). The same rows on
    every backend (the subsample is gathered to the caller).

    Examples
    --------
    >>> from spectral_leverage.pivoted_cholesky import Subsample
    >>> sample = np.arange(20_000.0)[:, None]
    >>> drawn = Subsample(np.arange(64), sample[:64], 10.0, 1.0, sample)
    >>> len(group_anchors(drawn, 32_768)), len(group_anchors(drawn, 10**6)), len(group_anchors(drawn, 10**7))
    (64, 1954, 19532)
    """
    count = min(len(drawn.sample), -(-n // ANCHOR_ROWS))
    if count <= len(drawn.pivots):
        return drawn.rows
    return drawn.sample[np.linspace(0, len(drawn.sample) - 1, count).round().astype(np.intp)]


def full_scale_scores(X, kernel, spec, reg: float, density_scores, density, dim: float, *,
                      effective_dimension: float, plan: tuple[int, int], forced: bool,
                      max_samples: int | None,
                      memory_budget: float, rng: np.random.Generator, neighbor_search: str = "auto",
                      verbose: bool = False) -> tuple[np.ndarray, str, str | None]:
    r"""(Rescaled scores :math:`n\,l_i`, "full-scale" or "density", the neighbour search the near
    field took: "exact", "approximate" or None where it took none): :func:`full_scale_leverage`
    with ``plan``, (pivots, neighbours) from :func:`~.plan.full_scale_plan` for the effective
    dimension of the density formula's ``density_scores`` (the caller's, made once), or those scores
    themselves where the factor says they are the better estimate.

    With the tail integral planned, the pivots' own count of ridge degrees of freedom
    (:func:`~spectral_leverage.pivoted_cholesky.subsample_pivots`) decides between the tail
    integral, the neighbours and the density scores (:func:`~.plan.neighbours_given_pivots`, with
    ``effective_dimension``, the density scores' own, the caller's: made once).
    Other parameters as :func:`full_scale_leverage`; on Dask the scores are persisted.
    """
    n = X.shape[0]
    max_pivots, neighbours = plan
    drawn = subsample_pivots(X, kernel, reg, max_pivots=max_pivots, max_samples=max_samples,
                             memory_budget=memory_budget, rng=rng, take=backend_for(X).take)
    if not neighbours:
        neighbours = neighbours_given_pivots(n, len(drawn.pivots), drawn.captured, drawn.left, dim,
                                             effective_dimension, forced)
        if neighbours is None:
            return density_scores, "density", None
    leverage, _, search = full_scale_leverage(
        X, kernel, spec, reg, density=density, dim=dim, max_pivots=max_pivots, n_neighbors=neighbours,
        max_samples=max_samples, memory_budget=memory_budget, rng=rng, pivots=drawn,
        neighbor_search=neighbor_search, verbose=verbose,
        warn_tail=not tail_trusted(n, len(drawn.pivots), drawn.captured, drawn.left, dim))
    return backend_for(X).persist(n * leverage), "full-scale", search


def full_scale_leverage(X, kernel, spec, reg: float, *, density, dim: float,
                        max_pivots: int, n_neighbors: int, max_samples: int | None, memory_budget: float,
                        rng: np.random.Generator, pivots: Subsample | None = None,
                        neighbor_search: str = "auto", verbose: bool = False,
                        warn_tail: bool = True) -> tuple[np.ndarray, np.ndarray, str | None]:
    r"""Leverage :math:`l_i` of every row of X by the full-scale approximation (module docstring).

    The same lines run on a NumPy or a Dask array (:mod:`spectral_leverage.backends`): the pivots
    from a subsample gathered to the caller, the far field a sum over row blocks, then one map
    over them (the tail integral, or each row's near block:
    :func:`~spectral_leverage.backends.numpy.map_near`).

    Parameters
    ----------
    X : ndarray or Dask array of shape (n, d), n >= 2
    kernel : scikit-learn kernel (stationary; ``spec`` is its parse)
    spec : :class:`~spectral_leverage.kernels.StationaryKernel`
    reg : float
        :math:`\lambda`.
    density : ndarray or Dask array of shape (n,)
        Input density at each row, > 0, in the kernel's unit-length coordinates :math:`x/\ell`
        and ``dim`` dimensions: the residual's learned part is read from it (``n_neighbors=0``).
    dim : float
        Dimension of the density and of the tail integral (ambient or intrinsic).
    max_pivots : int
        Most pivots m (fewer once the residual's ridge degrees of freedom are 1 % of the factor's,
        :func:`~spectral_leverage.pivoted_cholesky.rp_cholesky`).
    n_neighbors : int
        Rows k every row is conditioned on exactly (:func:`~.plan.full_scale_plan`); 0: none, the residual's
        learned part from the tail integral instead.
    max_samples : int or None
        Rows of the uniform subsample the pivots are drawn from (None: all).
    memory_budget : float
        Bytes of temporaries, split in quarters (module docstring's cost); it also bounds m and k.
    rng : numpy Generator
    pivots : :class:`~spectral_leverage.pivoted_cholesky.Subsample` or None, default=None
        Pivots drawn already (:func:`~spectral_leverage.pivoted_cholesky.subsample_pivots`); None
        draws them.
    neighbor_search : {"auto", "exact", "approximate"}, default="auto"
        How the near field finds each row's neighbours in memory
        (:func:`~spectral_leverage.backends._neighbours.resolve_search`: approximate ones from faiss's
        inverted lists, their centres drawn by ``rng``, where the k-d tree is slow); on Dask exact.
    verbose : bool, default=False
        Progress bars (stderr) over the far field's and the near field's row blocks.
    warn_tail : bool, default=True
        Warn where the tail integral would learn too much in many dimensions
        (:func:`~.plan.tail_too_large`); :func:`full_scale_scores` passes False where its pivots
        resolve every window (:func:`~.plan.tail_trusted`, on the pivots' own counts).

    Returns
    -------
    leverage : ndarray of shape (n,)
        :math:`l_i \in (0, 1)` (lazy on Dask).
    pivots : ndarray of int
        The pivot rows.
    search : {"exact", "approximate"} or None
        How the near field found each row's neighbours; None where it conditioned on none (the
        tail integral, or no residual left).

    Raises
    ------
    ValueError
        Where X's distances in the kernel's units leave float64 kernel values
        (:func:`~spectral_leverage._validation.check_kernel_range`, in memory): scikit-learn's
        general-ν Matérn gives ``inf * 0 = NaN`` there, which no eigensolver survives.
    """
    spec.check_inputs(X)  # kernel values on X must fit float64: a clear refusal, not NaN in eigh
    backend = backend_for(X)
    n = X.shape[0]
    gamma = n * reg
    # the budget in quarters: the m x m matrices (about eight with temporaries), the pivot
    # subsample's factor and block of columns, their kernel blocks, and each pass's row blocks
    quarter = memory_budget / 4
    drawn = pivots if pivots is not None else subsample_pivots(
        X, kernel, reg, max_pivots=max_pivots, max_samples=max_samples, memory_budget=memory_budget, rng=rng,
        take=backend.take)
    pivots, pivot_rows = drawn.pivots, drawn.rows
    root = inverse_sqrt(kernel(pivot_rows))
    per_row = KERNEL_BYTES_PER_ENTRY * len(pivots) + 16.0 * root.shape[1]
    # a near block's (k+1)^2 pairwise gaps and matrices fit a quarter of the budget at least once per
    # thread
    k_budget = int(np.sqrt(quarter / max_threads() / (8.0 * (X.shape[1] + 12)))) - 1
    k = max(0, min(n_neighbors, n - 1, k_budget))

    # far field: residual diagonal r and precision A = I + sum_j f_j f_j^T / (r_j + gamma), the
    # residual's ridge degrees of freedom sum_j r_j / (r_j + gamma) with it; in memory, the factor
    # rows F of all rows are kept for the near field where they fit a quarter (n = 16 000 in 8-D:
    # about two thirds of the factor rows' time saved), rotated into A's eigenbasis once
    single = gamma >= SINGLE_GAMMA * float(np.max(kernel.diag(pivot_rows)))
    kept = _kept_rows(n, root.shape[1], single, quarter) if backend.in_memory and k else None
    factor = Factor(kernel, pivot_rows, root)
    precision, left = backend.sum_blocks(far_field, X, start=(np.eye(root.shape[1]), 0.0),
                                         args=(backend.share(factor), gamma, per_row, quarter, verbose, kept))
    values, vectors = scipy.linalg.eigh(precision)  # A = V diag(values) V^T, values >= 1
    # the factor's ridge degrees of freedom, rank - tr(A^-1), and the residual's taken as unlearned
    captured = root.shape[1] - np.sum(1.0 / values)
    logger.info("full-scale leverage: %d pivots (rank %d), %d neighbours; ridge degrees of freedom "
                "%.4g in the factor, %.4g in the residual", len(pivots), root.shape[1], k, captured, left)
    if kept is not None:
        for rows in row_chunks(n, 8.0 * root.shape[1], quarter):
            kept[rows] = kept[rows] @ vectors

    near_field = NearField(spec, factor.rotated(vectors), 1.0 / np.sqrt(values), gamma, kept, single)
    if k and left > 0:
        # per thread, of its share of a quarter of the budget: half for the rows handed over (the
        # query's distances and ids and their copies, six of k + 1 a row, and its near block's points
        # twice: handed over, then gathered by parts), half for the factor rows of the distinct rows
        # they reach (counted: sharing_runs), and the whole share again for a group's block ((u, rank)
        # factor rows three times and about six u x u matrices), or for a batch of blocks (within half
        # of it: _conditional._batches)
        share = quarter / max_threads()
        block_rows = int(min(BLOCK_NEAR_BLOCKS * (k + 1), np.sqrt(share / 64.0),
                             share / (32.0 * root.shape[1])))
        groups = AnchorGroups(group_anchors(drawn, n), spec.rescale)
        approximate = backend.in_memory and resolve_search(neighbor_search, n, dim)
        search = "approximate" if approximate else "exact"
        leverage = backend.map_near(near_leverage, X, k, spec.rescale, groups, backend.share(near_field),
                                    GROUP_ROWS, max(block_rows, k + 1), min(share / 2, MAX_BLOCK_BYTES),
                                    bytes_per_row=(k + 1) * 8.0 * (2 * X.shape[1] + 6), memory_budget=quarter,
                                    approximate=approximate, rng=rng, verbose=verbose,
                                    desc="full-scale near field")
    else:  # with no residual (every row resolved by the pivots) there is no tail to learn
        search = None
        tail = TailVariance(spec.unit, reg, dim, tuple(float(v) for v in backend.compute(
            density.min(), density.max()))) if left > 0 else unlearned
        leverage = backend.map_rows(tail_leverage, X, density[:, None], backend.share((near_field, tail)),
                                    per_row, quarter, verbose)
        if warn_tail:
            _warn_if_tail_in_high_dimension(captured, left, dim)
    return leverage, pivots, search


def _kept_rows(n: int, rank: int, single: bool, budget: float) -> np.ndarray | None:
    """An empty (n, rank) array for the factor rows of all rows where it fits ``budget``, in float32
    if ``single`` (:data:`SINGLE_GAMMA`); None where it does not fit."""
    dtype = np.float32 if single else np.float64
    return np.empty((n, rank), dtype=dtype) if np.dtype(dtype).itemsize * n * rank <= budget else None


def _warn_if_tail_in_high_dimension(captured: float, left: float, dim: float) -> None:
    """Warn where the pivots leave more than :data:`~.plan.HIGH_DIM_TAIL_SHARE` of the ridge degrees of
    freedom (the residual's, counted as unlearned) to the tail integral in :data:`~.plan.HIGH_DIM` or more
    dimensions: there its kernel density estimate learns too much of the residual, and the scores
    fall short of exact ones by about 0.8 times that share."""
    if tail_too_large(captured, left, dim):
        warnings.warn(
            f"the pivots leave {tail_share(captured, left):.0%} of the ridge degrees of freedom to the "
            f"tail integral, which reads a kernel density estimate in d' = {dim:.3g} dimensions; there "
            "the scores have "
            "measured short of exact ones by about 0.8 times that share (standard normal rows, n = 4000, "
            "RBF at length_scale sqrt(d): 0.90x the exact effective dimension at 18 % in d = 8, 0.71x at "
            "41 % in d = 12, 0.66x at 42 % in d = 20; the lowest rows 0.5x). Check a subsample against "
            "exact_leverage, or use leverage_scores(..., method='bless').", UserWarning, stacklevel=2)

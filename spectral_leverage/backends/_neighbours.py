"""Each row with its k nearest other rows: the near blocks of the full-scale leverage, found the same
way on every backend.

A query returns the k + 1 nearest rows (the row itself among them, unless k other rows lie at
distance zero); :func:`self_first` puts the row in front and keeps k others. In memory one index
serves all of X (:class:`NeighbourIndex`); on a Dask array one query runs per cell of space, over the
cell's rows and the halo rows its neighbouring cells lend it (:mod:`~spectral_leverage.backends._cells`).

**Exact or approximate.** A k-d tree (pykdtree) finds the exact neighbours, but its cost climbs
steeply with the dimension: 33 neighbours of each of 10^6 standard normal rows in 8-D take about
330 CPU s (queried in the near field's order; 397 s for 10^5 rows in 16-D). With faiss installed
(``pip install "spectral-leverage[ann]"``) the in-memory near field can take approximate neighbours
from inverted lists instead (faiss's ``IndexIVFFlat``: the rows
assigned to their nearest of n / :data:`LIST_ROWS` centres, every query scanning the lists of its
:data:`PROBES` nearest centres). The centres are rows drawn by the caller's random state, and the
lists are filled and scanned in an order that does not depend on the thread count, so the
neighbours are determined by ``random_state`` (for one faiss build and CPU: float32 rounding
can order near-ties differently elsewhere). ``"auto"`` (:func:`resolve_search`) takes them
where the tree is slower (:func:`approximate_from`: from 25 000 rows in 8 dimensions, 150 000 in 7;
past about 13 dimensions at every n); recall and the scores' change are in docs/performance.md.
Recall falls with the dimension at a fixed list count (0.92 at 10^5 rows in 16-D); the scores'
change has been measured up to 8-D only.
"""

from __future__ import annotations

import importlib
import logging
import threading
import warnings
from functools import cache

import numpy as np
from pykdtree.kdtree import KDTree

from .._blocks import max_threads, openmp_at_most, rescan_openmp, row_chunks

__all__ = ["NeighbourIndex", "approximate_from", "faiss_module", "label_blocks", "nearest_in",
           "resolve_search", "self_first", "whole_groups"]

logger = logging.getLogger(__name__)

#: Rows per inverted list of the approximate index (about; n / LIST_ROWS centres) ...
LIST_ROWS = 128
#: ... and lists scanned per query (about PROBES * LIST_ROWS candidates): 33 neighbours of each of
#: 10^6 standard normal rows in 8-D, recall 0.942 / 0.969 / 0.989 at 24 / 32 / 48 lists, 53 / 62 /
#: 78 CPU s of queries (the quantizer's accuracy does not matter: efSearch 64 to 256 changed the
#: recall by under 0.001); benchmarks/neighbours.py for the rest.
PROBES = 48
#: ``neighbor_search="auto"`` takes the approximate index, where faiss is installed, from this many
#: rows in 7 dimensions, :data:`PER_DIMENSION` times fewer for each dimension more (and more for each
#: one less): where the two cost about the same. CPU s for 33 neighbours of every row, standard
#: normal rows (benchmarks/results_neighbours.jsonl), k-d tree against lists: 6-D 2.6 / 5.9 at 10^5
#: rows, 68 / 63 at 10^6; 7-D 5.2 / 6.1, 147 / 65; 8-D 10.3 / 6.0, 329 / 65. The tree's cost grows
#: as about n^1.45 there, the lists' as n^1.04, so they cross near 3.1e4 rows in 8-D, 1.45e5 in 7-D
#: and 8e5 in 6-D.
APPROXIMATE_ROWS = 150_000
PER_DIMENSION = 6.0
#: The options of ``neighbor_search``.
SEARCHES = ("auto", "exact", "approximate")
_INSTALL = 'pip install "spectral-leverage[ann]" (faiss-cpu)'


@cache
def faiss_module():
    """faiss, imported on first use (an optional dependency), or None where it is not installed.
    Its OpenMP runtime then joins those :func:`~spectral_leverage._blocks.openmp_at_most` limits."""
    try:
        faiss = importlib.import_module("faiss")
    except ImportError:
        return None
    rescan_openmp()
    return faiss


def approximate_from(dim: float) -> float:
    """Rows from which ``neighbor_search="auto"`` takes approximate neighbours in (intrinsic)
    dimension ``dim``: :data:`APPROXIMATE_ROWS` at 7, a factor :data:`PER_DIMENSION` a dimension.

    Examples
    --------
    >>> approximate_from(8), approximate_from(7), approximate_from(6)
    (25000.0, 150000.0, 900000.0)
    """
    return APPROXIMATE_ROWS * PER_DIMENSION ** (7 - dim)


def resolve_search(search: str, n: int, dim: float) -> bool:
    """Whether the near field's neighbours are approximate.

    Parameters
    ----------
    search : {"auto", "exact", "approximate"}
        ``neighbor_search``: "auto" approximate from :func:`approximate_from` rows where faiss is
        installed (else exact, with an INFO log naming the extra), "approximate" always, "exact"
        never.
    n : int
        Rows.
    dim : float
        Their (intrinsic) dimension.

    Returns
    -------
    bool
        The choice, logged at INFO level.

    Raises
    ------
    ValueError
        For any other ``search``.
    ImportError
        For "approximate" without faiss, naming the extra.

    Examples
    --------
    >>> resolve_search("exact", 10**6, 8), resolve_search("auto", 10**4, 8)
    (False, False)
    """
    if search not in SEARCHES:
        raise ValueError(f"neighbor_search must be one of {SEARCHES}, got {search!r}.")
    if search == "exact" or (search == "auto" and n < approximate_from(dim)):
        return False
    if faiss_module() is not None:
        logger.info("approximate neighbours for %d rows in %.3g dimensions (faiss's inverted lists)", n, dim)
        return True
    if search == "approximate":
        raise ImportError(f"neighbor_search='approximate' needs faiss: {_INSTALL}, or pass "
                          "neighbor_search='exact'.")
    logger.info("exact neighbours for %d rows in %.3g dimensions (a k-d tree; approximate ones are faster "
                "here: %s)", n, dim, _INSTALL)
    return False


class NeighbourIndex:
    """The k nearest rows of Z to query rows: exact (a pykdtree k-d tree) or approximate (faiss's
    inverted lists; module docstring).

    The lists hold the rows in float32, centred on their mean first so that an offset common to all
    rows costs no precision; where that float32 copy is not finite (spreads beyond 1e38) the index
    is the exact tree, with a warning.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        The rows, in the coordinates distances are taken in.
    approximate : bool
        Inverted lists (faiss) instead of the k-d tree.
    rng : numpy.random.Generator or None, default=None
        Draws the lists' centres (needed if ``approximate``).
    """

    def __init__(self, Z: np.ndarray, approximate: bool, rng: np.random.Generator | None = None):
        if approximate and rng is None:
            raise ValueError("approximate neighbours need rng, a numpy Generator (the caller's random "
                             "state), to draw the lists' centres.")
        self._Z, self._tree, self._lists, self._lock = Z, None, None, threading.Lock()
        if approximate:
            self._shift = Z.mean(axis=0)
            with np.errstate(over="ignore"):  # checked below
                rows = np.asarray(Z - self._shift, dtype=np.float32)
            if np.all(np.isfinite(rows)):
                self._lists = _inverted_lists(faiss_module(), rows, rng)
            else:
                warnings.warn("the rows' spread passes float32's range, which faiss's lists need: exact "
                              "neighbours instead", RuntimeWarning, stacklevel=2)

    def query(self, Q: np.ndarray, k: int) -> np.ndarray:
        """The k nearest rows of Z to each row of Q; called inside the worker threads, which hold
        OpenMP to one thread each (faiss's searches are safe to run side by side).

        Parameters
        ----------
        Q : ndarray of shape (b, d)
        k : int
            At most n.

        Returns
        -------
        ndarray of shape (b, k), intp
            Row indices of Z, nearest first. Approximate: rows whose probed lists hold fewer than
            k rows (rare) are answered by the exact tree.
        """
        if self._lists is None:
            return self._exact(Q, k)
        found = self._lists.search(np.asarray(Q - self._shift, dtype=np.float32), k)[1].astype(np.intp)
        short = np.flatnonzero((found < 0).any(axis=1))
        if len(short):
            found[short] = self._exact(Q[short], k)
        return found

    def _exact(self, Q: np.ndarray, k: int) -> np.ndarray:
        """The exact k nearest rows, from the k-d tree (built on first use, once)."""
        with self._lock:
            if self._tree is None:
                self._tree = KDTree(self._Z)
        _, found = self._tree.query(Q, k=k)
        return found.astype(np.intp).reshape(Q.shape[0], k)


def _inverted_lists(faiss, rows: np.ndarray, rng: np.random.Generator):
    """faiss's ``IndexIVFFlat`` over ``rows`` (float32): n / :data:`LIST_ROWS` centres drawn
    from the rows without replacement, found by a small HNSW graph (built on one thread, so the same
    graph whatever the thread count; :data:`PROBES` of them per query), every row in the list of its
    nearest centre."""
    n, d = rows.shape
    n_lists = max(1, n // LIST_ROWS)
    centres = np.ascontiguousarray(rows[np.sort(rng.choice(n, n_lists, replace=False))])
    quantizer = faiss.IndexHNSWFlat(d, 16)
    quantizer.hnsw.efConstruction = 40
    with openmp_at_most(1):
        quantizer.add(centres)
    lists = faiss.IndexIVFFlat(quantizer, d, n_lists)
    # each row's nearest centre, then each query's PROBES nearest: the graph's search breadth need
    # not exceed either (10^6 rows in 8-D: breadth 16 against 96 to fill the lists, 6 against 26
    # CPU s, and PROBES against twice that for the queries, 0.88x their time, recall 0.9875 against
    # 0.9895)
    quantizer.hnsw.efSearch = 16
    with openmp_at_most(max_threads()):
        lists.add(rows)
    quantizer.hnsw.efSearch = lists.nprobe = min(PROBES, n_lists)
    return lists


def nearest_in(query: np.ndarray, data: np.ndarray, k: int, rescale) -> tuple:
    """(distances (b, k'), indices in ``data`` (b, k'), the rows (b, k', d)) of the k' = min(k, len(data))
    rows of ``data`` nearest to each row of ``query``, in the coordinates
    ``rescale(.)``, nearest first."""
    k = min(k, data.shape[0])
    distance, found = KDTree(rescale(data)).query(rescale(query), k=k)  # exact: a cell's rows are few
    found = found.astype(np.intp).reshape(query.shape[0], k)
    return distance.reshape(query.shape[0], k), found, data[found]


def self_first(found: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """(b, k) mask of the columns of ``found`` (b, k+1 ids of the nearest rows of each of ``rows``)
    that are its k neighbours: the row itself dropped where the query returned it (not always first
    among duplicates), else the farthest."""
    is_self = found == rows[:, None]
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), k)
    keep = np.ones_like(found, dtype=bool)
    keep[np.arange(len(rows)), drop] = False
    return keep


def whole_groups(labels: np.ndarray, blocks):
    """The slices ``blocks`` (consecutive, covering the sorted ``labels``) with each end moved on to
    the next change of label, so that no label is split between two slices (empty ones dropped)."""
    change = np.append(np.flatnonzero(labels[1:] != labels[:-1]) + 1, len(labels))
    start = 0
    for block in blocks:
        stop = int(change[np.searchsorted(change, block.stop)])
        if stop > start:
            yield slice(start, stop)
            start = stop


def label_blocks(labels: np.ndarray, ids: np.ndarray, bytes_per_row: float, budget: float) -> list:
    """Positions of the rows of ``labels``, ordered by label and then by row id ``ids``, in blocks of
    whole labels (:func:`whole_groups`) of about ``bytes_per_row`` each within ``budget``: the same
    blocks on every backend for the same rows."""
    order = np.lexsort((ids, labels))
    chunks = row_chunks(len(labels), bytes_per_row, budget)
    return [order[part] for part in whole_groups(labels[order], chunks)]

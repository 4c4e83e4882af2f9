r"""``NystromKRRCV(n_centers="auto")``: the number of centres read off the cross-validated error curve.

Nyström KRR's error falls as centres are added, ever more slowly, while scoring m centres over n
rows costs :math:`O(n m^2)`. So m is doubled from :data:`FIRST_CENTERS` (:func:`center_sizes`) and
the length scales race as in successive halving (Jamieson & Talwalkar, 2016, with m as the
resource): after the round at the r-th size (r = 0, 1, …) only the best :math:`\lceil L / 2^r \rceil`
of the L length scales grow further, ranked by their best criterion over the λ path times the
factor by which the last doubling lowered it (the criterion one doubling ahead, if it falls as it
just did: short length scales start behind and catch up). A length
scale stops, and takes no place in the race, when doubling its centres lowered its criterion's
square root (a cross-validated root mean squared error) by less than the fraction ``tol``, or
when it cannot catch up: falling by that factor at every doubling left up to the last size, it
would still stay above the best criterion found so far (optimistic, since the gains shrink as m
grows). Growth ends there, at the last size (n, every row a centre; or the most centres ``memory_budget``
allows), or before a round that would end past ``time_budget`` seconds (:data:`TIME_BUDGET` by
default); a warning says when a budget stopped a length scale that was still improving.

The cost is that of the last rounds. A pass costs about 4 × the last at each doubling (O(n m²)).
With L = 8 (``NystromKRRCV``'s default: two kernels × four ℓ) the rounds score 8, 8, 4, 2, 1, 1, …
length scales. The rounds before the last then cost about half a pass at the last size when the
curve runs from 256 to 8192 centres, and 2.6 passes when it stops at 2048.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable

import numpy as np

from .._blocks import progress

__all__ = ["FIRST_CENTERS", "TIME_BUDGET", "center_sizes", "grow_centers"]

#: the first size of the curve (doubled from there)
FIRST_CENTERS = 256
#: ``NystromKRRCV``'s default ``time_budget``, in seconds: nine minutes, so that a fit ends within
#: ten where a round runs longer than expected (the expected time of the next round was 10 % low at
#: 10⁶ rows: 211 s for a round that took 232 s). It binds from about 10⁵ rows: at 10⁶ rows on two
#: cores the curve ran 490 s (d = 3) and 484 s (d = 8) under it, where it ran 660 s and past 700 s
#: without (docs/notes/centres.md). Where it binds the fit depends on the machine's speed; None
#: removes the budget.
TIME_BUDGET = 540.0


def center_sizes(last: int, first: int = FIRST_CENTERS) -> list[int]:
    """The curve's sizes: ``first``, doubled while below ``last``, then ``last`` (``[last]`` when
    ``last <= first``)."""
    sizes = [min(first, last)]
    while sizes[-1] < last:
        sizes.append(min(2 * sizes[-1], last))
    return sizes


def grow_centers(score: Callable[[int, int], dict], n_scales: int, sizes: list[int], *, tol: float,
                 time_budget: float | None = None, capped: bool = False,
                 verbose: bool = False) -> list[dict]:
    """Every pass of the race: ``score(i, m)`` for length scale i at m centres.

    Parameters
    ----------
    score : callable
        ``score(i, m)`` returns a dict whose ``"error"`` is the criterion (a mean squared error)
        at every λ of the path, for length scale ``i`` on ``m`` centres.
    n_scales : int
        L, the number of length scales.
    sizes : list of int
        The sizes in order (:func:`center_sizes`; one size scores every length scale once).
    tol : float in [0, 1)
        A length scale stops growing when doubling lowered the square root of its best criterion by
        less than this fraction (or when it cannot catch up with the best: the module's text).
    time_budget : float or None
        Seconds of wall time: a round does not start when the time so far plus its own expected
        time would pass it: the last round's time per length scale, times the length scales left,
        times the growth per doubling of m seen between the last two rounds (at least 2, as the
        kernel blocks' O(n m), at most 4, as the normal equations' O(n m²); 4 after the first).
    capped : bool
        Whether the last size is ``memory_budget``'s cap (rather than n): growth that ends there
        while improving is reported.
    verbose : bool
        A progress bar (stderr) over each round's length scales.

    Returns
    -------
    list of dict
        The dicts of ``score``, each with ``scale`` (i) and ``size`` (m) added, in the order scored.
    """
    start = time.perf_counter()
    passes, alive, previous, last_pass, best = [], list(range(n_scales)), {}, None, np.inf
    for r, m in enumerate(sizes):
        began = time.perf_counter()
        scored = [dict(score(i, m), scale=i, size=m)
                  for i in progress(alive, verbose=verbose, desc=f"NystromKRRCV length scales at {m} centres",
                                    unit="ℓ")]
        took = time.perf_counter() - began
        passes += scored
        errors = {p["scale"]: float(np.min(p["error"])) for p in scored}
        best = min(best, *errors.values())
        left = math.log2(sizes[-1] / m)  # doublings up to the last size
        improving = [i for i in errors if i not in previous or (
            errors[i] < (1.0 - tol) ** 2 * previous[i]  # gains tol, and can catch up with the best:
            and _outlook(errors[i], previous[i], left) <= best)]
        improving.sort(key=lambda i: _outlook(errors[i], previous.get(i)))
        alive = improving[: math.ceil(n_scales / 2**r)]  # a flat curve takes no place in the race
        previous.update(errors)
        if not alive or r == len(sizes) - 1:
            break
        per_pass, growth = took / len(scored), 4.0
        if last_pass is not None:  # the cost's growth per doubling so far, between m and m²
            growth = float(np.clip(per_pass / last_pass, 2.0, 4.0))
        last_pass = per_pass
        next_round = per_pass * growth ** np.log2(sizes[r + 1] / m) * len(alive)
        if time_budget is not None and time.perf_counter() - start + next_round > time_budget:
            _stopped(f"the next round (about {next_round:.0f} s) would pass time_budget={time_budget:g} s",
                     m, "raise time_budget", measured=r > 0)
            return passes
    if alive and capped:
        _stopped("memory_budget allows no more", sizes[-1], "raise memory_budget", measured=len(sizes) > 1)
    return passes


def _outlook(error: float, previous: float | None, doublings: float = 1.0) -> float:
    """The criterion ``doublings`` doublings ahead if it falls by the same factor at each (``error``
    itself on the first size). One doubling ahead is the race's ranking: short length scales need
    more centres, so they start behind and gain more per doubling; ranked by the criterion alone
    they were dropped on CASP at 512 centres, where at 8192 they were the best
    (docs/notes/centres.md). Up to the last size, it says whether a length scale can catch up."""
    return error if previous is None or previous <= 0 else error * (error / previous) ** doublings


def _stopped(why: str, m: int, fix: str, measured: bool) -> None:
    """The warning of a budget that stopped the curve; ``measured``: after a doubling that gained
    at least the tolerance (else after the first size, where no gain was measured yet)."""
    state = "still improving by the tolerance" if measured else "before any doubling"
    # the frames up to the caller's fit: _stopped, grow_centers, NystromKRRCV.fit, use_n_jobs
    warnings.warn(f"n_centers='auto' stopped growing at {m} centres, {state}: {why}; {fix} for more "
                  "centres.", UserWarning, stacklevel=5)

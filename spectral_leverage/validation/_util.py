"""Helpers shared by the experiments: seeds, the regulariser rule, kernels, timing, progress."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from numbers import Integral

import numpy as np
from sklearn.gaussian_process.kernels import Matern
from tqdm.auto import tqdm

from .._validation import check_random_state

#: Exponent of the default regulariser rule reg = n ** REG_EXPONENT (as in the demo and benchmarks).
REG_EXPONENT = -0.75


def base_seed(random_state) -> int:
    """An int seed from an int (returned as is), a numpy Generator or None (drawn from it)."""
    if isinstance(random_state, Integral):
        return int(random_state)
    return int(check_random_state(random_state).integers(2**31 - 1))


def replicate_seeds(random_state, experiment: str, n_replicates: int) -> list[int]:
    """``n_replicates`` int seeds for one experiment, a function of (``random_state``, ``experiment``)."""
    tag = zlib.crc32(experiment.encode())
    rng = np.random.default_rng([base_seed(random_state), tag])
    return [int(s) for s in rng.integers(2**31 - 1, size=n_replicates)]


def check_names(names, known, what: str) -> list[str]:
    """``names`` as a list; ``ValueError`` naming the first one not in ``known``."""
    names = list(names)
    for name in names:
        if name not in known:
            raise ValueError(f"unknown {what} {name!r}; choose one of {sorted(known)}.")
    return names


def regulariser(n: int, reg: float | None) -> float:
    """``reg`` if given, else the default rule n^(-3/4)."""
    return float(n**REG_EXPONENT) if reg is None else float(reg)


def reg_rule(reg: float | None) -> str:
    """How the regulariser was chosen, for the results and the report."""
    return f"n^({REG_EXPONENT})" if reg is None else f"{reg:g}"


def matern(length_scale: float, nu: float) -> Matern:
    """The Matérn kernel of every experiment."""
    return Matern(length_scale=length_scale, nu=nu)


def timed(function: Callable, *args, **kwargs) -> tuple[object, float]:
    """``(function(*args, **kwargs), seconds)``."""
    start = time.perf_counter()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - start


def progress_bar(total: int, desc: str, progress: bool):
    """A tqdm bar over an experiment's tasks; silent unless ``progress``."""
    return tqdm(total=total, desc=desc, unit="task", disable=not progress, leave=True)

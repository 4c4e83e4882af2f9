"""The data sets of the accuracy table: built-in synthetic designs and CSV files.

A CSV file has one header row and numeric columns, the target last (it is dropped); its features
are standardised. Each replicate draws its data from its own seed: synthetic designs generate
``n`` fresh points, files larger than the exact-score limit are subsampled to it (with a logged
warning), smaller files are used whole.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..datasets import make_bimodal, make_embedded, make_sparse_mode
from ..io import InputError, read_table

__all__ = ["DESIGNS", "DataSet", "builtin_datasets", "csv_dataset", "design_rows", "shared_data_dir"]

logger = logging.getLogger(__name__)


@dataclass
class DataSet:
    """A data set of the accuracy table.

    Parameters
    ----------
    name : str
    description : str
    length_scale : float
        Kernel length scale used on it (0.5 on the synthetic designs, 1 on standardised files).
    generate : callable (n, rng) -> ndarray, optional
        A synthetic design.
    X : ndarray of shape (n, d), optional
        The standardised features of a file.

    Examples
    --------
    >>> data = DataSet("points", "a file", 1.0, X=np.arange(10.0).reshape(5, 2))
    >>> data.draw(3, seed=0).shape, data.draw(10, seed=0).shape
    ((3, 2), (5, 2))
    """

    name: str
    description: str
    length_scale: float
    generate: Callable[[int, np.random.Generator], np.ndarray] | None = field(default=None, repr=False)
    X: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_available(self) -> int | None:
        """Rows of the file (None for a synthetic design, which has any number).

        Examples
        --------
        >>> builtin_datasets()[0].n_available is None
        True
        """
        return None if self.X is None else self.X.shape[0]

    def draw(self, n: int, seed: int) -> np.ndarray:
        """``n`` points of the design, or a random subsample of ``n`` rows of the file (all rows if
        it has at most ``n``), from ``seed``.

        Examples
        --------
        >>> builtin_datasets()[0].draw(4, seed=0).shape
        (4, 3)
        """
        rng = np.random.default_rng(seed)
        if self.X is None:
            return self.generate(n, rng)
        if self.X.shape[0] <= n:
            return self.X
        return self.X[np.sort(rng.choice(self.X.shape[0], n, replace=False))]


#: The synthetic designs of the benchmarks and validation scripts (:func:`design_rows`).
DESIGNS = ("normal", "bimodal", "manifold")


def design_rows(design: str, n: int, d: int) -> np.ndarray:
    """n rows of a synthetic design in d dimensions, seed 0: ``"normal"`` standard normal rows,
    ``"bimodal"`` :func:`~spectral_leverage.datasets.make_bimodal`'s, ``"manifold"`` a 4-D cube
    embedded with noise 0.01 (:func:`~spectral_leverage.datasets.make_embedded`), standardised.

    Examples
    --------
    >>> design_rows("manifold", 500, 8).std(axis=0).round(6).tolist() == [1.0] * 8
    True
    """
    if design == "normal":
        return np.random.default_rng(0).normal(size=(n, d))
    if design == "bimodal":
        return make_bimodal(n, d, random_state=0)
    if design == "manifold":
        X = make_embedded(n, d, n_latent=4, random_state=0)
        return (X - X.mean(axis=0)) / X.std(axis=0)
    raise ValueError(f"design must be one of {DESIGNS}, got {design!r}.")


def builtin_datasets() -> list[DataSet]:
    """The built-in synthetic designs of the accuracy table (3-D bimodal and sparse mode).

    Examples
    --------
    >>> [data.name for data in builtin_datasets()]
    ['bimodal-3d', 'sparse-mode-3d']
    """
    return [
        DataSet("bimodal-3d", "0.9 U[0,1]^3 + 0.1 N(1.5, 0.05^2 I)", 0.5,
                generate=lambda n, rng: make_bimodal(n, 3, random_state=rng)),
        DataSet("sparse-mode-3d", "0.97 U[0,1]^3 + 0.03 U[2,3]^3", 0.5,
                generate=lambda n, rng: make_sparse_mode(n, random_state=rng)),
    ]


def csv_dataset(path, *, length_scale: float = 1.0) -> DataSet:
    """A CSV file (header row, numeric columns, target last) as a :class:`DataSet` of standardised
    features; unreadable files raise :class:`~spectral_leverage.io.InputError`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "toy.csv"
    >>> _ = path.write_text("a,b,y\\n1,2,0\\n2,4,1\\n3,5,0\\n")
    >>> data = csv_dataset(path)
    >>> data.name, data.X.shape, bool(np.allclose(data.X.mean(axis=0), 0))
    ('toy', (3, 2), True)
    """
    X = read_table(str(path), drop_target=True)
    if X.shape[0] < 3:
        raise InputError(f"{path}: need at least 3 rows, got {X.shape[0]}")
    scale = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
    return DataSet(Path(path).stem, f"{Path(path).name}: {X.shape[0]} rows, {X.shape[1]} standardised "
                   "features", length_scale, X=X)


def shared_data_dir() -> Path | None:
    """``shared/data`` beside the project root, if present: the root is the checkout holding this
    package (an editable install) or, for an installed copy, the current directory.

    Examples
    --------
    >>> shared_data_dir() is None or shared_data_dir().is_dir()
    True
    """
    for root in (Path(__file__).resolve().parents[2], Path.cwd()):
        folder = root.parent / "shared" / "data"
        if folder.is_dir():
            return folder
    return None

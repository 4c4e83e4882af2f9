"""Nyström centres drawn by ridge leverage sampling, for the package's estimators and for others."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import clone

from .._validation import check_data, check_positive, check_random_state, check_samples
from ..backends import backend_for
from ..kernels import parse_kernel
from ..samplers import make_sampler
from ..spectral import SpectralLeverage

__all__ = ["draw_centers", "sample_centers"]


def draw_centers(X, n_centers: int, sampler, *, kernel, reg: float, rng,
                 name: str = "n_centers", replace: bool = True) -> np.ndarray:
    """Unique sorted indices of leverage-sampled centres of the validated X (NumPy or Dask; all
    rows when n_centers >= n): ``n_centers`` draws, de-duplicated, or with ``replace=False``
    exactly ``n_centers`` distinct rows. On Dask only the spectral sampler runs where the data are."""
    n = X.shape[0]
    if n_centers >= n:
        if n_centers > n:
            warnings.warn(
                f"{name}={n_centers} is larger than the number of samples n={n}: using n, i.e. "
                "every point as a centre.",
                UserWarning,
                stacklevel=3,
            )
        return np.arange(n)
    if not (sampler == "spectral" if isinstance(sampler, str) else isinstance(sampler, SpectralLeverage)):
        backend_for(X).require_in_memory(f"sampler={sampler!r}",
                                         "use sampler='spectral' or a SpectralLeverage")
    seed = int(rng.integers(2**31 - 1))
    obj = make_sampler(sampler, kernel=kernel, reg=reg, random_state=seed)
    probabilities = getattr(obj, "probabilities_", None)
    fitted = (
        probabilities is not None
        and np.shape(probabilities) == (n,)
        and getattr(obj, "n_features_in_", X.shape[1]) == X.shape[1]
    )
    if not fitted:
        if not isinstance(sampler, str):
            obj = clone(obj)
        obj.fit(X)
    indices = np.asarray(obj.sample(n_centers, replace=replace, random_state=rng), dtype=np.intp)
    return np.unique(indices)


def sample_centers(X, n_centers: int, *, kernel, reg: float, method="spectral",
                   replace: bool = True, random_state=None) -> np.ndarray:
    r"""Nyström centres drawn by ridge leverage sampling: unique, sorted row indices of X.

    ``n_centers`` indices are drawn with probabilities proportional to the rescaled ridge leverage
    scores :math:`n\,l_i`, :math:`l_i = [K(K + n\lambda I)^{-1}]_{ii}` (``reg`` :math:`= \lambda`):
    with replacement (the i.i.d. scheme of the Nyström theory) and de-duplicated, which warns when
    fewer than ``n_centers`` distinct indices come back, or without replacement, which returns
    exactly ``n_centers``. ``n_centers > n`` warns and returns every index.

    Parameters
    ----------
    X : array_like of shape (n, d)
        Finite inputs, n >= 2.
    n_centers : int
        Number of draws, >= 1.
    kernel : sklearn kernel
        ``Matern`` or ``RBF``, optionally times ``ConstantKernel``.
    reg : float
        :math:`\lambda > 0`.
    method : str or LeverageSampler, default="spectral"
        A name from :data:`spectral_leverage.SAMPLERS` or a sampler object (cloned and fitted on X
        unless already fitted on n points).
    replace : bool, default=True
        Draw with replacement (repeats of high-leverage rows are dropped, and a warning says how
        many distinct indices remain) or without (exactly ``n_centers`` distinct indices).
    random_state : int, numpy Generator or None

    Returns
    -------
    ndarray of int
        Unique indices in increasing order.

    Notes
    -----
    The indices can seed the fixed-centre (inducing point) selection of other libraries, e.g.
    ``X[idx]`` as the initial inducing points of a GPyTorch ``InducingPointKernel`` or
    ``VariationalStrategy(model, inducing_points=torch.as_tensor(X[idx]), ...)``, or as the centres
    of a Falkon model via its fixed selector
    (``falkon.center_selection.FixedSelector(centers=torch.as_tensor(X[idx]))``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> X = np.random.default_rng(0).uniform(size=(2000, 2))
    >>> idx = sample_centers(X, 50, kernel=Matern(0.5, nu=1.5), reg=1e-3, random_state=0)
    >>> bool(np.all(np.diff(idx) > 0)) and len(idx) <= 50
    True
    """
    X = check_data(X)
    n_centers = check_samples(n_centers, "n_centers")
    reg = check_positive(reg, "reg")
    parse_kernel(kernel).check_inputs(X)
    if not isinstance(replace, (bool, np.bool_)):
        raise TypeError(f"replace must be True or False, got {replace!r}.")
    indices = draw_centers(X, n_centers, method, kernel=kernel, reg=reg,
                           rng=check_random_state(random_state), replace=bool(replace))
    if indices.size < min(n_centers, X.shape[0]):
        warnings.warn(
            f"{n_centers} draws with replacement gave {indices.size} distinct indices (high-leverage "
            "rows drawn more than once); pass replace=False for exactly n_centers distinct indices.",
            UserWarning, stacklevel=2)
    return indices

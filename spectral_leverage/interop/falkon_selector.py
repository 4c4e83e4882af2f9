r"""Falkon's centre selection protocol (``falkon.center_selection.CenterSelector``) by ridge leverage.

Falkon (Meanti et al. 2020) is not on PyPI; this class follows the protocol its source defines
without importing it: ``select(X, Y)`` returns the centres, or (centres, their targets) when Y is
given; ``select_indices(X, Y)`` returns the same plus the row indices, a ``torch.long`` tensor on X's
device. ``Falkon.fit`` calls ``select(X, None)``, or ``select_indices(X, None)`` when it has a
``weight_fn`` (then reads ``X[indices]`` and ``Y[indices]``); ``LogisticFalkon.fit`` calls
``select(X, Y)``. Pass an instance as ``Falkon(..., center_selection=LeverageCenterSelector(...))``.

Falkon's ``penalty`` is the λ of this package: Falkon minimises
:math:`\frac1n\|y - K_{nM}\alpha\|^2 + \lambda\,\alpha^\top K_{MM}\alpha` with the preconditioner
:math:`\mathrm{chol}(T T^\top / M + \lambda I)`, :math:`T = \mathrm{chol}(K_{MM})`; so
``reg=penalty``. Its kernels map as ``GaussianKernel(sigma)`` = ``RBF(sigma)``,
``MaternKernel(sigma, nu)`` = ``Matern(sigma, nu)``, ``LaplacianKernel(sigma)`` =
``Matern(sigma, nu=0.5)`` (Euclidean distances in all three).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_data, check_positive, check_random_state, check_samples
from ..kernels import parse_kernel
from ..krr.centers import draw_centers

__all__ = ["LeverageCenterSelector"]


class LeverageCenterSelector:
    r"""Falkon ``CenterSelector``: ``num_centers`` distinct centres by ridge leverage.

    Each call scores the rows of X (``sampler``, by default :class:`~spectral_leverage.SpectralLeverage`)
    and draws ``num_centers`` distinct rows without replacement in proportion to the scores (as
    :class:`~spectral_leverage.LeverageNystroem`), the indices sorted. The centres keep X's dtype,
    device and memory order (a column-major X gives column-major centres, as Falkon's own selector).

    Parameters
    ----------
    kernel : sklearn kernel
        ``Matern``/``RBF`` equal to the Falkon kernel (module docstring: the dictionary).
    reg : float
        :math:`\lambda`, Falkon's ``penalty``.
    num_centers : int
        M, Falkon's ``M``; more than n warns and uses every row.
    sampler : str or LeverageSampler, default="spectral"
        A name of :data:`spectral_leverage.SAMPLERS` or a sampler object.
    random_gen : int, numpy Generator or None, default=None
        Seeds one generator, advanced by every call (as Falkon's selectors do).

    Examples
    --------
    >>> import torch
    >>> from sklearn.gaussian_process.kernels import RBF
    >>> X = torch.rand(500, 3, dtype=torch.float32)
    >>> selector = LeverageCenterSelector(RBF(0.5), 1e-4, num_centers=40, random_gen=0)
    >>> centres, indices = selector.select_indices(X, None)
    >>> centres.shape, centres.dtype, indices.dtype, bool(torch.equal(centres, X[indices]))
    (torch.Size([40, 3]), torch.float32, torch.int64, True)
    """

    def __init__(self, kernel, reg: float, num_centers: int, *, sampler="spectral", random_gen=None):
        parse_kernel(kernel)
        self.kernel = kernel
        self.reg = check_positive(reg, "reg")
        self.num_centers = check_samples(num_centers, "num_centers")
        self.sampler = sampler
        self.random_gen = check_random_state(random_gen)

    def select_indices(self, X, Y):
        """(centres, indices) for ``Y=None``, else (centres, target centres, indices).

        Parameters
        ----------
        X : torch.Tensor of shape (n, d)
            Dense, finite; sparse tensors are refused.
        Y : torch.Tensor of shape (n, t) or None

        Returns
        -------
        tuple of torch.Tensor
            Centres (M, d) and target centres (M, t) as X and Y; indices (M,) ``torch.long``.
        """
        import torch

        if not isinstance(X, torch.Tensor) or X.layout != torch.strided:
            raise TypeError(f"X must be a dense torch.Tensor (Falkon's input), got {type(X).__name__}.")
        if Y is not None and (not isinstance(Y, torch.Tensor) or Y.shape[0] != X.shape[0]):
            raise ValueError(f"Y must be None or a torch.Tensor with X's {X.shape[0]} rows.")
        values = check_data(X.detach().cpu().numpy())
        parse_kernel(self.kernel).check_inputs(values)
        rows = draw_centers(values, self.num_centers, self.sampler, kernel=self.kernel, reg=self.reg,
                            rng=self.random_gen, name="num_centers", replace=False)
        indices = torch.from_numpy(np.sort(rows).astype(np.int64)).to(X.device)
        centres = _take_rows(X, indices)
        if Y is None:
            return centres, indices
        return centres, _take_rows(Y, indices), indices

    def select(self, X, Y):
        """Centres for ``Y=None``, else (centres, target centres): :meth:`select_indices` without
        the indices."""
        out = self.select_indices(X, Y)
        return out[0] if Y is None else out[:2]


def _take_rows(A, indices):
    """Rows ``indices`` of the 2-D tensor A, column-major if A is (Falkon keeps its inputs' order)."""
    if A.dim() == 2 and A.shape[1] > 1 and A.t().is_contiguous():
        return A.t().index_select(1, indices).contiguous().t()
    return A.index_select(0, indices)

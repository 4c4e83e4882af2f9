"""LeverageCenterSelector driven exactly as Falkon drives a CenterSelector (falkon/models/falkon.py,
logistic_falkon.py): ``Falkon.fit`` calls ``select(X, None)``, or ``select_indices(X, None)`` when
it has a ``weight_fn`` and then indexes ``X`` and ``Y`` with the indices; ``LogisticFalkon.fit``
calls ``select(X, Y)``. X and Y are dense torch tensors (Y of shape (n, t)), float32 or float64,
C- or Fortran-ordered; the indices are a ``torch.long`` tensor."""

import numpy as np
import pytest
from sklearn.gaussian_process.kernels import RBF, Matern

from spectral_leverage.interop import LeverageCenterSelector
from spectral_leverage.krr.centers import draw_centers

torch = pytest.importorskip("torch")

KERNEL, REG = Matern(0.5, nu=1.5), 1e-4


def _data(dtype, n=800, fortran=False):
    g = torch.Generator().manual_seed(0)
    X = torch.rand(n, 3, generator=g, dtype=dtype)
    Y = torch.sin(4 * X[:, :1]) + 0.1 * torch.randn(n, 1, generator=g, dtype=dtype)
    if fortran:  # Falkon's inputs may be column-major
        X, Y = X.t().contiguous().t(), Y.t().contiguous().t()
    return X, Y


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fortran", [False, True])
def test_as_falkon_fit_calls_it(dtype, fortran):
    X, Y = _data(getattr(torch, dtype), fortran=fortran)
    selector = LeverageCenterSelector(KERNEL, REG, num_centers=60, random_gen=0)
    # Falkon.fit without weight_fn: centres only
    ny_points = selector.select(X, None)
    assert isinstance(ny_points, torch.Tensor) and ny_points.shape == (60, 3)
    assert ny_points.dtype == X.dtype and ny_points.device == X.device
    assert ny_points.t().is_contiguous() == fortran and ny_points.is_contiguous() != fortran
    # Falkon.fit with weight_fn: centres and indices, then Y[indices], X[indices]
    ny_points, ny_indices = selector.select_indices(X, None)
    assert ny_indices.dtype == torch.int64 and ny_indices.shape == (60,)
    assert torch.unique(ny_indices).numel() == 60 and bool(torch.all(ny_indices[1:] > ny_indices[:-1]))
    assert torch.equal(X[ny_indices], ny_points)
    assert Y[ny_indices].shape == (60, 1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_as_logistic_falkon_fit_calls_it(dtype):
    X, Y = _data(getattr(torch, dtype))
    Y = torch.where(Y > 0, 1.0, -1.0).to(X.dtype)
    selector = LeverageCenterSelector(KERNEL, REG, num_centers=40, random_gen=1)
    ny_X, ny_Y = selector.select(X, Y)
    assert ny_X.shape == (40, 3) and ny_Y.shape == (40, 1) and ny_Y.dtype == Y.dtype
    ny_X2, ny_Y2, idx = LeverageCenterSelector(KERNEL, REG, num_centers=40, random_gen=1).select_indices(X, Y)
    assert torch.equal(ny_X, ny_X2) and torch.equal(ny_Y, ny_Y2)
    assert torch.equal(X[idx], ny_X) and torch.equal(Y[idx], ny_Y)


def test_the_centres_are_leverage_draws_and_the_generator_advances():
    X, _ = _data(torch.float64)
    selector = LeverageCenterSelector(KERNEL, REG, num_centers=50, random_gen=np.random.default_rng(5))
    _, first = selector.select_indices(X, None)
    _, second = selector.select_indices(X, None)
    assert not torch.equal(first, second)  # one generator, advanced by every call
    rng = np.random.default_rng(5)
    expected = [draw_centers(X.numpy(), 50, "spectral", kernel=KERNEL, reg=REG, rng=rng, replace=False)
                for _ in range(2)]
    np.testing.assert_array_equal(first.numpy(), expected[0])
    np.testing.assert_array_equal(second.numpy(), expected[1])
    # another sampler by name, as NystromKRR takes them
    uniform = LeverageCenterSelector(KERNEL, REG, 50, sampler="uniform", random_gen=0)
    _, uniform = uniform.select_indices(X, None)
    assert torch.unique(uniform).numel() == 50


def test_more_centres_than_rows_warns_and_uses_all():
    X, _ = _data(torch.float32, n=30)
    with pytest.warns(UserWarning, match="num_centers=50 is larger than the number of samples n=30"):
        centres = LeverageCenterSelector(RBF(0.5), REG, 50).select(X, None)
    assert torch.equal(centres, X)


def test_bad_input_names_the_fix():
    X, Y = _data(torch.float64)
    selector = LeverageCenterSelector(KERNEL, REG, 10)
    with pytest.raises(TypeError, match=r"X must be a dense torch\.Tensor"):
        selector.select(X.numpy(), None)
    with pytest.raises(TypeError, match=r"X must be a dense torch\.Tensor"):
        selector.select(X.to_sparse(), None)
    with pytest.raises(ValueError, match=r"Y must be None or a torch\.Tensor with X's 800 rows"):
        selector.select(X, Y[:10])
    with pytest.raises(ValueError, match="NaN"):
        selector.select(torch.full((20, 3), float("nan")), None)
    with pytest.raises(ValueError, match="reg"):
        LeverageCenterSelector(KERNEL, -1.0, 10)
    with pytest.raises(ValueError, match="num_centers"):
        LeverageCenterSelector(KERNEL, REG, 0)
    with pytest.raises(TypeError, match="kernel must be"):
        LeverageCenterSelector("rbf", REG, 10)

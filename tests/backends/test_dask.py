"""The Dask path equals the in-memory path (same data, same seed) on a 2-worker LocalCluster."""

import logging
import re
import subprocess
import sys
import threading
import time

import dask
import numpy as np
import pytest
from sklearn.gaussian_process.kernels import RBF, Matern

from spectral_leverage import NystromKRR, SpectralLeverage
from spectral_leverage._blocks import N_THREADS, limit_threads, max_threads, on_all_cores
from spectral_leverage.datasets import make_bimodal

distributed = pytest.importorskip("dask.distributed")
da = pytest.importorskip("dask.array")
dask_backend = pytest.importorskip("spectral_leverage.backends.dask")

N, D, CHUNKS = 200_000, 3, 8
KERNEL = Matern(length_scale=0.5, nu=1.5)
REG = N**-0.75


@pytest.fixture(scope="module", autouse=True)
def float64_sums():
    """The in-memory fits keep the near field's factor rows in float64 here, as the cluster's blocks
    make them, and the tree KDE sums in float64, so that the backends' same lines are compared to
    rounding: float32 sums depend on how the rows are blocked (float32 kept rows move the scores by
    about 1e-5 at most, tests/spectral/test_full_scale.py; the float32 KDE about 1e-7,
    test_tree_scores_equal_in_single_precision). Module-wide, so that the module's fits see it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("spectral_leverage.spectral.full_scale.SINGLE_GAMMA", np.inf)
        patch.setattr("spectral_leverage.density.tree.TreeDensity.SINGLE_LOG_ERROR", 0.0)
        yield


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(size=N), rng.beta(2, 5, size=N), rng.normal(size=N)])
    y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * X[:, 2] + 0.1 * rng.normal(size=N)
    return X, y, da.from_array(X, chunks=(N // CHUNKS, D))


def _sampler(**kwargs):
    return SpectralLeverage(KERNEL, REG, random_state=0, **kwargs, algorithm="density")


@pytest.fixture(scope="module")
def fitted(client, data):
    """In memory and on Dask, the defaults (the binned KDE in 3-D)."""
    X, _, Xd = data
    return _sampler().fit(X), _sampler().fit(Xd)


@pytest.fixture(scope="module", params=[{"kde": "auto"}, {"kde": "tree"}, {"boundary": False}],
                ids=["binned", "tree", "binned-uncorrected"])
def fitted_by_kde(request, client, data):
    X, _, Xd = data
    return _sampler(**request.param).fit(X), _sampler(**request.param).fit(Xd)


def test_scores_equal(fitted_by_kde):
    local, dist = fitted_by_kde
    assert type(dist._model) is type(local._model)
    assert isinstance(dist.scores_, da.Array) and dist.scores_.numblocks == (CHUNKS,)
    assert dist.intrinsic_dim_ == local.intrinsic_dim_ == D
    for name in ("scores_", "leverage_", "probabilities_", "density_"):
        np.testing.assert_allclose(getattr(dist, name).compute(), getattr(local, name), rtol=1e-8,
                                   err_msg=name)
    assert isinstance(dist.effective_dimension_, float)
    assert dist.effective_dimension_ == pytest.approx(local.effective_dimension_, rel=1e-12)


def test_tree_scores_equal_in_single_precision(client, data, monkeypatch):
    """In float32 the tree KDE's sums depend on the row blocks (the cluster's chunks, the local
    fit's cache-sized ones): the scores agree within the float32 KDE's error bound,
    TreeDensity.SINGLE_LOG_ERROR in the log-density, which moves the scores by less (measured:
    2.6e-5 at most, at 5 of the 200 000 rows; 1e-7 at most where the rows are all evaluated
    directly)."""
    from spectral_leverage.density import TreeDensity

    monkeypatch.setattr(TreeDensity, "SINGLE_LOG_ERROR", 1e-4)
    X, _, Xd = data
    local, dist = _sampler(kde="tree").fit(X), _sampler(kde="tree").fit(Xd)
    assert local._model._dtype == dist._model._dtype == np.float32
    np.testing.assert_allclose(dist.scores_.compute(), local.scores_, rtol=TreeDensity.SINGLE_LOG_ERROR)
    assert dist.effective_dimension_ == pytest.approx(local.effective_dimension_, rel=1e-7)


def test_score_samples_equal(fitted_by_kde, data):
    local, dist = fitted_by_kde
    X = data[0]
    new = np.vstack([X[:50] + 0.01, X[:5] + 10.0])  # near the data, and beyond it
    np.testing.assert_allclose(dist.score_samples(new), local.score_samples(new), rtol=1e-10)


def test_sample_equal(fitted_by_kde):
    local, dist = fitted_by_kde
    np.testing.assert_array_equal(dist.sample(1000, random_state=3), local.sample(1000, random_state=3))
    with pytest.raises(ValueError, match="replace=False"):
        dist.sample(10, replace=False)


def test_knn_path_equal(client, data):
    X, _, Xd = data
    local = _sampler(intrinsic_dim=2.5).fit(X)
    dist = _sampler(intrinsic_dim=2.5).fit(Xd)
    assert type(dist._model).__name__ == "KNNDensity"
    np.testing.assert_allclose(dist.scores_.compute(), local.scores_, rtol=1e-8)


def test_far_rows_equal(client):
    # the binned KDE's far rows (issue 34): gathered in one more pass on Dask, the same sums
    rng = np.random.default_rng(7)
    X = np.vstack([rng.normal(size=(40_000, 3)), [[1e4, 0.0, 0.0], [0.0, -5e3, 0.0]]])
    local = _sampler().fit(X)
    dist = _sampler().fit(da.from_array(X, chunks=(10_001, 3)))
    assert local._model.has_far_rows_ and len(local._model._far) == len(dist._model._far) == 2
    np.testing.assert_allclose(dist.scores_.compute(), local.scores_, rtol=1e-8)


def test_estimated_intrinsic_dimension_equal(client):
    # a plane in R^3: "auto" finds d' ≈ 2 < 0.9·3 from the same anchor rows on both paths
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(40_000, 2)) @ np.array([[1.0, 0.5, 0.2], [0.0, 1.0, -0.4]])
    local = SpectralLeverage(KERNEL, REG, max_samples=4096, random_state=0, algorithm="density").fit(X)
    dist = SpectralLeverage(KERNEL, REG, max_samples=4096, random_state=0, algorithm="density").fit(
        da.from_array(X, chunks=(5000, 3)))
    assert type(dist._model).__name__ == "KNNDensity" and local.intrinsic_dim_ < 2.3
    assert dist.intrinsic_dim_ == local.intrinsic_dim_
    np.testing.assert_allclose(dist.scores_.compute(), local.scores_, rtol=1e-8)


def test_nystrom_equal(fitted, data):
    X, y, Xd = data
    local_sampler, dist_sampler = fitted  # fitted samplers are used as they are
    local = NystromKRR(KERNEL, REG, 200, sampler=local_sampler, random_state=1).fit(X, y)
    dist = NystromKRR(KERNEL, REG, 200, sampler=dist_sampler, random_state=1).fit(
        Xd, da.from_array(y, chunks=N // CHUNKS))
    np.testing.assert_array_equal(dist.center_indices_, local.center_indices_)
    np.testing.assert_allclose(dist.coef_, local.coef_, rtol=1e-6, atol=1e-8 * np.abs(local.coef_).max())
    predicted = dist.predict(Xd)
    assert isinstance(predicted, da.Array) and predicted.chunks == Xd.chunks[:1]
    np.testing.assert_allclose(predicted.compute(), local.predict(X), rtol=1e-8, atol=1e-12)
    # a model fitted in memory predicts lazily too, and NumPy targets are accepted
    np.testing.assert_allclose(local.predict(Xd[:1000]).compute(), local.predict(X[:1000]), rtol=1e-12)
    # an unfitted sampler is fitted on the Dask data inside fit: the same centres again
    small = dict(n_centers=50, sampler=_sampler(), random_state=1)
    two = NystromKRR(KERNEL, REG, **small).fit(Xd[:20_000], np.column_stack([y, -y])[:20_000])
    one = NystromKRR(KERNEL, REG, **small).fit(X[:20_000], y[:20_000])
    np.testing.assert_array_equal(two.center_indices_, one.center_indices_)
    np.testing.assert_allclose(two.predict(Xd[:100]).compute(), np.column_stack(
        [one.predict(X[:100]), -one.predict(X[:100])]), rtol=1e-8, atol=1e-12)


def _normal(n, d):
    return np.random.default_rng(d).normal(size=(n, d))


# the default (algorithm="auto") on each of its paths, 3-D and 8-D: (design, kernel, reg, path)
DEFAULTS = {
    # the density scores where the middle regime has more rows than dense pivots serve (32 768)
    "3d-density": (lambda: _normal(40_000, 3), Matern(1.0, nu=1.5), 40_000**-1.0, "density"),
    "3d-tail": (lambda: _normal(20_000, 3), Matern(2.0, nu=2.5), 20_000**-0.5, "tail"),
    "3d-neighbours": (lambda: _normal(8000, 3), Matern(0.2, nu=0.5), 8000**-1.0, "neighbours"),
    "3d-bimodal": (lambda: make_bimodal(20_000, 3, random_state=0), Matern(0.5, nu=1.5), 20_000**-0.75,
                   "tail"),  # the design of issue 37
    # (ℓ = 4: mean density leverage 0.042; at ℓ = 3 it reads 0.073, past the neighbours' 1/16, since
    # the tree KDE leaves a row's own anchor out)
    "8d-density": (lambda: _normal(40_000, 8), Matern(4.0, nu=1.5), 40_000**-1.0, "density"),
    "8d-tail": (lambda: _normal(8000, 8), RBF(4.0), 1e-3, "tail"),
    "8d-neighbours": (lambda: _normal(8000, 8), Matern(2.0, nu=1.5), 1e-3, "neighbours"),
}


def _default_fit(X, kernel, reg, caplog, **params) -> tuple[SpectralLeverage, str]:
    """The default fit and its path: the density scores, or the full-scale leverage with the tail
    integral (0 neighbours) or with neighbours, as the fit logs it."""
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="spectral_leverage.spectral.full_scale"):
        fitted = SpectralLeverage(kernel, reg, random_state=0, **params).fit(X)
    found = re.findall(r"full-scale leverage: \d+ pivots \(rank \d+\), (\d+) neighbours", caplog.text)
    if fitted.algorithm_ == "density":
        return fitted, "density"
    assert len(found) == 1, caplog.text
    return fitted, "tail" if found[0] == "0" else "neighbours"


@pytest.mark.parametrize("case", DEFAULTS)
def test_default_scores_equal_on_every_path(client, case, caplog):
    """Issue 37: the default on a cluster is the default in memory: the same path, the same scores
    to 1e-8 (the in-memory fit's blocks are summed in another order), the neighbours exact."""
    design, kernel, reg, path = DEFAULTS[case]
    X = design()
    local, local_path = _default_fit(X, kernel, reg, caplog)
    Xd = da.from_array(X, chunks=(len(X) // 5 + 1, X.shape[1]))
    dist, dist_path = _default_fit(Xd, kernel, reg, caplog)
    assert local_path == dist_path == path
    assert dist.algorithm_ == local.algorithm_
    assert dist.neighbor_search_ == local.neighbor_search_ == ("exact" if path == "neighbours" else None)
    assert isinstance(dist.scores_, da.Array) and dist.scores_.numblocks == (5,)
    np.testing.assert_allclose(dist.scores_.compute(), local.scores_, rtol=1e-8)
    np.testing.assert_array_equal(dist.sample(500, random_state=1), local.sample(500, random_state=1))


@pytest.mark.parametrize("anchor_rows", [None, 4], ids=["pivot-groups", "subsample-groups"])
def test_neighbours_over_several_cells_equal(client, caplog, monkeypatch, anchor_rows):
    """With a memory budget that splits the rows into several cells of space, the near blocks on Dask
    (each cell with the halo rows of its neighbouring cells) give the in-memory scores, the groups
    gathered around the pivots or (sparse pivots: 4 rows an anchor here) around subsample rows."""
    from spectral_leverage.backends import _cells
    from spectral_leverage.spectral import full_scale

    if anchor_rows is not None:
        monkeypatch.setattr(full_scale, "ANCHOR_ROWS", anchor_rows)
    made = []
    build = _cells.Cells.from_sample
    monkeypatch.setattr(_cells.Cells, "from_sample", lambda *a: made.append(build(*a)) or made[-1])
    X = _normal(4000, 3)
    kernel, reg, budget = Matern(0.2, nu=0.5), 4000**-1.0, 2**24
    local, local_path = _default_fit(X, kernel, reg, caplog, memory_budget=budget)
    dist, dist_path = _default_fit(da.from_array(X, chunks=(900, 3)), kernel, reg, caplog,
                                   memory_budget=budget)
    assert local_path == dist_path == "neighbours" and made[0].count >= 4
    np.testing.assert_allclose(dist.scores_.compute(), local.scores_, rtol=1e-8)


def test_forced_full_scale_equal(client, caplog):
    """algorithm="full-scale" runs on Dask too, inside the density formula's regime."""
    X, kernel, reg, _ = DEFAULTS["3d-density"]
    X = X()[:6000]
    local = SpectralLeverage(kernel, reg, algorithm="full-scale", random_state=0).fit(X)
    dist = SpectralLeverage(kernel, reg, algorithm="full-scale", random_state=0).fit(
        da.from_array(X, chunks=(1000, 3)))
    assert dist.algorithm_ == local.algorithm_ == "full-scale"
    np.testing.assert_allclose(dist.scores_.compute(), local.scores_, rtol=1e-8)


def test_near_blocks_without_the_downdate_equal(client):
    """The near field's route without the downdate (identical rows on a pivot at λ = 1e-10, where
    the downdate loses its digits) runs on Dask as in memory: the same lines, the same scores to the
    rounding this γ amplifies (the far field is summed over the chunks in another order: 4e-8)."""
    rng = np.random.default_rng(1)
    distinct = rng.normal(size=(200, 2))
    X = np.repeat(distinct, rng.integers(1, 8, size=200), axis=0)
    kernel = Matern(0.5, nu=1.5)
    local = SpectralLeverage(kernel, 1e-10, algorithm="full-scale", random_state=0).fit(X)
    dist = SpectralLeverage(kernel, 1e-10, algorithm="full-scale", random_state=0).fit(
        da.from_array(X, chunks=(200, 2)))
    scores = dist.scores_.compute()
    assert scores.min() > 1.0  # none at 1e-290
    np.testing.assert_allclose(scores, local.scores_, rtol=1e-6)


@pytest.mark.parametrize("case", ["3d-density", "3d-bimodal", "8d-neighbours"])
def test_default_nystrom_predictions_equal(client, case):
    """Issue 37: NystromKRR's default on Dask (``sampler="auto"`` is the spectral sampler there: its
    centres are drawn by the default spectral scores) predicts what the same sampler predicts in
    memory (with the density scores on Dask they differed by 2.2 % of the range). In memory the
    default is ``"adaptive-cholesky"``, which reads y (issue 36's decision)."""
    design, kernel, reg, _ = DEFAULTS[case]
    X = design()
    y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * np.random.default_rng(5).normal(size=len(X))
    local = NystromKRR(kernel, reg, n_centers=300, sampler="spectral", random_state=0).fit(X, y)
    Xd = da.from_array(X, chunks=(len(X) // 4, X.shape[1]))
    dist = NystromKRR(kernel, reg, n_centers=300, random_state=0).fit(
        Xd, da.from_array(y, chunks=Xd.chunks[0]))
    assert dist.sampler_ == "spectral"
    np.testing.assert_array_equal(dist.center_indices_, local.center_indices_)
    expected = local.predict(X)
    np.testing.assert_allclose(dist.predict(Xd).compute(), expected, rtol=1e-8,
                               atol=1e-8 * np.ptp(expected))


def test_dataframe_input(client, data):
    dd = pytest.importorskip("dask.dataframe")
    X, _, Xd = data
    frame = dd.from_dask_array(Xd[:10_000], columns=["a", "b", "c"])
    dist = _sampler().fit(frame)
    np.testing.assert_allclose(dist.scores_.compute(), _sampler().fit(X[:10_000]).scores_, rtol=1e-8)
    with pytest.raises(TypeError, match="numeric"):
        _sampler().fit(frame.assign(name="x"))


def test_bad_inputs(client, data):
    _, y, Xd = data
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        _sampler().fit(Xd[Xd[:, 0] > 0.5])
    with pytest.raises(ValueError, match="2-D"):
        _sampler().fit(Xd[:, 0])
    with pytest.raises(ValueError, match="max_samples"):
        _sampler(max_samples=None).fit(Xd)
    with pytest.raises(ValueError, match="density"):
        _sampler(density=np.ones(N)).fit(Xd)
    with pytest.raises(ValueError, match="kde"):
        _sampler().set_params(kde="grid").fit(Xd)
    with pytest.raises(ValueError, match="memory_budget"):
        _sampler(kde="binned", memory_budget=2**16).fit(Xd)
    with pytest.raises(ValueError, match="NaN"):
        _sampler().fit(da.where(Xd > 0.999, np.nan, Xd))
    with pytest.raises(ValueError, match="solver"):
        NystromKRR(KERNEL, REG, 50, solver="cg").fit(Xd, y)
    with pytest.raises(ValueError, match="sampler"):
        NystromKRR(KERNEL, REG, 50, sampler="uniform").fit(Xd, y)
    with pytest.raises(ValueError, match="y must have shape"):
        NystromKRR(KERNEL, REG, 50, sampler=_sampler()).fit(Xd, y[:10])


def test_numpy_path_does_not_import_dask():
    code = (
        "import sys, numpy as np\n"
        "from sklearn.gaussian_process.kernels import RBF\n"
        "import spectral_leverage\n"
        "X = np.random.default_rng(0).uniform(size=(500, 2))\n"
        "sl = spectral_leverage.SpectralLeverage(RBF(0.5), 1e-3).fit(X)\n"
        "sl.sample(10)\n"
        "spectral_leverage.NystromKRR(RBF(0.5), 1e-3, 20).fit(X, X[:, 0]).predict(X)\n"
        "assert not any(m == 'dask' or m.startswith('dask.') for m in sys.modules), 'dask imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_nan_targets(fitted, data):
    _, y, Xd = data
    bad = y.copy()
    bad[7] = np.nan
    with pytest.raises(ValueError, match="y contains NaN"):
        NystromKRR(KERNEL, REG, 50, sampler=fitted[1], random_state=2).fit(Xd, bad)


def _limit(block, *_):
    """The thread limit where a block is processed, per row."""
    return np.full(block.shape[0], float(max_threads()))


def _limit_sum(block):
    return (np.array([float(max_threads())]),)


ONES = da.ones((3000, 2), chunks=(1000, 2))
BACKEND_TASKS = {  # the thread limit inside each task of a backend operation, per block
    "map_rows": lambda: dask_backend.map_rows(_limit, ONES, "shared").compute(scheduler="threads"),
    "map_rows_columns": lambda: dask_backend.map_rows(
        lambda b: np.column_stack([_limit(b)] * 2), ONES, columns=2).compute(scheduler="threads"),
    "sum_blocks": lambda: dask_backend.sum_blocks(_limit_sum, ONES)[0] / ONES.numblocks[0],
}


@pytest.mark.parametrize("task", BACKEND_TASKS)
def test_backend_tasks_run_single_threaded(task):
    with limit_threads(N_THREADS):  # the caller allows every core (the default is joblib's 1)
        np.testing.assert_array_equal(BACKEND_TASKS[task](), 1.0)
        assert max_threads() == N_THREADS


@pytest.mark.parametrize("scheduler", ["threads", "client"])
def test_dask_tasks_run_under_the_thread_limit(request, scheduler):
    if scheduler == "client":
        scheduler = request.getfixturevalue("client")

    def threads(p):  # (the thread limit, the threads on_all_cores used) in the task, per row
        seen = set()

        def fill(_) -> None:
            seen.add(threading.get_ident())
            time.sleep(0.005)  # long enough for a pool to start its threads

        on_all_cores(fill, range(4))
        return np.column_stack([np.full(p.shape, max_threads()), np.full(p.shape, len(seen))])

    def every_core(p):  # a task allowing every core (the default is joblib's 1 thread)
        with limit_threads(N_THREADS):
            return threads(p)

    p = da.ones(4000, chunks=1000)
    kwargs = dict(new_axis=1, chunks=(p.chunks[0], (2,)), dtype=float)
    with limit_threads(N_THREADS):  # the caller allows every core
        limited, free = da.compute(dask_backend.map_rows(every_core, p, columns=2),
                                   p.map_blocks(every_core, **kwargs), scheduler=scheduler)
        assert max_threads() == N_THREADS
    np.testing.assert_array_equal(limited, 1.0)
    # other tasks on the same worker threads, and the caller, keep the full fan-out
    np.testing.assert_array_equal(free[:, 0], N_THREADS)


def test_no_progress_bars_inside_dask_tasks(monkeypatch, capfd):
    """verbose=True: the bars of the work inside Dask tasks are all disabled (they would interleave);
    the client's own steps keep theirs, and Dask's ProgressBar follows the tasks."""
    from dask.diagnostics import ProgressBar

    from spectral_leverage import _blocks

    created, real = [], _blocks.tqdm

    def recording(*args, **kwargs):
        created.append((_blocks._IN_TASK.get(), kwargs["disable"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(_blocks, "tqdm", recording)
    X = np.random.default_rng(1).normal(size=(20_000, 4))
    sampler = SpectralLeverage(KERNEL, REG, kde="tree", intrinsic_dim=None, verbose=True,
                               memory_budget=2**20, algorithm="density", random_state=0)
    sampler.fit(X)
    assert (False, False) in created  # in memory, bars are shown
    created.clear()
    with ProgressBar(), dask.config.set(scheduler="threads"):
        sampler.fit(da.from_array(X, chunks=(5000, 4)))
    in_tasks = [disable for in_task, disable in created if in_task]
    assert len(in_tasks) >= 4 and all(in_tasks)
    assert "Completed" in capfd.readouterr().out


def test_passes_over_the_data(caplog):
    """The passes over X and y that scaling.md and the backend's docstring state, counted as reads of
    X's chunks (each pass needs the result of the one before, so none can be fused): the density
    scores, and the default on each of its paths (the full-scale leverage adds three: the pivots'
    subsample, the far field, the tail integral; four with neighbours: the rows the cells of space
    are split from and the near blocks in place of the tail integral)."""
    counts = {"X": 0, "y": 0}
    lock = threading.Lock()

    def read(block, name):
        with lock:
            counts[name] += 1
        return block

    rng = np.random.default_rng(2)
    passes = {}
    for d, kde in ((3, "binned"), (4, "tree")):
        X = rng.uniform(size=(40_000, d))
        Xd = da.from_array(X, chunks=(10_000, d)).map_blocks(read, "X", meta=np.empty((0, 0)))
        yd = da.from_array(np.sin(4 * X[:, 0]), chunks=10_000).map_blocks(read, "y", meta=np.empty(0))
        with dask.config.set(scheduler="sync"):
            sampler = _sampler().fit(Xd)
            passes[kde, "density"] = counts["X"] / 4
            counts.update(X=0)
            sampler.sample(50, random_state=0)
            passes[kde, "sample"] = counts["X"] / 4
            small = da.from_array(X[:8000], chunks=(2000, d)).map_blocks(read, "X", meta=np.empty((0, 0)))
            for name, kernel, reg, data in (("default", KERNEL, REG, Xd),
                                            ("rough", Matern(0.1, nu=0.5), 1e-4, small)):
                counts.update(X=0)
                sampler, path = _default_fit(data, kernel, reg, caplog)
                passes[kde, name, path] = counts["X"] / 4
                counts.update(X=0)
                sampler.sample(50, random_state=0)
                passes[kde, name, "sample"] = counts["X"] / 4
            counts.update(X=0, y=0)
            NystromKRR(KERNEL, REG, n_centers=100, random_state=0).fit(Xd, yd)
            passes[kde, "NystromKRR.fit"] = (counts["X"] / 4, counts["y"] / 4)
            counts.update(X=0, y=0)
    assert passes == {
        ("binned", "density"): 3, ("binned", "sample"): 0,
        ("binned", "default", "tail"): 6, ("binned", "default", "sample"): 0,
        ("binned", "rough", "neighbours"): 7, ("binned", "rough", "sample"): 0,
        ("binned", "NystromKRR.fit"): (8, 1),
        ("tree", "density"): 2, ("tree", "sample"): 0,
        # the pivots leave the residual most of the ridge degrees of freedom: the density scores
        ("tree", "default", "density"): 3, ("tree", "default", "sample"): 0,
        ("tree", "rough", "neighbours"): 6, ("tree", "rough", "sample"): 0,
        ("tree", "NystromKRR.fit"): (5, 1)}

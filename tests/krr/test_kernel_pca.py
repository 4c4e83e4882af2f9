"""NystromKernelPCA against exact kernel PCA (scikit-learn's KernelPCA) and the closed forms."""

import numpy as np
import pytest
from conftest import load_csv
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans
from sklearn.decomposition import KernelPCA
from sklearn.gaussian_process.kernels import RBF, Matern
from sklearn.utils.estimator_checks import parametrize_with_checks

from spectral_leverage import NystromKernelPCA, SpectralLeverage
from spectral_leverage._validation import expected_failed_checks

KERNELS = [RBF(2.0), Matern(1.0, nu=1.5), Matern(0.5, nu=0.5)]


def centred(K: np.ndarray) -> np.ndarray:
    H = np.eye(K.shape[0]) - 1.0 / K.shape[0]
    return H @ K @ H


def assert_equal_up_to_sign(A, B, atol):
    signs = np.sign(np.sum(A * B, axis=0))
    np.testing.assert_allclose(A * signs, B, atol=atol, rtol=0)


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_every_row_a_landmark_is_exact_kernel_pca(kernel):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(150, 3)), rng.normal(size=(20, 3))
    exact = KernelPCA(6, kernel="precomputed", eigen_solver="dense")
    Z_exact = exact.fit_transform(kernel(X))
    ours = NystromKernelPCA(6, kernel=kernel, n_landmarks=150, random_state=0)
    Z = ours.fit_transform(X)
    np.testing.assert_array_equal(ours.landmark_indices_, np.arange(150))
    np.testing.assert_allclose(ours.eigenvalues_, exact.eigenvalues_, rtol=1e-8)
    assert_equal_up_to_sign(ours.eigenvectors_, exact.eigenvectors_, 1e-8)
    assert_equal_up_to_sign(Z, Z_exact, 1e-8)
    assert_equal_up_to_sign(ours.transform(Y), exact.transform(kernel(Y, X)), 1e-8)


@pytest.mark.parametrize("sampler", ["kmeans", "rp-cholesky", "uniform"])
def test_fewer_landmarks_is_kernel_pca_of_the_nystrom_kernel(sampler):
    """Closed form: the eigenpairs of H K_nZ K_ZZ⁻¹ K_Zn H, projections centred in feature space."""
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(300, 2)), rng.normal(size=(10, 2))
    kernel = Matern(1.0, nu=1.5)
    ours = NystromKernelPCA(4, kernel=kernel, n_landmarks=30, sampler=sampler, random_state=0).fit(X)
    Z = ours.landmarks_
    assert Z.shape == (30, 2)
    if ours.landmark_indices_ is not None:
        np.testing.assert_array_equal(X[ours.landmark_indices_], Z)
    approx = kernel(X, Z) @ np.linalg.solve(kernel(Z), kernel(Z, X))
    exact = KernelPCA(4, kernel="precomputed", eigen_solver="dense").fit(approx)
    np.testing.assert_allclose(ours.eigenvalues_, exact.eigenvalues_, rtol=1e-7)
    assert_equal_up_to_sign(ours.eigenvectors_, exact.eigenvectors_, 1e-6)
    new = kernel(Y, Z) @ np.linalg.solve(kernel(Z), kernel(Z, X))
    assert_equal_up_to_sign(ours.transform(Y), exact.transform(new), 1e-6)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(3, 40), d=st.integers(1, 3), k=st.integers(1, 5),
       shift=st.floats(-5, 5), seed=st.integers(0, 2**16))
def test_eigenvalues_are_those_of_the_centred_kernel_whatever_the_translation(n, d, k, shift, seed):
    X = np.random.default_rng(seed).normal(size=(n, d))
    kernel = Matern(1.0, nu=2.5)
    fitted = NystromKernelPCA(k, kernel=kernel, n_landmarks=n).fit(X + shift)
    top = np.sort(np.linalg.eigvalsh(centred(kernel(X))))[::-1][: min(k, n)]
    scale = max(top[0], 1e-300)
    np.testing.assert_allclose(fitted.eigenvalues_[: top.size], np.maximum(top, 0), atol=1e-9 * scale)
    U = fitted.eigenvectors_[:, fitted.eigenvalues_ > 1e-8 * scale]
    np.testing.assert_allclose(U.T @ U, np.eye(U.shape[1]), atol=1e-6)
    assert np.all(np.diff(fitted.eigenvalues_) <= 1e-12 * scale)


def test_row_blocks_change_nothing():
    X = np.random.default_rng(2).normal(size=(500, 3))
    one = NystromKernelPCA(3, kernel=RBF(1.0), n_landmarks=40, random_state=0).fit(X)
    blocks = NystromKernelPCA(3, kernel=RBF(1.0), n_landmarks=40, random_state=0,
                              memory_budget=40 * 8 * 50).fit(X)  # a few rows per block
    np.testing.assert_allclose(blocks.eigenvalues_, one.eigenvalues_, rtol=1e-12)
    np.testing.assert_allclose(blocks.eigenvectors_, one.eigenvectors_, atol=1e-12)
    np.testing.assert_allclose(one.transform(X), one.fit_transform(X), atol=1e-12)


def test_random_fourier_features_approach_the_exact_eigenvalues():
    X = np.random.default_rng(3).normal(size=(200, 2))
    kernel = RBF(1.0)
    top = np.sort(np.linalg.eigvalsh(centred(kernel(X))))[::-1][:3]
    errors = [np.mean([np.abs(NystromKernelPCA(3, kernel=kernel, n_landmarks=D, random_state=seed,
                                               approximation="fourier").fit(X).eigenvalues_ / top
                              - 1).max() for seed in range(3)])
              for D in (50, 2000)]
    # Monte Carlo error ~ D^{-1/2}: measured 0.24 and 0.025
    assert errors[1] < 0.05 and errors[1] < errors[0] / 3


def test_leverage_samplers_and_kmeans_objects_are_accepted():
    X = np.random.default_rng(4).normal(size=(400, 2))
    sampler = SpectralLeverage(RBF(1.0), reg=1e-2, random_state=0)
    fitted = NystromKernelPCA(2, kernel=RBF(1.0), n_landmarks=20, sampler=sampler,
                              random_state=0).fit(X)
    assert fitted.landmark_indices_.size <= 20
    fitted = NystromKernelPCA(2, kernel=RBF(1.0), n_landmarks=20,
                              sampler=KMeans(n_clusters=3, n_init=1, random_state=0)).fit(X)
    assert fitted.landmarks_.shape == (20, 2) and fitted.landmark_indices_ is None


def test_candidates_subsample_large_inputs():
    X = np.random.default_rng(5).normal(size=(300, 2))
    fitted = NystromKernelPCA(2, kernel=RBF(1.0), n_landmarks=500, max_candidates=100,
                              random_state=0)
    with pytest.warns(UserWarning, match="n_landmarks=500"):
        fitted.fit(X)
    assert fitted.n_landmarks_ == 100 and np.unique(fitted.landmark_indices_).size == 100


def test_default_landmarks_capture_more_than_uniform_on_ccpp():
    """The issue's measurement at small scale: k = 20 components from m = 50 landmarks."""
    X = load_csv("ccpp.csv")[::5][:1500]
    kernel = Matern(1.0, nu=1.5)
    Kc = centred(kernel(X))
    top = np.sort(np.linalg.eigvalsh(Kc))[::-1][:20]

    def captured(sampler, seed):
        U = NystromKernelPCA(20, kernel=kernel, n_landmarks=50, sampler=sampler,
                             random_state=seed).fit(X).eigenvectors_
        return np.trace(U.T @ Kc @ U) / top.sum()

    default = np.mean([captured("kmeans", seed) for seed in range(3)])
    uniform = np.mean([captured("uniform", seed) for seed in range(3)])
    assert default > uniform + 0.005
    assert default > 0.99


def test_unknown_kernel_is_refused():
    from sklearn.gaussian_process.kernels import DotProduct

    with pytest.raises(TypeError, match="kernel must be"):
        NystromKernelPCA(kernel=DotProduct()).fit(np.ones((10, 2)))


@parametrize_with_checks([NystromKernelPCA(random_state=0),
                          NystromKernelPCA(n_landmarks=5, sampler="rp-cholesky", random_state=0),
                          NystromKernelPCA(n_landmarks=8, approximation="fourier", random_state=0)],
                         expected_failed_checks=expected_failed_checks)
def test_nystrom_kernel_pca_is_a_scikit_learn_transformer(estimator, check):
    check(estimator)


@pytest.mark.parametrize("approximation", ["nystrom", "fourier"])
def test_dask_input_gives_the_in_memory_fit(approximation):
    """The same lines on a Dask array (threaded scheduler): candidates subsampled and gathered."""
    da = pytest.importorskip("dask.array")
    X = np.random.default_rng(6).normal(size=(6000, 3))
    Xd = da.from_array(X, chunks=(1000, 3))
    params = dict(n_components=3, kernel=Matern(1.0, nu=1.5), n_landmarks=40,
                  approximation=approximation, max_candidates=2500, random_state=0)
    local = NystromKernelPCA(**params).fit(X)
    dist = NystromKernelPCA(**params).fit(Xd)
    if approximation == "nystrom":
        np.testing.assert_array_equal(dist.landmarks_, local.landmarks_)
    np.testing.assert_allclose(dist.eigenvalues_, local.eigenvalues_, rtol=1e-10)
    assert isinstance(dist.eigenvectors_, da.Array) and dist.eigenvectors_.chunks[0] == Xd.chunks[0]
    np.testing.assert_allclose(dist.eigenvectors_.compute(), local.eigenvectors_, atol=1e-10)
    Y = dist.transform(Xd[:500])
    assert isinstance(Y, da.Array)
    np.testing.assert_allclose(Y.compute(), local.transform(X[:500]), atol=1e-8)


@pytest.mark.parametrize("approximation", ["nystrom", "fourier"])
@pytest.mark.parametrize("scale", [1e160, 1e300])
def test_kernel_pca_refuses_magnitudes_beyond_float64_kernel_values(approximation, scale):
    # finding 6: "unexpected array size" from the feature moments on data of magnitude 1e160
    X = np.random.default_rng(0).normal(size=(300, 2)) * scale
    with pytest.raises(ValueError, match="too extreme for float64 kernel values: standardise X"):
        NystromKernelPCA(approximation=approximation, random_state=0).fit(X)

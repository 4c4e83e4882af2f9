"""TreeDensity: the Gaussian KDE exact at anchors, interpolated elsewhere; the bandwidth rules."""

import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal, norm

from spectral_leverage.density import TreeDensity, bandwidth_factor, robust_scale


def _precision_bound(kde: TreeDensity, X: np.ndarray) -> np.ndarray:
    """The direct KDE's documented error in the log-density at the rows of X: in float32 about
    eps32 (‖w‖ + r) r, w the whitened row and r the anchors' radius (from their mean, in
    bandwidths), here taken twice; in float64 nothing of note (0)."""
    if kde._dtype == np.float64:
        return np.zeros(len(X))
    radius = np.sqrt(np.max(np.sum((kde._anchors - kde._centre) ** 2, axis=1)))
    norm = np.linalg.norm(X / kde.bandwidth_ - kde._centre, axis=1)
    return 2 * np.finfo(np.float32).eps * (norm + radius) * radius


def _assert_within(actual: np.ndarray, expected: np.ndarray, bound: np.ndarray) -> None:
    error = np.abs(actual - expected)
    worst = int(np.argmax(error - bound))
    assert np.all(error <= bound), f"row {worst}: error {error[worst]:.3g} over the bound {bound[worst]:.3g}"


@pytest.mark.parametrize("d", [1, 3, 8])
@pytest.mark.parametrize("bandwidth", [0.1, 0.2, 0.5])
def test_direct_kde_is_exact(d, bandwidth):
    """In float64 to rounding; in float32 (anchors within about 41 bandwidths of their mean)
    within its bound, under TreeDensity.SINGLE_LOG_ERROR at the rows among the data."""
    rng = np.random.default_rng(d)
    X = rng.normal(size=(3000, d)) + 100.0  # off the origin: the distances are taken centred
    # inside the data, in its tails, and far beyond (the log-density where the density underflows)
    Q = 100.0 + np.vstack([rng.normal(size=(400, d)) * 1.5, rng.normal(size=(100, d)) * 60])
    kde = TreeDensity(bandwidth).fit(X)
    ours = kde.log_density(Q)
    # the definition, in float64 (scikit-learn's tree KDE at rtol=0 is off by up to 5 % of the log far out)
    squared = ((Q[:, None, :] - X[None]) ** 2).sum(axis=-1) / bandwidth**2
    exact = logsumexp(-0.5 * squared, axis=1) - np.log(len(X)) - d * np.log(np.sqrt(2 * np.pi) * bandwidth)
    assert np.min(exact) < -1000
    _assert_within(ours, exact, 1e-6 + 1e-10 * np.abs(exact) + _precision_bound(kde, Q))
    if kde._dtype == np.float32:
        assert np.max(np.abs(ours - exact)[:400]) < TreeDensity.SINGLE_LOG_ERROR
    # a bandwidth of 0.1 spreads the anchors over 37 bandwidths or more: float64
    assert (kde._dtype == np.float64) == (bandwidth == 0.1 or (bandwidth == 0.2 and d == 8))


@pytest.mark.parametrize("d", [1, 3, 5])
def test_direct_kde_gradient_and_curvature_are_exact(d):
    rng = np.random.default_rng(d)
    X = 50.0 + rng.normal(size=(2000, d)) * np.linspace(1.0, 2.0, d)  # off the origin, anisotropic
    Q = 50.0 + np.vstack([rng.normal(size=(300, d)) * 1.5, rng.normal(size=(20, d)) * 8])
    kde = TreeDensity().fit(X)
    scale = np.linspace(0.5, 3.0, d)
    p, (whitened, scaled, curvature) = kde.density_and_slopes(Q, (None, scale), curvature=True)
    # the definition in float64, whitened w = x / h: ∇ log p = E_t[a] - w, ∇² log p = Cov_t[a] - I
    W, A = Q / kde.bandwidth_, X / kde.bandwidth_
    log_t = -0.5 * ((W[:, None, :] - A[None]) ** 2).sum(axis=-1)
    t = np.exp(log_t - log_t.max(axis=1, keepdims=True))
    t /= t.sum(axis=1, keepdims=True)
    gradient = t @ A - W
    hessian = np.einsum("qa,qai,qaj->qij", t, A[None] - W[:, None], A[None] - W[:, None]) \
        - np.einsum("qi,qj->qij", gradient, gradient) - np.eye(d)
    unit = gradient / np.linalg.norm(gradient, axis=1, keepdims=True)
    np.testing.assert_allclose(p, kde.density(Q), rtol=1e-12)
    np.testing.assert_allclose(whitened, np.linalg.norm(gradient, axis=1), rtol=1e-4, atol=1e-4)
    # y = x / s: ∂/∂y = (s / h) ∂/∂w
    np.testing.assert_allclose(scaled, np.linalg.norm(gradient * scale / kde.bandwidth_, axis=1),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(curvature, np.einsum("qi,qij,qj->q", unit, hessian, unit), atol=1e-3)


def _on_anchor(kde: TreeDensity, X: np.ndarray) -> np.ndarray:
    """Rows of X whose whitened coordinates are bitwise an anchor's."""
    return ((X / kde.bandwidth_)[:, None, :] == kde._anchors[None]).all(axis=2).any(axis=1)


def _left_out_kde(W: np.ndarray, A: np.ndarray, bandwidth: np.ndarray):
    """The definition in float64 at whitened rows W: the KDE of the whitened anchors A, each row on
    an anchor leaving (one copy of) it out; (log-density, gradient, Hessian)."""
    d = A.shape[1]
    log_p, gradient, hessian = [], [], []
    for w in W:
        keep = np.ones(len(A), bool)
        keep[np.flatnonzero((A == w).all(axis=1))[:1]] = False
        B = A[keep] - w
        log_t = -0.5 * (B**2).sum(axis=1)
        log_p.append(logsumexp(log_t) - np.log(keep.sum()) - 0.5 * d * np.log(2 * np.pi)
                     - np.log(bandwidth).sum())
        t = np.exp(log_t - logsumexp(log_t))
        g = t @ B
        gradient.append(g)
        hessian.append(np.einsum("a,ai,aj->ij", t, B, B) - np.outer(g, g) - np.eye(d))
    return np.array(log_p), np.array(gradient), np.array(hessian)


@pytest.mark.parametrize("n", [300, 3000])  # every row an anchor (direct), or one in ten (interpolated)
def test_a_row_on_an_anchor_leaves_it_out(n, interpolating):
    """In six or more dimensions an anchor's own kernel term outweighs its neighbours' (8-D standard
    normal rows, 16384 anchors: it raised the anchors' density 2.5x at the median, their scores
    0.6x); a row on an anchor is the KDE of the other anchors, in both evaluations."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, 6))
    kde = TreeDensity(max_samples=300, random_state=0).fit(X)
    W, A, on = X / kde.bandwidth_, kde._anchors, _on_anchor(kde, X)
    assert on.sum() == 300
    log_p, (slope, curvature) = kde.log_density(X), kde.density_and_slopes(X, curvature=True)[1]
    exact_log_p, gradient, hessian = _left_out_kde(W[on], A, kde.bandwidth_)
    # float32 here (n = 300): the log-density within its bound, the moments (of size 1, where the
    # log-density is of size ‖w‖²) within the same
    bound = 1e-6 + _precision_bound(kde, X[on])
    _assert_within(log_p[on], exact_log_p, bound)
    _assert_within(slope[on], np.linalg.norm(gradient, axis=1), bound)
    unit = gradient / np.linalg.norm(gradient, axis=1, keepdims=True)
    _assert_within(curvature[on], np.einsum("qi,qij,qj->q", unit, hessian, unit), bound)
    # the anchors' own full KDE, which the interpolation reads, is 2-3x higher here
    assert np.median(kde._direct(W[on], leave_out=False)[0] - exact_log_p) > np.log(2)


def test_a_row_reads_the_same_whether_or_not_it_is_an_anchor(interpolating):
    """The anchors are a random draw of the rows, so their densities must err like the others'.
    Here (8-D, 2000 anchors) the median log ratio to the true density read +1.37 at the anchors
    with their own term and -0.43 at the other rows; without it -0.43 at both."""
    n, d = 20_000, 8
    X = np.random.default_rng(7).normal(size=(n, d))
    kde = TreeDensity(max_samples=2000, random_state=0).fit(X)
    on = _on_anchor(kde, X)
    error = kde.log_density(X) - multivariate_normal(np.zeros(d)).logpdf(X)
    assert on.sum() == 2000
    assert abs(np.median(error[on]) - np.median(error[~on])) < 0.1


def test_identical_rows_have_the_same_density(interpolating):
    """One copy an anchor, the other not: each leaves one copy out, so both read the same."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(2000, 6))
    kde = TreeDensity(max_samples=200, random_state=0).fit(X)
    first = int(np.flatnonzero(_on_anchor(kde, X))[0])
    Y = np.vstack([X, X[first]])  # a non-anchor copy of an anchor row
    for batch in (Y, Y[[first, -1]]):  # interpolated, and direct
        log_p = kde.log_density(batch)
        assert log_p[0 if len(batch) == 2 else first] == pytest.approx(log_p[-1], abs=1e-12)


def test_tree_slope_and_curvature_are_the_half_space_ones():
    """As the binned KDE's: on uniform data the log-slope is M(t/b) at depth t from the face, and
    the log-curvature -M(u)(u + M(u))."""
    X = np.random.default_rng(0).uniform(size=(200_000, 1))
    kde = TreeDensity(max_samples=None).fit(X)  # a few queries: direct against every point
    u = np.array([0.0, 0.3, 0.7, 1.5])
    mills = norm.pdf(u) / norm.cdf(u)
    _, (slope, curvature) = kde.density_and_slopes(u[:, None] * kde.bandwidth_, curvature=True)
    np.testing.assert_allclose(slope, mills, atol=0.03)
    np.testing.assert_allclose(curvature, -mills * (u + mills), atol=0.03)
    _, (inside,) = kde.density_and_slopes(np.array([[0.5]]))
    assert inside[0] < 0.03


def test_tree_interpolation_against_direct_evaluation(interpolating):
    """Measured (90th percentiles of the error over the cube, largest at its faces): log-density
    0.009 to second order (0.061 to first, 0.126 to zeroth), slope 0.029 (0.065 with the Hessian
    along the gradient only), curvature 0.096; slope 0.029 in the middle of the cube, where it is
    about 0.1 itself."""
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(40_000, 3))
    kde = TreeDensity(max_samples=4096, random_state=0).fit(X)
    p, (slope, curvature) = kde.density_and_slopes(X, curvature=True)  # 40 000 queries: interpolated
    blocks = [kde.density_and_slopes(X[i:i + 4096], curvature=True) for i in range(0, X.shape[0], 4096)]
    direct_p = np.concatenate([q for q, _ in blocks])
    direct_slope, direct_curvature = (np.concatenate(v)
                                      for v in zip(*(rest for _, rest in blocks), strict=True))
    np.testing.assert_array_equal(p, kde.density(X))
    assert np.quantile(np.abs(np.log(p / direct_p)), 0.9) < 0.02
    assert np.quantile(np.abs(slope - direct_slope), 0.9) < 0.05
    assert np.quantile(np.abs(curvature - direct_curvature), 0.9) < 0.12
    middle = np.all((X > 0.3) & (X < 0.7), axis=1)
    assert np.quantile(np.abs(slope - direct_slope)[middle], 0.9) < 0.05
    far = np.array([[5.0, 5.0, 5.0]])  # beyond every anchor's reach: evaluated directly
    np.testing.assert_array_equal(kde.density_and_slopes(np.vstack([X, far]), curvature=True)[1][0][-1:],
                                  kde.density_and_slopes(far, curvature=True)[1][0])


def test_interpolation_in_five_dimensions_against_direct_evaluation(interpolating):
    """In 5-D the anchors are about a bandwidth apart (4096 here: the median query lies 1.06
    bandwidths from the nearest, the 90th percentile 1.47), so most queries are interpolated to
    second order. Measured (90th percentiles): log-density 0.111, slope 0.088 (first order, queries
    beyond one bandwidth evaluated directly: 0.123 and 0.133)."""
    X = np.random.default_rng(6).uniform(size=(20_000, 5))
    kde = TreeDensity(max_samples=4096, random_state=0).fit(X)
    p, (slope,) = kde.density_and_slopes(X)  # 20 000 queries: interpolated
    blocks = [kde.density_and_slopes(X[i:i + 4096]) for i in range(0, X.shape[0], 4096)]
    direct_p = np.concatenate([q for q, _ in blocks])
    direct_slope = np.concatenate([s for _, (s,) in blocks])
    assert np.quantile(np.abs(np.log(p / direct_p)), 0.9) < 0.13
    assert np.quantile(np.abs(slope - direct_slope), 0.9) < 0.11


@pytest.mark.parametrize("d, n_batch, expected", [(4, 10**5, True), (6, 10**5, False), (6, 2 * 10**5, True),
                                                   (8, 10**6, False), (8, 10**7, False)])
def test_interpolates_where_it_costs_less(d, n_batch, expected):
    """Standard normal rows, 16384 anchors (TreeDensity.interpolates): in 4-D 94 % of the anchors
    have another within reach, and the interpolation took 0.60x the direct route's time at 10^5
    rows; in 6-D half of them, 1.07x at 10^5 rows and 0.87x at 2·10^5; in 8-D 8 %, 1.43x at 10^5."""
    X = np.random.default_rng(d).normal(size=(10**5, d))
    kde = TreeDensity(random_state=0).fit(X)
    assert kde.interpolates(n_batch) is expected
    assert kde.interpolates(kde.n_tree_) is False  # no more rows than anchors: direct
    share = {4: 0.94, 6: 0.53, 8: 0.08}[d]
    assert kde._reach_share() == pytest.approx(share, abs=0.03)


def test_direct_kde_warns_when_the_data_span_too_many_bandwidths():
    X = np.vstack([np.zeros((5, 2)), np.full((5, 2), 1e6)])
    with pytest.warns(UserWarning, match="wider bandwidth"):
        TreeDensity(0.1).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TreeDensity().fit(X)  # Scott's rule: a few bandwidths


def test_scott_rule_is_per_feature_and_scale_equivariant():
    X = np.random.default_rng(0).normal(size=(2000, 2))
    scale = np.array([3.0, 0.01])
    td = TreeDensity("scott").fit(X)
    td_scaled = TreeDensity("scott").fit(X * scale)
    np.testing.assert_allclose(td_scaled.bandwidth_, td.bandwidth_ * scale)
    np.testing.assert_allclose(td_scaled.density(X * scale), td.density(X) / np.prod(scale), rtol=1e-6)
    assert td.bandwidth_ == pytest.approx(robust_scale(X.std(axis=0), X) * bandwidth_factor("scott", 2000, 2))


@pytest.mark.parametrize("rule", ["scott", "silverman"])
def test_known_density_recovered(rule):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(16384, 2))
    central = np.linalg.norm(X, axis=1) < 1.5
    est = TreeDensity(rule).fit(X).density(X[central])
    true = multivariate_normal(np.zeros(2)).pdf(X[central])
    assert np.median(np.abs(est / true - 1)) < 0.05


def test_interpolation_adds_little_error_against_true_density(interpolating):
    # uniform cube: true density 1 in the interior; the interpolated estimate (large batch) must be
    # about as close to it as direct evaluation at every point with the same anchors. Measured: 1.09x
    # direct's error (median and 90th percentile); the zeroth-order interpolation was 0.9x, as it
    # smooths the KDE's noise further, but it is twice as far off at the faces
    # (test_tree_interpolation_against_direct_evaluation)
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(60_000, 3))
    td = TreeDensity(max_samples=4096, random_state=0).fit(X)
    interpolated = td.density(X)  # 60 000 > 4096 queries: interpolated
    direct = np.concatenate([td.density(X[i:i + 4096]) for i in range(0, X.shape[0], 4096)])
    inner = np.all((X > 0.2) & (X < 0.8), axis=1)
    err_interp, err_direct = np.abs(interpolated[inner] - 1), np.abs(direct[inner] - 1)
    assert np.median(err_interp) <= 1.15 * np.median(err_direct)
    assert np.quantile(err_interp, 0.9) <= 1.15 * np.quantile(err_direct, 0.9)
    assert np.median(err_interp) < 0.08


def test_outliers_are_evaluated_directly(interpolating):
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(20_000, 2)), [[40.0, 40.0]]])
    td = TreeDensity(max_samples=2048, random_state=0).fit(X)
    p = td.density(X)
    assert p[-1] < 1e-50  # no anchor near the outlier: not the density of its nearest anchor


def test_random_state_fixes_anchors():
    X = np.random.default_rng(4).normal(size=(5000, 2))
    a = TreeDensity(max_samples=1000, random_state=7).fit(X).density(X)
    b = TreeDensity(max_samples=1000, random_state=7).fit(X).density(X)
    c = TreeDensity(max_samples=1000, random_state=8).fit(X).density(X)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


@pytest.mark.parametrize("kwargs,match", [({"bandwidth": "wide"}, "bandwidth"),
                                          ({"bandwidth": -1.0}, "bandwidth"),
                                          ({"max_samples": 0}, "max_samples"),
                                          ({"n_interp": 0}, "n_interp")])
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TreeDensity(**kwargs).fit(np.random.default_rng(0).normal(size=(50, 2)))


def test_bad_queries():
    td = TreeDensity().fit(np.random.default_rng(0).normal(size=(50, 2)))
    with pytest.raises(ValueError, match="features"):
        td.density(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="NaN"):
        td.density(np.array([[np.nan, 0.0]]))

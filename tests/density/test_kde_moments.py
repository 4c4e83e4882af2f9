"""The direct KDE's moments: the gradient and the curvature along it from the anchors' projections
(log_kde_slope) equal those from the full second moments (log_kde_moments), whose Hessian is the
weighted covariance of the anchors minus the identity."""

import numpy as np
import pytest

from spectral_leverage.density._kde_moments import (
    anchor_powers,
    left_out_moments,
    log_kde_moments,
    log_kde_slope,
)


@pytest.mark.parametrize("d", [1, 3, 8])
def test_slope_and_moments_agree_and_the_hessian_is_the_weighted_covariance(d):
    rng = np.random.default_rng(d)
    anchors = rng.normal(size=(500, d)) * 2.0
    anchors -= anchors.mean(axis=0)
    query = np.vstack([rng.normal(size=(40, d)), anchors[:1]])  # the last one at an anchor
    log_t = -0.5 * ((query[:, None, :] - anchors[None]) ** 2).sum(axis=-1)
    terms = np.exp(log_t - log_t.max(axis=1, keepdims=True))
    total = terms.sum(axis=1)
    gradient, along, upper = log_kde_moments(terms, total, query, anchor_powers(anchors))
    slope_gradient, slope_along = log_kde_slope(terms, total, query, anchors, np.ascontiguousarray(anchors.T))
    np.testing.assert_allclose(slope_gradient, gradient, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(slope_along, along, rtol=1e-9, atol=1e-9)
    weights = terms / total[:, None]
    mean = weights @ anchors
    np.testing.assert_allclose(gradient, mean - query, atol=1e-12)
    centred = anchors[None] - mean[:, None]
    hessian = np.einsum("qa,qai,qaj->qij", weights, centred, centred) - np.eye(d)
    i, j = np.triu_indices(d)
    np.testing.assert_allclose(upper, hessian[:, i, j], atol=1e-9)
    unit = gradient / np.linalg.norm(gradient, axis=1, keepdims=True)
    np.testing.assert_allclose(along, np.einsum("qi,qij,qj->q", unit, hessian, unit), atol=1e-9)


@pytest.mark.parametrize("d", [2, 8])
def test_left_out_moments_equal_the_moments_without_the_own_term(d):
    """An anchor's gradient and curvature without its own term, from its full ones, equal the
    direct moments with that term removed; the log-KDE changes by log((T - 1) / T)."""
    rng = np.random.default_rng(d)
    anchors = rng.normal(size=(400, d)) * 1.5
    anchors -= anchors.mean(axis=0)
    query = anchors[:30]  # each on its own anchor, whose term is the largest, 1
    log_t = -0.5 * ((query[:, None, :] - anchors[None]) ** 2).sum(axis=-1)
    terms = np.exp(log_t)
    total = terms.sum(axis=1)
    anchors_t = np.ascontiguousarray(anchors.T)
    full = log_kde_slope(terms, total, query, anchors, anchors_t)
    change, gradient, along, kept = left_out_moments(total, *full)
    terms[np.arange(30), np.arange(30)] = 0.0
    expected_gradient, expected_along = log_kde_slope(terms, total - 1.0, query, anchors, anchors_t)
    assert kept.all()
    np.testing.assert_allclose(change, np.log((total - 1.0) / total), rtol=1e-12)
    np.testing.assert_allclose(gradient, expected_gradient, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(along, expected_along, rtol=1e-7, atol=1e-9)


def test_the_slope_in_float32_is_within_its_bound():
    """On float32 terms and anchors the gradient and the curvature along it are within
    2 eps32 (‖w‖ + r) r of float64's (r the anchors' largest norm), also at rows 30 and 40
    bandwidths out, where the curvature is not trivially 0."""
    rng = np.random.default_rng(5)
    d = 8
    anchors = rng.normal(size=(4000, d)) * 6.0
    anchors -= anchors.mean(axis=0)
    unit = rng.normal(size=(40, d))
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    query = np.vstack([rng.normal(size=(40, d)) * 6.0, 30.0 * unit, 40.0 * unit])
    log_t = -0.5 * ((query[:, None, :] - anchors[None]) ** 2).sum(axis=-1)
    terms = np.exp(log_t - log_t.max(axis=1, keepdims=True))
    total = terms.sum(axis=1)
    exact = log_kde_slope(terms, total, query, anchors, np.ascontiguousarray(anchors.T))
    low = anchors.astype(np.float32)
    single = log_kde_slope(terms.astype(np.float32), total, query, low, np.ascontiguousarray(low.T))
    radius = np.max(np.linalg.norm(anchors, axis=1))
    bound = 2 * np.finfo(np.float32).eps * (np.linalg.norm(query, axis=1) + radius) * radius
    assert np.all(np.abs(single[0] - exact[0]) <= bound[:, None])
    assert np.all(np.abs(single[1] - exact[1]) <= bound)
    assert np.max(np.abs(single[1] - exact[1])) > 1e-7  # float32's arithmetic, not float64's
    assert np.min(np.abs(exact[1][40:])) > 0.1

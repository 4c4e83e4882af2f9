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

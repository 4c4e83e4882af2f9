"""FarRows: the binned KDE's far rows, their truncated Gaussian sums taken directly."""

import pickle

import numpy as np

from spectral_leverage.density.far_rows import FarRows


def _brute_force(W, rows, truncate):
    gaps = W[:, None, :] - rows[None, :, :]
    within = np.abs(gaps).max(axis=2) <= truncate
    return (np.exp(-0.5 * (gaps**2).sum(axis=2)) * within).sum(axis=1)


def test_sums_equal_the_truncated_gaussian_sums():
    rng = np.random.default_rng(0)
    rows = rng.normal(scale=3.0, size=(60, 3))
    W = np.vstack([rng.normal(scale=3.0, size=(200, 3)), rows[:5], [[100.0, 0.0, 0.0]]])
    far = FarRows(rows, truncate=4.0, weight=0.01)
    expected = 0.01 * (2 * np.pi) ** -1.5 * _brute_force(W, rows, 4.0)
    np.testing.assert_allclose(far.density(W), expected, rtol=1e-12, atol=0)
    assert far.density(W)[-1] == 0.0  # out of every far row's reach


def test_a_data_row_leaves_out_its_own_term_once():
    # the training rows' own term: one per row, so that a duplicated far row still sees its twin
    rows = np.array([[0.0, 0.0], [0.0, 0.0], [10.0, 0.0], [11.0, 0.0]])
    far = FarRows(rows, truncate=4.0, weight=1.0)
    own = (2 * np.pi) ** -1.0
    with_own, without = far.density(rows), far.density(rows, training=True)
    np.testing.assert_allclose(with_own - without, own, rtol=1e-12)
    np.testing.assert_allclose(without[:2], own)  # the twin's term
    np.testing.assert_allclose(without[2:], own * np.exp(-0.5))  # the neighbour one apart


def test_pickles_without_its_tree():
    rows = np.random.default_rng(1).normal(size=(30, 2))
    far = FarRows(rows, truncate=4.0, weight=1.0)
    before = far.density(rows)
    assert far._tree is not None
    copy = pickle.loads(pickle.dumps(far))
    assert copy._tree is None
    np.testing.assert_array_equal(copy.density(rows), before)

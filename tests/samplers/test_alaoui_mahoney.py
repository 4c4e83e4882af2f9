"""El Alaoui–Mahoney: the column sample and the leverage of its Nyström approximation."""

from __future__ import annotations

import numpy as np
from sampler_problems import KERNEL

from spectral_leverage.samplers.alaoui_mahoney import AlaouiMahoneySampler


def test_default_column_count_and_scores_of_the_nystrom_matrix():
    n, reg = 300, 1e-3
    X = np.random.default_rng(0).uniform(size=(n, 2))
    am = AlaouiMahoneySampler(KERNEL, reg, random_state=0).fit(X)
    J = am.column_indices_
    assert J.size == min(n, int(np.ceil(np.sqrt(n) * np.log(n))))
    assert np.all(np.diff(J) > 0)
    # independently: n·diag(L(L + nλI)^{-1}) with L = K_nJ K_JJ^+ K_Jn, dense
    K = KERNEL(X)
    L = K[:, J] @ np.linalg.pinv(K[np.ix_(J, J)], hermitian=True) @ K[J]
    expected = n * np.diag(np.linalg.solve(L + n * reg * np.eye(n), L))
    np.testing.assert_allclose(am.scores_, expected, rtol=1e-5, atol=1e-8)

"""The error curve of n_centers="auto": its sizes, the race of the length scales, its stops."""

import warnings

import numpy as np
import pytest

from spectral_leverage.krr import center_curve
from spectral_leverage.krr.center_curve import center_sizes, grow_centers


@pytest.mark.parametrize("last, sizes", [(100, [100]), (256, [256]), (257, [256, 257]),
                                         (1200, [256, 512, 1024, 1200]), (2048, [256, 512, 1024, 2048])])
def test_center_sizes_double_up_to_the_last(last, sizes):
    assert center_sizes(last) == sizes


def curve(floors, rate=1.0):
    """A score whose criterion at m centres is floor_i + rate · 256 / m (its best over a 3-λ path)."""
    calls = []

    def score(i, m):
        calls.append((i, m))
        return dict(error=floors[i] + rate * 256 / m + np.array([0.5, 0.0, 0.25]))
    return score, calls


def test_the_race_halves_the_length_scales_from_the_second_size():
    score, calls = curve([0.3, 0.1, 0.0, 0.2, 0.4], rate=10.0)
    passes = grow_centers(score, 5, center_sizes(4096), tol=0.01)
    by_size = {m: [i for i, k in calls if k == m] for m in center_sizes(4096)}
    # 5 at 256 and 512, the best ceil(5/2) at 1024, ceil(5/4) after that: the lowest floors
    assert by_size == {256: [0, 1, 2, 3, 4], 512: [2, 1, 3, 0, 4], 1024: [2, 1, 3], 2048: [2, 1],
                       4096: [2]}
    assert [(p["scale"], p["size"]) for p in passes] == calls


@pytest.mark.parametrize("tol", [0.0, 0.05, 0.2, 0.5])
def test_a_length_scale_stops_when_doubling_gains_less_than_tol(tol):
    score, calls = curve([1.0])
    grow_centers(score, 1, center_sizes(2**20), tol=tol)
    errors = [1.0 + 256 / m for _, m in calls]
    gains = 1 - np.sqrt(np.divide(errors[1:], errors[:-1]))
    assert np.all(gains[:-1] >= tol) and (gains[-1] < tol or calls[-1][1] == 2**20)


def test_a_curve_that_gets_worse_stops_even_at_tol_zero():
    calls = []

    def worse(i, m):
        calls.append(m)
        return dict(error=np.array([m / 256]))
    grow_centers(worse, 1, center_sizes(4096), tol=0.0)
    assert calls == [256, 512]


def test_the_memory_cap_warns_only_while_improving():
    score, _ = curve([0.0], rate=10.0)
    with pytest.warns(UserWarning, match="stopped growing at 1500 centres.*memory_budget allows no more"):
        grow_centers(score, 1, center_sizes(1500), tol=0.01, capped=True)
    flat, _ = curve([10.0], rate=0.001)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grow_centers(flat, 1, center_sizes(1500), tol=0.01, capped=True)  # flat: stopped by tol
        grow_centers(score, 1, center_sizes(1500), tol=0.01, capped=False)  # the last size is n


def test_the_time_budget_stops_before_a_round_that_would_pass_it(monkeypatch):
    # m centres take (m / 256)² s of a fake clock: the round at 1024 would end at 1 + 4 + 16 = 21 s
    clock = [0.0]
    monkeypatch.setattr(center_curve.time, "perf_counter", lambda: clock[0])

    def timed(i, m):
        clock[0] += (m / 256) ** 2
        return dict(error=np.array([256 / m]))
    sizes = []
    with pytest.warns(UserWarning, match=r"stopped growing at 512 centres.*next round \(about 16 s\) would "
                                         r"pass time_budget=20 s; raise time_budget"):
        passes = grow_centers(lambda i, m: sizes.append(m) or timed(i, m), 1, center_sizes(4096),
                              tol=0.01, time_budget=20)
    assert sizes == [256, 512] and len(passes) == 2
    clock[0] = 0.0
    with pytest.warns(UserWarning, match="stopped growing at 1024 centres"):
        assert len(grow_centers(timed, 1, center_sizes(4096), tol=0.01, time_budget=21)) == 3


def test_the_race_ranks_by_the_criterion_one_doubling_ahead():
    # scale 0 starts behind (3.0 against 1.9 at 256) but falls faster: ahead from 1024 centres on
    calls = []

    def score(i, m):
        calls.append((i, m))
        return dict(error=np.array([(1.0 + 2.0 * 256 / m, 1.4 + 0.5 * 256 / m)[i]]))
    grow_centers(score, 2, center_sizes(8192), tol=0.01)
    assert [m for i, m in calls if i == 1] == [256, 512]
    assert [m for i, m in calls if i == 0] == [256, 512, 1024, 2048, 4096, 8192]


def test_the_time_budget_expects_the_growth_seen_so_far(monkeypatch):
    # cost linear in m: 1, 2, 4 s; after 1 + 2 s the round at 1024 is expected to take 4 s (not the
    # 8 s of m²) and fits in 8 s; the next one (8 s more) does not
    clock = [0.0]
    monkeypatch.setattr(center_curve.time, "perf_counter", lambda: clock[0])

    def linear(i, m):
        clock[0] += m / 256
        return dict(error=np.array([256 / m]))
    with pytest.warns(UserWarning, match=r"stopped growing at 1024 centres.*next round \(about 8 s\)"):
        passes = grow_centers(linear, 1, center_sizes(4096), tol=0.01, time_budget=8)
    assert [p["size"] for p in passes] == [256, 512, 1024]


def test_a_flat_curve_takes_no_place_in_the_race():
    # scale 0 flattens at 512 (best there, but gains < tol); scale 2 still falls: it grows, not 0
    # (scale 2 falls fast enough to catch up with 0.995 in the one doubling left; scale 3 does not)
    curves = {0: (1.00, 0.995, 0.99), 1: (1.10, 1.00, 0.90), 2: (1.30, 1.12, 0.98), 3: (1.5, 1.45, 1.4)}
    calls = []

    def score(i, m):
        calls.append((i, m))
        return dict(error=np.array([curves[i][min(int(np.log2(m / 256)), 2)]]))
    grow_centers(score, 4, center_sizes(1024), tol=0.01)
    assert sorted(i for i, m in calls if m == 1024) == [1, 2]


def test_a_budget_before_any_doubling_says_so(monkeypatch):
    score, _ = curve([0.0])
    with pytest.warns(UserWarning, match="stopped growing at 256 centres, before any doubling"):
        grow_centers(score, 1, center_sizes(256), tol=0.01, capped=True)


def test_a_length_scale_that_cannot_catch_up_stops():
    """Scale 1 still gains 5 % RMSE per doubling, and the race has room for it (scales 2 and 3 are
    flat), but falling at that rate up to the last size it stays above scale 0's best: it stops
    (as ℓ = 0.53 on smooth3 at 10⁶ rows did not, for 4 more minutes). With a fast enough gain
    (``fast``) it passes scale 0 within the doublings left and goes on."""
    def race(second):
        def score(i, m):
            if i == 0:  # 1, then 0.5 from 512 on: the best so far, flat
                return dict(error=np.array([1.0 if m == 256 else 0.5]))
            return dict(error=np.array([second(np.log2(m / 256)) if i == 1 else 3.0]))
        calls = []
        grow_centers(lambda i, m: calls.append((i, m)) or score(i, m), 4, center_sizes(4096), tol=0.01)
        return [m for i, m in calls if i == 1]
    # at 512: 1.8 · 0.9³ = 1.31 by 4096, above 0.5
    assert race(lambda doublings: 2.0 * 0.9**doublings) == [256, 512]
    # 1.2 · 0.3³ = 0.03 by 4096: it goes on (0.36 at 1024, 0.108 at 2048, ...)
    assert race(lambda doublings: 4.0 * 0.3**doublings) == [256, 512, 1024, 2048, 4096]

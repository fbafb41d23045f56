"""The compiled Polya-Gamma sampler (estimators/hls/_pg.py): exact moments, and the gamma
series (b > EXACT_MAX) against sums of exact PG(1, z) draws."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from scipy import stats

from pybncsmooth.estimators.hls._pg import EXACT_MAX, pg_draw, pg_draw_with, pg_moments, seed_numba
from pybncsmooth.estimators._rng import new_state, reseed


@njit(cache=False)
def _draws(b, z, n, seed):
    seed_numba(seed)
    out = np.empty(n)
    for i in range(n):
        out[i] = pg_draw(b, z)
    return out


@njit(cache=False)
def _keyed_draws(b, z, n, key):
    # as an update's coupled chains draw: a xoshiro state reseeded for every draw
    s = np.zeros(4, dtype=np.uint64)
    out = np.empty(n)
    for i in range(n):
        reseed(s, np.uint64(key) + np.uint64(i + 1) * np.uint64(0x9E3779B97F4A7C15))
        out[i] = pg_draw_with(b, z, s)
    return out


@njit(cache=False)
def _sums_of_ones(b, z, n, seed):
    seed_numba(seed)
    out = np.empty(n)
    for i in range(n):
        s = 0.0
        for _ in range(b):
            s += pg_draw(1.0, z)
        out[i] = s
    return out


@pytest.mark.parametrize("b,z", [(1, 0.0), (1, 0.7), (1, -4.0), (2, 2.5), (1, 35.0), (3, 0.0), (7, -1.3),
                                 (40, 3.0), (500, 0.2)])
def test_moments(b, z):
    n = 100_000
    x = _draws(float(b), z, n, 11)
    mean, var = pg_moments(float(b), z)
    # four standard errors of the mean; the variance within 3% (its standard error is
    # about sqrt(2 / n) * var for these near-normal to moderately skewed laws, under 1%)
    assert abs(x.mean() - mean) < 4 * np.sqrt(var / n)
    assert x.var() == pytest.approx(var, rel=0.03)
    assert x.min() > 0


def test_moments_by_hand():
    # PG(b, 0): mean b / 4, variance b / 24; PG(1, 2): tanh(1) / 4 and (sinh 2 - 2) / (32 cosh^2 1)
    assert pg_moments(3.0, 0.0) == pytest.approx((0.75, 0.125))
    assert pg_moments(1.0, 2.0) == pytest.approx((np.tanh(1) / 4, (np.sinh(2) - 2) / (32 * np.cosh(1) ** 2)))
    assert pg_moments(1.0, 1e-5)[0] == pytest.approx(0.25, rel=1e-9)


@pytest.mark.parametrize("b,z", [(EXACT_MAX + 1, 0.0), (6, 1.5), (15, -3.0)])
def test_series_matches_sums_of_exact_draws(b, z):
    series = _draws(float(b), z, 40_000, 5)
    exact = _sums_of_ones(b, z, 40_000, 6)
    assert stats.ks_2samp(series, exact).pvalue > 0.01


@pytest.mark.parametrize("b,z", [(1, 0.7), (2, -4.0), (7, -1.3), (500, 0.2)])
def test_keyed_draws_have_the_moments(b, z):
    """PG draws from a xoshiro state (the update's keyed draws): the same law (four
    standard errors of the mean, the variance within 3%), a function of the key alone."""
    n = 60_000
    x = _keyed_draws(float(b), z, n, 99)
    mean, var = pg_moments(float(b), z)
    assert abs(x.mean() - mean) < 4 * np.sqrt(var / n)
    assert x.var() == pytest.approx(var, rel=0.03)
    np.testing.assert_array_equal(x[:50], _keyed_draws(float(b), z, 50, 99))
    assert pg_draw_with(0.0, 1.0, new_state(1)) == 0.0


def test_zero_count_and_reproducibility():
    assert pg_draw(0.0, 1.0) == 0.0
    np.testing.assert_array_equal(_draws(5.0, 1.0, 100, 3), _draws(5.0, 1.0, 100, 3))

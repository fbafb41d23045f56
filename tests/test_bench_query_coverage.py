"""The query-coverage benchmark's Monte Carlo error (fits as clusters), on hand-worked cases."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_query_coverage import clustered_se  # noqa: E402


def test_clustered_se_is_the_spread_of_the_fits_means():
    # two fits of four queries covering 3/4 and 1/4: pooled 0.5, se = sd(0.75, 0.25) / sqrt(2) = 0.25,
    # where the binomial sqrt(0.25 / 8) = 0.177 treats the eight queries as independent
    fits = [np.array([1, 1, 1, 0], bool), np.array([1, 0, 0, 0], bool)]
    assert clustered_se(fits) == pytest.approx(0.25, abs=1e-12)
    # fits of unequal size: the ratio estimator, sqrt(sum m^2 (c - p)^2 / (k (k - 1))) / mean(m)
    fits = [np.ones(2, bool), np.array([1, 0, 0, 0, 0, 0], bool)]
    p = 3 / 8
    want = np.sqrt((4 * (1 - p) ** 2 + 36 * (1 / 6 - p) ** 2) / 2) / 4
    assert clustered_se(fits) == pytest.approx(want, abs=1e-12)
    assert clustered_se([np.ones(3, bool), np.ones(5, bool)]) == 0.0  # every fit covers everything
    assert np.isnan(clustered_se([np.ones(3, bool)]))

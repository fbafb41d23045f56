"""After ``adapt``, the new domain's reported spread is the spread of its own posterior:
``cpt(stat="sd")`` and ``cpt_frame``'s ``sd`` agree with the standard deviation of its
parameter draws, and ``lower`` / ``upper`` with their quantiles, whether the new domain
is taken for a copy of a fitted one, a type of its own like the fitted ones, or an
unusual type (the adapted tables are one Dirichlet mixture: the means, sds and draws
all come from it)."""

from __future__ import annotations

import numpy as np
import pytest

import pybncsmooth as bs
from conftest import _sites


@pytest.mark.parametrize("method", ["hmd", "hdp"])
def test_case2_an_adapted_domains_sd_intervals_and_draws_are_one_posterior(method):
    """Issue 43, case 2: the adapted domain's ``cpt(stat="sd")`` (and ``cpt_frame``'s
    ``sd``) is the spread of its own posterior draws, and ``lower`` / ``upper`` their
    quantiles, as for the fitted domains (for a typical new domain, "s5" here, the sd was
    30-38% above the draws' spread)."""
    df = _sites(4, {"s1": 50, "s2": 80, "s3": 30, "far": 1.0}, 400)
    kw = {"iterations": 300} if method == "hdp" else {}
    net = bs.fit("[A][B|A]", df[df.site != "far"], method=method, domain="site", random_state=0, **kw)
    s2 = df[df.site == "s2"].iloc[:15]
    for label, rows in (("far", df[df.site == "far"].iloc[:30]), ("s5", s2), ("s2", s2)):
        a = net.adapt(rows.drop(columns="site"), label)
        for node in ("A", "B"):
            every = a._posterior_tables(20000, np.random.default_rng(5))[node]
            fr = a.cpt_frame(node, interval=0.9, draws=4000, random_state=1)
            # the adapted domain, and a fitted one beside it in the same network
            _one_posterior(a, node, every, fr, label)
            _one_posterior(a, node, every, fr, "s1")


def _one_posterior(a: bs.FittedNetwork, node: str, every: np.ndarray, fr, label: str) -> None:
    """``label``'s mean, sd, lower and upper of ``node`` against its draws in ``every``."""
    j = a.domains.index(label)
    draws = every[..., j]
    mean, sd = a.cpt(node)[..., j], a.cpt(node, stat="sd")[..., j]
    np.testing.assert_allclose(draws.mean(axis=0), mean, atol=0.004)
    # the sd of 20000 draws is within 2% of the truth (its MC error about 0.5%)
    np.testing.assert_allclose(draws.std(axis=0), sd, rtol=0.03, atol=2e-4)
    mine = fr[fr.site == label]
    np.testing.assert_allclose(mine.sd, sd.reshape(-1, order="F"), rtol=1e-12)
    lo, hi = np.quantile(draws, [0.05, 0.95], axis=0)
    np.testing.assert_allclose(mine.lower, lo.reshape(-1, order="F"), atol=0.012)
    np.testing.assert_allclose(mine.upper, hi.reshape(-1, order="F"), atol=0.012)

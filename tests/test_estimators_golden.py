"""mle and bayes against bnlearn's own bn.fit() tables (golden JSON, exact doubles)."""

from __future__ import annotations

import numpy as np
import pytest

import pybncsmooth as bs
from conftest import load_golden, load_reference_csv, modelstring_of

CASES = [
    ("asia", "mle", {}, "asia.mle.json"),
    ("asia", "bayes", {"iss": 1}, "asia.bayes_iss1.json"),
    ("asia", "bayes", {"iss": 10}, "asia.bayes_iss10.json"),
    ("learning_test", "mle", {}, "learning_test.mle.json"),
    ("learning_test", "bayes", {"iss": 1}, "learning_test.bayes_iss1.json"),
    ("learning_test", "bayes", {"iss": 10}, "learning_test.bayes_iss10.json"),
    # 20000-row networks: many parent configurations never occur, where bnlearn's
    # BDeu posterior is uniform
    ("insurance", "bayes", {"iss": 1}, "insurance.bayes_iss1.json"),
    ("alarm", "bayes", {"iss": 1}, "alarm.bayes_iss1.json"),
]


@pytest.mark.parametrize("data,method,hyper,golden", CASES, ids=[c[3] for c in CASES])
def test_matches_bnlearn_to_1e10(data, method, hyper, golden):
    df = load_reference_csv(data)
    ref = load_golden(golden)
    net = bs.fit(modelstring_of(data), df, method=method, **hyper)
    # bnlearn's node order and parent order are reproduced by the model-string parser
    assert net.nodes == ref["meta"]["node_order"]
    for node, nd in ref["nodes"].items():
        assert net.parents(node) == nd["parents"]
        assert net.children(node) == nd["children"]
        for var, lev in zip(nd["dims"], nd["levels"]):
            assert net.levels(var) == lev
        got = net.cpt(node)
        assert got.shape == nd["table"].shape
        np.testing.assert_allclose(got, nd["table"], rtol=0, atol=1e-10, err_msg=node)


def test_alarm_unseen_configurations_are_uniform_as_in_bnlearn(alarm):
    """alarm has parent configurations that never occur in its 20000 rows: bnlearn's
    BDeu table is uniform there, and so is ours (the 'uniform' unseen rule)."""
    ref = load_golden("alarm.bayes_iss1.json")
    net = bs.fit(modelstring_of("alarm"), alarm, method="bayes", iss=1)
    unseen_cells = 0
    for node in net.nodes:
        cpd = net.cpd(node)
        if not cpd.parents:
            continue
        grids = np.meshgrid(*[np.arange(c) for c in cpd.parent_cards], indexing="ij")
        configs = np.stack([g.ravel() for g in grids], axis=1)
        _, _, unseen = net.tree(node).find(configs)
        if not unseen.any():
            continue
        golden = ref["nodes"][node]["table"]
        for cfg in configs[unseen]:
            col = golden[(slice(None),) + tuple(cfg)]
            np.testing.assert_allclose(col, 1.0 / cpd.card, atol=1e-15)
            np.testing.assert_allclose(net.cpt(node)[(slice(None),) + tuple(cfg)], col, atol=1e-15)
            unseen_cells += 1
    assert unseen_cells == 7


def test_mle_unseen_configuration_backs_off_not_nan():
    import pandas as pd

    df = pd.DataFrame({"A": ["x", "x", "y", "y"], "B": ["u", "u", "u", "v"], "C": ["p", "q", "p", "q"]})
    net = bs.fit("[A][B][C|A:B]", df, method="mle")
    t = net.cpt("C")  # axes C, A, B; (A=x, B=v) never occurs
    assert not np.isnan(t).any()
    # back-off to the deepest ancestor: P(C | A=x) = (1/2, 1/2)
    np.testing.assert_allclose(t[:, 0, 1], [0.5, 0.5])
    net_u = bs.fit("[A][B][C|A:B]", df, method="mle", unseen="uniform")
    np.testing.assert_allclose(net_u.cpt("C")[:, 0, 1], [0.5, 0.5])
    # a deeper check where back-off and uniform differ
    df2 = pd.DataFrame({"A": ["x"] * 4 + ["y"], "B": ["u"] * 4 + ["u"], "C": ["p", "p", "p", "q", "q"]})
    df2["B"] = pd.Categorical(df2["B"], categories=["u", "v"])
    backoff = bs.fit("[A][B][C|A:B]", df2, method="mle").cpt("C")
    np.testing.assert_allclose(backoff[:, 0, 1], [0.75, 0.25])  # P(C | A=x)
    uniform = bs.fit("[A][B][C|A:B]", df2, method="mle", unseen="uniform").cpt("C")
    np.testing.assert_allclose(uniform[:, 0, 1], [0.5, 0.5])

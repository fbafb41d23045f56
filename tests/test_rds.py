"""bnlearn objects through rpy2: the reference .rds files, and objects we write."""

from __future__ import annotations

import numpy as np
import pytest

import pybncsmooth as bs
from pybncsmooth.interop.rds import r_available
from conftest import BNLEARN, load_golden, load_reference_csv, modelstring_of

pytestmark = [
    pytest.mark.r,
    pytest.mark.skipif(not r_available(), reason="R and rpy2 are not installed"),
]


@pytest.mark.parametrize("name", ["asia", "insurance", "alarm"])
def test_bn_fit_rds_equals_golden(name):
    net = bs.read_network(BNLEARN / f"{name}.bn.fit.rds")
    ref = load_golden(f"{name}.bayes_iss1.json")
    assert net.nodes == ref["meta"]["node_order"]
    for node, nd in ref["nodes"].items():
        assert net.parents(node) == nd["parents"]
        # the .rds holds the exact doubles
        np.testing.assert_allclose(net.cpt(node), nd["table"], rtol=0, atol=1e-15)


@pytest.mark.parametrize("name", ["asia", "insurance", "alarm"])
def test_bn_rds_is_the_dag(name):
    dag = bs.read_network(BNLEARN / f"{name}.bn.rds")
    assert isinstance(dag, bs.DAG)
    assert dag == bs.DAG.from_modelstring(modelstring_of(name))


def test_hc_learned_mle_fit():
    net = bs.read_network(BNLEARN / "asia.hc_learned.bn.fit.rds")
    assert net.modelstring() == (BNLEARN / "asia.hc_learned.modelstring.txt").read_text().strip()


def _r_all_equal(path_a: str, path_b: str) -> bool:
    import rpy2.robjects as ro

    res = ro.r(f'isTRUE(all.equal(readRDS("{path_a}"), readRDS("{path_b}"), tolerance = 1e-14))')
    return bool(res[0])


def test_written_bn_fit_equals_bnlearns_object(tmp_path):
    for name in ["asia", "alarm"]:
        net = bs.fit(modelstring_of(name), load_reference_csv(name), method="bayes", iss=1)
        out = tmp_path / f"{name}.rds"
        net.write(out)
        # same fields, classes, dimnames and numbers as bnlearn's own bn.fit object
        assert _r_all_equal(str(out), str(BNLEARN / f"{name}.bn.fit.rds"))
        assert bs.read_network(out).max_abs_diff(net) < 1e-15


def test_written_bn_equals_model2network(tmp_path):
    import rpy2.robjects as ro

    dag = bs.DAG.from_modelstring(modelstring_of("alarm"))
    out = tmp_path / "alarm_bn.rds"
    bs.write_network(dag, out)
    ro.r(f'ours <- readRDS("{out}"); ref <- readRDS("{BNLEARN / "alarm.bn.rds"}")')
    # same class, learning metadata and per-node fields (mb, nbr, parents, children)
    assert bool(ro.r("identical(class(ours), class(ref)) && identical(ours$learning, ref$learning)")[0])
    assert bool(ro.r("identical(ours$nodes, ref$nodes)")[0])
    # the arcs matrix lists the same arcs (bnlearn keeps the model string's order)
    key = "paste(x[, 'from'], x[, 'to'])"
    assert bool(ro.r(f"x <- ours$arcs; a <- sort({key}); x <- ref$arcs; b <- sort({key}); identical(a, b)")[0])
    assert bool(ro.r("identical(dimnames(ours$arcs), dimnames(ref$arcs))")[0])

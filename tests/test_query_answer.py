"""The fixed costs of a small query and of a small read, cut without changing a result:
the joint of a tiny network (NaN where the evidence is impossible), the one-lookup evidence codes
against the general rule (and not stale when the network's levels change), the
assembled answer against pandas' public constructors, and the reader's file helpers
against the standard library's."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.data.schema import Schema
from pybncsmooth.errors import DataError, FileFormatError, UnknownNodeError, UnseenLevelError
from pybncsmooth.interop.io import read_text
from pybncsmooth.model import formats
from pybncsmooth.model.query import answer as query_answer, joint as query_joint
from pybncsmooth.model.cpd import TableCPD
from pybncsmooth.model.query.evidence import dict_codes
from pybncsmooth.validation import check_file

from conftest import bnlearn_path
from test_query import random_network


def _broadcast_joint(net: bs.FittedNetwork) -> tuple[np.ndarray, tuple[str, ...]]:
    """The joint as numpy's broadcast products build it, the newest axis first."""
    joint, have = np.ones(()), []
    for v in net.dag.topological_order():
        t, pa = net.cpt(v), net.parents(v)  # (node, *parents)
        fam = sorted(range(len(pa)), key=lambda i: have.index(pa[i]))
        shape = [t.shape[0]] + [1] * len(have)
        for i in fam:
            shape[1 + have.index(pa[i])] = t.shape[1 + i]
        joint = t.transpose([0, *(1 + i for i in fam)]).reshape(shape) * joint[None]
        have.insert(0, v)
    return joint, tuple(have)


@pytest.mark.parametrize("seed", range(3))
def test_the_joints_answer_is_the_broadcast_products_slice(seed):
    net = random_network(7, seed)
    got, order = query_joint.joint_table(net)
    want, want_order = _broadcast_joint(net)
    assert order == want_order and got.tobytes() == want.tobytes()
    target, ev = net.nodes[0], {net.nodes[-1]: 1, net.nodes[-2]: 0}
    post = query_joint.joint_posterior(net, (target,), ev, 1 << 30)[0]
    at = [ev.get(v, slice(None)) for v in order]
    cut = want[tuple(at)]
    kept = [v for v in order if v not in ev]
    marg = cut.sum(axis=tuple(i for i, v in enumerate(kept) if v != target))
    np.testing.assert_allclose(post, marg / marg.sum(), rtol=1e-13, atol=0)


def test_impossible_evidence_gives_nan_throughout():
    net = random_network(5, 1)
    cpds = {v: net.cpd(v) for v in net.nodes}
    t = net.cpt(net.nodes[0]).copy()
    t[0], t[1:] = 0.0, t[1:] / t[1:].sum(axis=0)
    cpds[net.nodes[0]] = TableCPD(net.nodes[0], [], t)
    zero = bs.FittedNetwork(net.dag, net.schema, cpds)
    post = query_joint.joint_posterior(zero, (net.nodes[1],), {net.nodes[0]: 0}, 1 << 30)
    assert post.shape == (1, len(net.levels(net.nodes[1]))) and np.isnan(post).all()


def test_the_joint_of_a_file_and_of_a_fit():
    net = bs.read_network(bnlearn_path("asia.bif"))
    got, _ = query_joint.joint_table(net)
    assert got.tobytes() == _broadcast_joint(net)[0].tobytes()
    fitted = bs.fit(net.dag, net.sample(200, random_state=3), method="bayes", iss=1)
    got, _ = query_joint.joint_table(fitted)
    assert got.tobytes() == _broadcast_joint(fitted)[0].tobytes()
    # a table whose smallest entries could underflow in the joint: no joint, the plan answers
    tiny = {v: TableCPD(v, net.parents(v), np.where(net.cpt(v) > 0.5, 1 - 1e-300, 1e-300)) for v in net.nodes}
    assert query_joint.joint_table(bs.FittedNetwork(net.dag, net.schema, tiny)) is None


def _general_codes(net, evidence, targets):
    """dict_codes through its general rule (a Mapping that is not a dict)."""
    from types import MappingProxyType

    return dict_codes(net, MappingProxyType(dict(evidence)), targets)


def test_text_evidence_codes_are_the_general_rules_in_node_order():
    net = bs.read_network(bnlearn_path("asia.bif"))
    rng = np.random.default_rng(0)
    for _ in range(30):
        vs = list(rng.choice(net.nodes, 4, replace=False))
        ev = {v: str(rng.choice(net.levels(v))) for v in vs[1:]}
        got = dict_codes(net, ev, (vs[0],))
        assert got == _general_codes(net, ev, (vs[0],)) and list(got) == [v for v in net.nodes if v in ev]
    with pytest.raises(UnknownNodeError, match="nope"):
        dict_codes(net, {"nope": "yes"}, ("A",))
    with pytest.raises(UnseenLevelError, match="maybe"):
        dict_codes(net, {"S": "maybe"}, ("A",))
    with pytest.raises(DataError, match="both a query target and evidence"):
        dict_codes(net, {"A": "yes"}, ("A",))
    assert dict_codes(net, {"S": None, "T": "yes"}, ("A",)) == {"T": 1}  # the general rule's missing value


def test_evidence_codes_follow_a_network_whose_levels_change():
    net = bs.read_network(bnlearn_path("asia.bif"))
    assert dict_codes(net, {"S": "yes"}, ("A",)) == {"S": 1}
    net.schema = Schema({v: tuple(reversed(net.schema[v])) for v in net.nodes}, frozenset(net.nodes))
    assert dict_codes(net, {"S": "yes"}, ("A",)) == {"S": 0}


def test_numbers_naming_text_levels_take_the_general_rule():
    net = bs.read_network(bnlearn_path("alarm.bif"))
    text = {v: str(net.levels(v)[0]) for v in net.nodes[1:4]}
    assert dict_codes(net, text, (net.nodes[0],)) == {v: 0 for v in text}
    numeric = bs.FittedNetwork(net.dag, Schema({v: tuple(range(len(net.levels(v)))) for v in net.nodes}),
                               {v: TableCPD(v, net.parents(v), net.cpt(v)) for v in net.nodes})
    assert dict_codes(numeric, {v: "1" for v in text}, (net.nodes[0],)) == {v: 1 for v in text}


@pytest.mark.parametrize("name", ["asia.bif", "alarm.bif"])
def test_the_assembled_answer_is_the_public_constructors(name):
    net = bs.read_network(bnlearn_path(name))
    for target in net.nodes[:6]:
        got = net.query(target, {net.nodes[-1]: net.levels(net.nodes[-1])[0]} if target != net.nodes[-1] else None)
        levels = list(net.levels(target))
        want = pd.Series(got.to_numpy().copy(), name="prob",
                         index=pd.CategoricalIndex(levels, categories=levels, name=target))
        pd.testing.assert_series_equal(got, want, check_exact=True)
        assert got.index.categories.dtype == want.index.categories.dtype and got.flags.allows_duplicate_labels
    texts = ["b", "a", "<7.5", "a b"]
    pd.testing.assert_index_equal(query_answer._text_index(texts), pd.Index(texts), exact=True)


def test_answers_equal_the_general_path_after_a_change_of_levels():
    """The cached index follows the schema the network was built with: a new network
    over other levels answers with its own."""
    net = bs.read_network(bnlearn_path("asia.bif"))
    first = net.query("A", {"S": "yes"})
    renamed = Schema({v: tuple(f"{l}!" for l in net.schema[v]) for v in net.nodes}, frozenset(net.nodes))
    other = bs.FittedNetwork(net.dag, renamed, {v: net.cpd(v) for v in net.nodes})  # the same tables
    second = other.query("A", {"S": "yes!"})
    assert first.to_numpy().tobytes() == second.to_numpy().tobytes()
    assert list(second.index) == ["no!", "yes!"] and list(first.index) == ["no", "yes"]


def test_read_text_gives_text_modes_line_ends(tmp_path):
    raw = "network a {\r\n}\rvariable x {\n  type discrete [ 2 ] { a, b };\r\n}\n"
    for name, data in [("a.bif", raw.encode()), ("b.bif.gz", gzip.compress(raw.encode()))]:
        p = tmp_path / name
        p.write_bytes(data)
        opener = gzip.open if name.endswith(".gz") else open
        with opener(p, "rt", encoding="utf-8") as fh:
            assert read_text(str(p)) == fh.read() == raw.replace("\r\n", "\n").replace("\r", "\n")
    bad = tmp_path / "c.bif"
    bad.write_bytes(b"network \xff {}")
    with pytest.raises(FileFormatError, match="byte 8 is not UTF-8"):
        read_text(str(bad))


def test_check_file_names_a_missing_path_and_a_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such network file"):
        check_file(tmp_path / "none.bif", "network file")
    with pytest.raises(IsADirectoryError, match="is a folder"):
        check_file(tmp_path, "network file")
    with pytest.raises(FileNotFoundError):
        check_file("a\0b", "network file")  # what os.path.exists calls no file
    (tmp_path / "x.bif").write_text("")
    assert check_file(tmp_path / "x.bif") == os.fspath(tmp_path / "x.bif")


@pytest.mark.parametrize("path", ["a.bif", "/x/y.BIF", ".bif", "a/.bif", "x.", "a.bif/", "a.tar.gz", "noext", "/",
                                  "", "a..b", "dir.d/file", "..", ".", "./a.net", "a.bif//", "b.XML.gz"])
def test_the_suffix_is_paths(path):
    assert formats._suffix(path) == Path(path).suffix.lower()


def test_the_extension_table_follows_a_new_format(tmp_path):
    before = formats.format_extensions()
    assert formats.network_format("x.bif").name == "bif" and ".bif" in before
    seen = []
    fmt = formats.NetworkFormat("toyfmt", (".toyfmt",), lambda p: seen.append(p), lambda *a: None)
    try:
        formats.register_format(fmt)
        assert formats.network_format("a/B.TOYFMT.gz") is fmt and formats.format_extensions()[".toyfmt"] == "toyfmt"
    finally:
        formats._FORMATS.pop("toyfmt")
        formats.register_format(formats.get_format("bif"))  # the table rebuilt without it
    with pytest.raises(FileFormatError, match="cannot tell the format"):
        formats.network_format("a.toyfmt")


def test_a_checked_tables_cpd_is_the_validated_one():
    net = bs.read_network(bnlearn_path("alarm.bif"))
    for v in net.nodes:
        got, want = net.cpd(v), TableCPD(v, net.parents(v), net.cpt(v), normalize=False)
        assert (got.node, got.parents, got.card, got.parent_cards) == (want.node, want.parents, want.card,
                                                                        want.parent_cards)
        assert all(type(c) is int for c in got.parent_cards)
        assert np.array_equal(got._matrix(0), want._matrix(0))

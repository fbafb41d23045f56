"""The ContextTree: exact counts, invariances, merging, chunked counting."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.counting import ContextTree, count_tree
from pybncsmooth.counting import context_tree as ct_mod
from pybncsmooth.counting import network as network_mod
from pybncsmooth.counting.network import count_network, count_specs
from pybncsmooth.data import encode
from conftest import modelstring_of


def small_tree() -> ContextTree:
    # child X (2 levels), parents P1 (3 levels), P2 (2 levels)
    x = np.array([0, 1, 1, 0, 0, 1, 1])
    p1 = np.array([0, 0, 2, 2, 2, 0, 2])
    p2 = np.array([1, 1, 0, 1, 0, 0, 0])
    return count_tree("X", ["P1", "P2"], x, [p1, p2], 2, [3, 2])


def test_exact_counts_of_a_small_tree():
    t = small_tree()
    assert t.level_sizes() == [1, 2, 4]  # P1 = 1 never occurs
    np.testing.assert_array_equal(t.levels[0].counts, [[3, 4]])
    # level 1: P1 = 0 and P1 = 2
    np.testing.assert_array_equal(t.levels[1].value, [0, 2])
    np.testing.assert_array_equal(t.levels[1].counts, [[1, 2], [2, 2]])
    # level 2: (0,0) (0,1) (2,0) (2,1)
    np.testing.assert_array_equal(t.levels[2].parent, [0, 0, 1, 1])
    np.testing.assert_array_equal(t.levels[2].value, [0, 1, 0, 1])
    np.testing.assert_array_equal(t.levels[2].counts, [[0, 1], [1, 1], [1, 2], [1, 0]])
    np.testing.assert_array_equal(t.node_configs(2), [[0, 0], [0, 1], [2, 0], [2, 1]])
    assert t.total == 7 and t.n_nodes == 7 and t.n_leaves == 4
    np.testing.assert_array_equal(t.keys[2], [0, 1, 2, 3])
    np.testing.assert_array_equal(t.children_slices(1), [0, 2, 4])


def test_find_deepest_node():
    t = small_tree()
    P = np.array([[2, 1], [1, 0], [0, -1], [-1, 0], [2, 0]])
    level, node, unseen = t.find(P)
    np.testing.assert_array_equal(level, [2, 0, 1, 0, 2])
    np.testing.assert_array_equal(node, [3, 0, 0, 0, 2])
    np.testing.assert_array_equal(unseen, [False, True, False, False, False])


def _tree_invariants(t: ContextTree) -> None:
    for i in range(t.depth):
        child = t.levels[i + 1]
        sums = np.zeros_like(t.levels[i].counts)
        np.add.at(sums, child.parent, child.counts)
        np.testing.assert_array_equal(sums, t.levels[i].counts)
        # keys strictly increasing (lexicographic order of configurations)
        assert np.all(np.diff(t.keys[i + 1]) > 0)
    assert (t.levels[-1].counts.sum(axis=1) > 0).all()


def test_internal_counts_are_sums_on_alarm(alarm):
    net = bs.fit(modelstring_of("alarm"), alarm, method="mle")
    for n in net.nodes:
        t = net.tree(n)
        _tree_invariants(t)
        assert t.total == 20000


def test_row_order_does_not_matter(asia):
    dag = bs.datasets.structure("asia")
    enc = encode(asia)
    perm = np.random.default_rng(0).permutation(len(asia))
    enc2 = encode(asia.iloc[perm])
    a, b = count_network(enc, dag), count_network(enc2, dag)
    assert all(a[n] == b[n] for n in dag.nodes)


def test_three_counting_strategies_agree(monkeypatch):
    rng = np.random.default_rng(1)
    n, cards = 3000, [7, 5, 9, 4]
    cols = [rng.integers(0, c, n) for c in cards]
    x = rng.integers(0, 3, n)
    dense = count_tree("X", list("ABCD"), x, cols, 3, cards)
    monkeypatch.setattr(ct_mod, "_DENSE_MIN_CELLS", 0)
    monkeypatch.setattr(ct_mod, "_DENSE_ROWS_FACTOR", 0)
    unique = count_tree("X", list("ABCD"), x, cols, 3, cards)
    monkeypatch.setattr(ct_mod, "_INT64_SAFE", 0)
    lexsort = count_tree("X", list("ABCD"), x, cols, 3, cards)
    assert dense == unique == lexsort
    _tree_invariants(dense)
    # brute force: the leaf counts
    configs, counts = dense.leaf_table()
    for cfg, cnt in zip(configs[:50], counts[:50]):
        mask = np.ones(n, dtype=bool)
        for c, v in zip(cols, cfg):
            mask &= c == v
        np.testing.assert_array_equal(cnt, np.bincount(x[mask], minlength=3))


@pytest.mark.parametrize("index_bits", [32, 64])
def test_network_counting_equals_one_tree_at_a_time(monkeypatch, index_bits):
    """The one-pass counting of every node (cell indices as int32 or int64; nodes of a
    few cells counted into interleaved histograms, nodes of more than 4,096 cells
    directly; rows with a missing code in the family skipped) gives the trees the sort
    of one node's rows gives (the weighted path, weights 1), for every row count mod 4."""
    if index_bits == 64:
        monkeypatch.setattr(network_mod, "_INT32_CELLS", 0)
    rng = np.random.default_rng(5)
    cards = {"A": 3, "B": 9, "C": 8, "D": 7, "E": 4, "F": 2}
    n = 4003
    cols = {v: rng.integers(0, c, n) for v, c in cards.items()}
    frame = pd.DataFrame({v: pd.Categorical.from_codes(c, [f"{v}{i}" for i in range(cards[v])]) for v, c in cols.items()})
    holey = frame.copy()
    for v in "BE":
        holey.loc[rng.random(n) < 0.05, v] = np.nan
    dag = bs.DAG.from_modelstring("[A][B|A][C|A:B][D|B:C][E|B:C:D:A][F|E]")  # E: 4 x 1512 cells, F: 8
    specs = [(v, tuple(dag.parents(v))) for v in dag.nodes]
    for df, na in ((frame, "error"), (holey, "available")):
        for rows in (n, n - 1, n - 2, n - 3):
            enc = encode(df.iloc[:rows], na=na)
            dense = count_network(enc, dag)
            one_by_one = count_specs(enc, specs, weights=np.ones(rows))
            for (v, _), t in zip(specs, one_by_one):
                assert [len(lev.value) for lev in dense[v].levels] == [len(lev.value) for lev in t.levels]
                for a, b in zip(dense[v].levels, t.levels):
                    np.testing.assert_array_equal(a.parent, b.parent)
                    np.testing.assert_array_equal(a.value, b.value)
                    np.testing.assert_array_equal(a.counts, b.counts)
                assert dense[v].levels[-1].counts.dtype == np.int64
    full = count_network(encode(frame), dag)
    assert full["E"].total == n and full["E"].child_card * np.prod(full["E"].parent_cards) > 4096


def test_wide_configuration_space_beyond_int64():
    # 40 parents of 5 levels: 5^40 configurations, far beyond 64-bit codes
    rng = np.random.default_rng(2)
    n, d = 500, 40
    cols = [rng.integers(0, 5, n) for _ in range(d)]
    x = rng.integers(0, 2, n)
    t = count_tree("X", [f"P{i}" for i in range(d)], x, cols, 2, [5] * d)
    assert t.n_leaves == 500 and t.total == 500
    _tree_invariants(t)
    level, node, unseen = t.find(np.column_stack(cols))
    assert (level == d).all() and not unseen.any()


def test_merge_equals_one_shot(asia):
    dag = bs.datasets.structure("asia")
    whole = count_network(encode(asia), dag)
    parts = [count_network(encode(asia.iloc[i : i + 1234]), dag) for i in range(0, 5000, 1234)]
    for n in dag.nodes:
        merged = parts[0][n].merge(*[p[n] for p in parts[1:]])
        assert merged == whole[n]
        assert (parts[0][n] + parts[1][n]).total == 2468


def test_merge_rejects_incompatible_trees():
    t = small_tree()
    other = count_tree("X", ["P1"], np.array([0]), [np.array([0])], 2, [3])
    with pytest.raises(bs.errors.DataError, match="cannot merge"):
        t.merge(other)


def test_chunked_fit_equals_one_shot_with_level_unions():
    # levels appear in different chunks (including the NA level): the chunked
    # counting must recode onto the united sorted levels
    df = pd.DataFrame(
        {
            "A": ["b", "b", "a", "c", None, "a", "d", "b"],
            "B": ["y", "x", "x", "y", "y", "z", "x", "z"],
            "C": ["1", "2", "2", "1", "1", "2", "3", "1"],
        }
    )
    ms = "[A][B|A][C|A:B]"
    one = bs.fit(ms, df, method="mle", na="level")
    chunks = [df.iloc[0:2], df.iloc[2:3], df.iloc[3:5], df.iloc[5:8]]
    many = bs.fit(ms, chunks, method="mle", na="level")
    assert many.levels("A") == one.levels("A") == ["a", "b", "c", "d", "<NA>"]
    for n in one.nodes:
        assert many.tree(n) == one.tree(n)
        assert np.array_equal(many.cpt(n), one.cpt(n))
    # a generator works too, and empty chunks are skipped
    gen = (c for c in [df.iloc[:0], *chunks])
    assert bs.fit(ms, gen, method="mle", na="level").tree("C") == one.tree("C")


def test_csv_read_in_chunks_equals_one_shot(tmp_path, alarm):
    path = tmp_path / "alarm.csv"
    alarm.to_csv(path, index=False)
    ms = modelstring_of("alarm")
    one = bs.fit(ms, path, method="bayes", iss=1)
    chunked = bs.fit(ms, path, method="bayes", iss=1, chunksize=3001)
    for n in one.nodes:
        assert chunked.tree(n) == one.tree(n)
    # text read from CSV sorts levels in byte order; the reference data's factor
    # order differs for some variables but the counts per level are the same
    ref = bs.fit(ms, alarm, method="bayes", iss=1)
    for n in one.nodes:
        assert sorted(one.levels(n)) == sorted(ref.levels(n))


def test_parquet_chunks(tmp_path, asia):
    pytest.importorskip("pyarrow")
    path = tmp_path / "asia.parquet"
    asia.to_parquet(path)
    ms = modelstring_of("asia")
    one = bs.fit(ms, asia, method="bayes")
    pq = bs.fit(ms, path, method="bayes", chunksize=700)
    assert pq.nodes == one.nodes
    assert all(pq.tree(n) == one.tree(n) for n in one.nodes)


def test_available_case_counting_skips_rows_per_node():
    df = pd.DataFrame({"A": ["x", "y", None, "x"], "B": ["u", None, "v", "v"]})
    net = bs.fit("[A][B|A]", df, method="mle", na="available")
    assert net.tree("A").total == 3
    assert net.tree("B").total == 2  # rows with both A and B observed
    np.testing.assert_allclose(net.cpt("B")[:, 0], [0.5, 0.5])


def test_recode_onto_a_wider_schema():
    t = small_tree()
    # child levels 0,1 -> 1,2 of 3; P1 levels 0..2 -> 2,0,1; P2 unchanged
    r = t.recode(np.array([1, 2]), [np.array([2, 0, 1]), None], 3, [3, 2])
    assert r.child_card == 3 and r.total == t.total
    np.testing.assert_array_equal(r.levels[0].counts, [[0, 3, 4]])
    np.testing.assert_array_equal(r.levels[1].value, [1, 2])  # old 2 -> 1, old 0 -> 2

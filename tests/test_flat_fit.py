"""The closed forms' one pass over the counting's flat arrays (``Estimator.estimate_flat``,
CPDs made when first read) gives every number the per-tree path gives, exactly."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.counting import context_tree as ct
from pybncsmooth.counting.flat import TreeMap
from pybncsmooth.counting.network import count_network
from pybncsmooth.data import encode
from pybncsmooth.estimators import make_estimator
from pybncsmooth.model.cpd import LazyTreeCPD, TreeCPD
from pybncsmooth.options import Options
from pybncsmooth.pipeline import estimate_network

REF = Path(__file__).parent / "data" / "bnlearn"
ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"


def _alarm() -> tuple[bs.DAG, pd.DataFrame]:
    df = pd.read_csv(REF / "alarm.csv.gz", dtype="category").iloc[:1500]
    return bs.DAG.from_modelstring((REF / "alarm.modelstring.txt").read_text().strip()), df


def _asia_holes() -> tuple[bs.DAG, pd.DataFrame]:
    df = bs.load_dataset("asia").iloc[:2000].copy()
    rng = np.random.default_rng(0)
    for c in df.columns:
        df.loc[rng.random(len(df)) < 0.05, c] = np.nan
    return bs.DAG.from_modelstring(ASIA), df


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return np.array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("data", [_alarm, _asia_holes])
@pytest.mark.parametrize("method, hyper", [("mle", {}), ("mle", {"unseen": "uniform"}), ("bayes", {}),
                                           ("bayes", {"iss": 7.0, "unseen": "backoff"}), ("mestimate", {"m": 3.0})])
def test_the_flat_pass_equals_the_per_tree_path(data, method, hyper):
    dag, df = data()
    enc = encode(df, na="available")
    trees = count_network(enc, dag)
    assert isinstance(trees, TreeMap) and trees.all_flat(dag.nodes)
    options = Options.build("fit")
    est = make_estimator(method, options=options, **hyper)
    lean = estimate_network(dag, enc.schema, trees, est, options)
    full = estimate_network(dag, enc.schema, dict(trees.items()), est, options)  # a plain dict: tree by tree
    for n in dag.nodes:
        a, b = lean.cpd(n), full.cpd(n)
        assert type(a) is LazyTreeCPD and type(b) is TreeCPD
        assert a.tree is trees[n] and a.tree == b.tree
        ea, eb = a.estimate, b.estimate
        for field in ("probs", "sd", "unseen_sd", "fallback", "fallback_sd"):
            assert _same(getattr(ea, field), getattr(eb, field)), (n, field)
        assert ea.unseen == eb.unseen and type(ea.posterior) is type(eb.posterior)
        if method in ("bayes", "mestimate"):
            assert _same(ea.posterior.level_alpha, eb.posterior.level_alpha)
        assert np.array_equal(lean.cpt(n), full.cpt(n))
        assert np.array_equal(lean.cpd(n).table(stat="sd"), full.cpd(n).table(stat="sd"))


def test_nodes_counted_by_a_sort_beside_the_flat_ones():
    """A node whose configurations outnumber the data's cells is counted by a sort (its
    tree whole): it is estimated tree by tree beside the flat pass of the others."""
    rng = np.random.default_rng(1)
    cols = {f"P{i}": rng.integers(0, 9, 300).astype(str) for i in range(6)}
    cols["Y"] = rng.integers(0, 3, 300).astype(str)
    df = pd.DataFrame(cols)
    dag = bs.DAG({"Y": [f"P{i}" for i in range(6)], **{f"P{i}": [] for i in range(6)}})
    trees = count_network(encode(df), dag)
    assert "Y" not in trees.index and trees.flat is not None  # 3 * 9**6 cells: sorted
    options = Options.build("fit")
    for method in ("bayes", "mle", "mestimate"):
        est = make_estimator(method, options=options)
        lean = estimate_network(dag, encode(df).schema, trees, est, options)
        full = estimate_network(dag, encode(df).schema, dict(trees.items()), est, options)
        assert type(lean.cpd("Y")) is TreeCPD and type(lean.cpd("P0")) is LazyTreeCPD
        for n in dag.nodes:
            assert np.array_equal(lean.cpt(n), full.cpt(n))
            assert _same(lean.cpd(n).estimate.probs, full.cpd(n).estimate.probs)


def test_a_fitted_network_reads_its_nodes_lazily_and_pickles_whole():
    dag, df = _alarm()
    net = bs.fit(dag, df, method="bayes", iss=2.0)
    cpd = net.cpd("HR")
    assert type(cpd) is LazyTreeCPD and "tree" not in cpd.__dict__  # nothing made before it is read
    back = pickle.loads(pickle.dumps(net))
    for n in net.nodes:
        assert type(back.cpd(n)) is TreeCPD
        assert np.array_equal(back.cpt(n), net.cpt(n)) and np.array_equal(back.cpd(n).table(stat="sd"), net.cpd(n).table(stat="sd"))
    assert np.array_equal(net.update(df.iloc[:300]).cpt("HR"), bs.fit(dag, pd.concat([df, df.iloc[:300]]),
                                                                    method="bayes", iss=2.0).cpt("HR"))


def _wide_tables(rows: int = 400) -> tuple[bs.DAG, pd.DataFrame]:
    """Y | A, B (1,600 configurations x 60 levels) and W | Y, C, A (7,200 x 12): tables far
    larger than the rows over few configurations; S | A, B, Y (96,000 configurations,
    more than the counting's limit); 5% of every column missing."""
    rng = np.random.default_rng(3)
    a, b, c = rng.integers(0, 40, rows), rng.integers(0, 40, rows), rng.integers(0, 3, rows)
    y = (a + b + rng.integers(0, 8, rows)) % 60
    w = (y + c + rng.integers(0, 3, rows)) % 12
    s = (a + rng.integers(0, 2, rows)) % 4
    df = pd.DataFrame({k: v.astype(str) for k, v in dict(A=a, B=b, C=c, Y=y, W=w, S=s).items()}).astype(object)
    for col in df.columns:
        df.loc[rng.random(rows) < 0.05, col] = np.nan
    dag = bs.DAG({"A": [], "B": [], "C": [], "Y": ["A", "B"], "W": ["Y", "C", "A"], "S": ["A", "B", "Y"]})
    return dag, df


def _assert_same_estimates(lean, full, nodes, sds: bool) -> None:
    """Every node's estimate fields and table (and, with ``sds``, its table of sds) equal
    bit for bit."""
    for n in nodes:
        ea, eb = lean.cpd(n).estimate, full.cpd(n).estimate
        for field in ("probs", "sd", "unseen_sd", "fallback", "fallback_sd"):
            assert _same(getattr(ea, field), getattr(eb, field)), (n, field)
        assert np.array_equal(lean.cpt(n), full.cpt(n)), n
        if sds:
            assert np.array_equal(lean.cpd(n).table(stat="sd"), full.cpd(n).table(stat="sd")), n


@pytest.mark.parametrize("method, hyper", [("mle", {"unseen": "uniform"}), ("bayes", {}),
                                           ("bayes", {"iss": 7.0, "unseen": "backoff"}), ("mestimate", {"m": 3.0})])
def test_few_configurations_of_large_tables_count_as_the_sort_does(method, hyper):
    """Nodes whose dense table dwarfs the rows but whose configurations do not are counted
    from their rows' configurations alone (``sparse_leaves``): trees, estimates and tables
    equal to those of the general path (every tree counted by a sort, estimated tree by
    tree), missing values skipped family by family."""
    dag, df = _wide_tables()
    enc = encode(df, na="available")
    trees = count_network(enc, dag)
    limit = max(ct._DENSE_MIN_CELLS, ct._DENSE_ROWS_FACTOR * enc.n_rows)
    card = enc.schema.cardinality
    for n in ("Y", "W"):
        q = int(np.prod([card(p) for p in dag.parents(n)]))
        assert q * card(n) > limit >= q and n in trees.index  # the sparse path, in the flat arrays
    assert "S" not in trees.index and {"A", "B", "C"} <= set(trees.index)  # sorted; dense
    sorted_trees = {n: ct.count_tree(n, dag.parents(n), enc[n], [enc[p] for p in dag.parents(n)], card(n),
                                     [card(p) for p in dag.parents(n)]) for n in dag.nodes}
    assert all(trees[n] == sorted_trees[n] for n in dag.nodes)
    assert trees["W"].levels[-1].counts.sum() < len(df) - 60  # rows with a missing family value left out
    options = Options.build("fit")
    est = make_estimator(method, options=options, **hyper)
    lean = estimate_network(dag, enc.schema, trees, est, options)
    full = estimate_network(dag, enc.schema, sorted_trees, est, options)
    _assert_same_estimates(lean, full, dag.nodes, sds=method != "mestimate")
    assert np.allclose(lean.cpt("W").sum(axis=0), 1.0)  # (W, Y, C, A): every configuration a distribution


def _leaf_heavy(rows: int = 500) -> tuple[bs.DAG, pd.DataFrame]:
    """Children of many levels seen a few times under each configuration, on every
    counting route: Z | A, C (dense: 120 configurations x 50 levels), Y | A, B (sparse
    rows: 1,600 x 60), S | A, B, Y (sorted: 96,000 configurations), R (no parent, 90
    levels, some unseen); 4% of every column missing."""
    rng = np.random.default_rng(11)
    a, b, c = rng.integers(0, 40, rows), rng.integers(0, 40, rows), rng.integers(0, 3, rows)
    z = (2 * a + c + rng.integers(0, 5, rows)) % 50
    y = (a + b + rng.integers(0, 8, rows)) % 60
    s = (a + rng.integers(0, 2, rows)) % 4
    r = rng.integers(0, 80, rows)
    df = pd.DataFrame({k: pd.Categorical(v, categories=range(n)) for k, v, n in
                       [("A", a, 40), ("B", b, 40), ("C", c, 3), ("Z", z, 50), ("Y", y, 60), ("S", s, 4), ("R", r, 90)]})
    for col in df.columns:
        df.loc[rng.random(rows) < 0.04, col] = np.nan
    dag = bs.DAG({"A": [], "B": [], "C": [], "R": [], "Z": ["A", "C"], "Y": ["A", "B"], "S": ["A", "B", "Y"]})
    return dag, df


def test_leaves_store_the_cells_they_saw_and_answer_as_the_sort_does():
    """The flat trees hold a leaf's cells that are not zero and every cell of a node above
    the leaves (in increasing level); written out, each tree is the sort's, and every
    closed form's estimates, sds and tables are those of the per-tree path, bit for bit,
    on each counting route (dense, sparse rows, sort), with missing values."""
    dag, df = _leaf_heavy()
    enc = encode(df, na="available")
    trees = count_network(enc, dag)
    flat = trees.flat
    assert {"Z", "Y", "A", "R"} <= set(trees.index) and "S" not in trees.index
    card = enc.schema.cardinality
    sorted_trees = {n: ct.count_tree(n, dag.parents(n), enc[n], [enc[p] for p in dag.parents(n)], card(n),
                                     [card(p) for p in dag.parents(n)]) for n in dag.nodes}
    stored = np.diff(flat.nz_ptr)
    kept, cells = 0, 0
    for n, j in trees.index.items():
        t = sorted_trees[n]
        rows = flat.row_ptr[flat.blk_ptr[j] : flat.blk_ptr[j + 1] + 1]
        leaf = slice(rows[-2], rows[-1])
        assert np.array_equal(stored[leaf], np.count_nonzero(t.levels[-1].counts, axis=1))  # a leaf: its seen cells
        assert (stored[rows[0] : rows[-2]] == card(n)).all()  # above the leaves: every cell
        assert trees[n] == t
        kept, cells = kept + stored[leaf].sum(), cells + t.levels[-1].counts.size
    assert kept < cells / 5  # most of the leaves' cells are zeros, not stored
    assert (np.diff(flat.nz_x)[np.diff(flat.stored_row) == 0] > 0).all()  # levels increasing within a row
    options = Options.build("fit")
    for method, hyper in [("mle", {}), ("mle", {"unseen": "uniform"}), ("bayes", {}),
                          ("bayes", {"iss": 7.0, "unseen": "backoff"}), ("mestimate", {"m": 3.0})]:
        est = make_estimator(method, options=options, **hyper)
        lean = estimate_network(dag, enc.schema, trees, est, options)
        full = estimate_network(dag, enc.schema, sorted_trees, est, options)
        _assert_same_estimates(lean, full, dag.nodes, sds=method != "mestimate")
        if method == "mle":  # intervals (two small tables; bayes with its BDeu prior gives none)
            for n in ("Z", "R"):
                assert lean.cpt_frame(n, interval=0.9).equals(full.cpt_frame(n, interval=0.9)), n


def test_many_nodes_of_many_leaves_count_as_the_sort_does():
    """More leaves and cells in all than the dense counting first makes room for (the
    rows and one node's table): the room grows, the trees are the sort's."""
    rng = np.random.default_rng(4)
    rows = 300
    cols = {f"R{i}": rng.integers(0, 20, rows) for i in range(4)}
    cols.update({f"X{i}": rng.integers(0, 2, rows) for i in range(24)})
    df = pd.DataFrame({k: pd.Categorical(v, categories=range(20 if k[0] == "R" else 2)) for k, v in cols.items()})
    df.loc[rng.random(rows) < 0.05, "X3"] = np.nan
    dag = bs.DAG({**{f"R{i}": [] for i in range(4)}, **{f"X{i}": [f"R{i % 4}", f"R{(i + 1) % 4}"] for i in range(24)}})
    enc = encode(df, na="available")
    trees = count_network(enc, dag)
    assert trees.all_flat(dag.nodes)
    card = enc.schema.cardinality
    leaves = 0
    for n in dag.nodes:
        t = ct.count_tree(n, dag.parents(n), enc[n], [enc[p] for p in dag.parents(n)], card(n),
                          [card(p) for p in dag.parents(n)])
        assert trees[n] == t, n
        leaves += t.n_leaves
    assert leaves > rows + 20 * 20 * 2  # beyond the first room
    options = Options.build("fit")
    est = make_estimator("bayes", options=options, iss=3.0)
    lean = estimate_network(dag, enc.schema, trees, est, options)
    full = estimate_network(dag, enc.schema, dict(trees.items()), est, options)
    for n in dag.nodes:
        assert np.array_equal(lean.cpt(n), full.cpt(n)) and np.array_equal(lean.cpd(n).table(stat="sd"), full.cpd(n).table(stat="sd"))

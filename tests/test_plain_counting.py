"""A frame of complete Categoricals is counted by the plain path (``counting/_plain.py``:
one compiled call, a plan kept per DAG and cardinalities, a tiny network's counts from
its joint table): every array it gives, and every number of the fitted network, must be
the general counting's bit for bit; anything unusual (a missing value, a text column, a
weight, a domain, levels a file fixes) must go the general way; a kept plan must never
serve another DAG or other levels."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.counting import _plain
from pybncsmooth.counting._plain_kernels import plain_trees
from pybncsmooth.counting.network import count_network
from pybncsmooth.data import encode
from pybncsmooth.data.encode import categorical_codes

_network = importlib.import_module("pybncsmooth.counting.network")
DATA = Path(__file__).parent / "data"
CANCER = "[Pollution][Smoker][Cancer|Pollution:Smoker][Xray|Cancer][Dyspnoea|Cancer]"
EARTHQUAKE = "[Burglary][Earthquake][Alarm|Burglary:Earthquake][JohnCalls|Alarm][MaryCalls|Alarm]"
SURVEY = "[A][S][E|A:S][O|E][R|E][T|O:R]"
ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"
FLAT = ("rcard", "pa_ptr", "pa_card", "blk_ptr", "row_ptr", "parent", "value", "sizes", "row_r", "row_total",
        "nz_ptr", "nz_x", "nz_n")


def _sampled(modelstring: str, cards: dict[str, int], n: int, seed: int) -> tuple[bs.DAG, pd.DataFrame]:
    """``n`` rows drawn from random (skewed) tables of the network: configurations unseen,
    levels rare, as in a sample of a repository network."""
    dag = bs.DAG.from_modelstring(modelstring)
    rng = np.random.default_rng(seed)
    codes: dict[str, np.ndarray] = {}
    for v in dag.topological_order():
        pa = dag.parents(v)
        cfg = np.zeros(n, dtype=np.int64)
        for p in pa:
            cfg = cfg * cards[p] + codes[p]
        q = int(np.prod([cards[p] for p in pa]))
        table = rng.dirichlet(np.full(cards[v], 0.4), size=q)
        u = rng.random(n)
        codes[v] = np.minimum((u[:, None] > table.cumsum(axis=1)[cfg]).sum(axis=1), cards[v] - 1)
    df = pd.DataFrame({v: pd.Categorical.from_codes(codes[v], [f"{v.lower()}{i}" for i in range(cards[v])])
                       for v in dag.nodes})
    return dag, df


def _cancer(n: int = 3001) -> tuple[bs.DAG, pd.DataFrame]:
    return _sampled(CANCER, dict(Pollution=2, Smoker=2, Cancer=2, Xray=2, Dyspnoea=2), n, 1)


def _earthquake(n: int = 2002) -> tuple[bs.DAG, pd.DataFrame]:
    return _sampled(EARTHQUAKE, dict(Burglary=2, Earthquake=2, Alarm=2, JohnCalls=2, MaryCalls=2), n, 2)


def _survey(n: int = 1003) -> tuple[bs.DAG, pd.DataFrame]:
    return _sampled(SURVEY, dict(A=3, S=2, E=2, O=2, R=2, T=3), n, 3)


def _mixed(n: int = 2500) -> tuple[bs.DAG, pd.DataFrame]:
    """A family of 375 cells (counted alone) beside two small groups."""
    return _sampled("[A][B][C][E][D|A:B:C][F|E:B]", dict(A=5, B=5, C=5, D=3, E=4, F=2), n, 5)


def _asia(n: int = 5000) -> tuple[bs.DAG, pd.DataFrame]:
    return bs.DAG.from_modelstring(ASIA), bs.load_dataset("asia").iloc[:n]


def _child(n: int = 4000) -> tuple[bs.DAG, pd.DataFrame]:
    net = bs.read_network(DATA / "repository" / "child.bif.gz")  # 20 nodes: counted node by node
    return net.dag, net.sample(n, random_state=4)


def _alarm(n: int = 1500) -> tuple[bs.DAG, pd.DataFrame]:
    df = pd.read_csv(DATA / "bnlearn" / "alarm.csv.gz", dtype="category").iloc[:n]
    return bs.DAG.from_modelstring((DATA / "bnlearn" / "alarm.modelstring.txt").read_text().strip()), df


def _deep(n: int = 403) -> tuple[bs.DAG, pd.DataFrame]:
    """Deep families seen sparsely (D: 360 configurations of 4 parents, in 403 rows),
    whole subtrees of prefixes unseen (28 of D's 60 prefixes of three parents seen), the
    first and last configurations among them."""
    return _sampled("[A][B][C][E][G][D|A:B:C:E][H|D:G:A][K|A][L|K:H]",
                    dict(A=4, B=5, C=3, E=6, G=2, D=7, H=9, K=2, L=3), n, 6)


NETWORKS = [_cancer, _earthquake, _survey, _asia, _mixed, _child, _alarm, _deep]
METHODS = [("mle", {}), ("bayes", {}), ("bayes", {"iss": 1}), ("bayes", {"iss": 10.0, "unseen": "backoff"}),
           ("mestimate", {"m": 2.0})]


def _general(monkeypatch: pytest.MonkeyPatch) -> None:
    """No frame counted by the plain path."""
    monkeypatch.setattr(_network, "count_plain", lambda df, dag: None)


def _spy(monkeypatch: pytest.MonkeyPatch) -> list:
    """The plain path's answers (``None``: it declined), recorded."""
    seen: list = []
    real = _network.count_plain

    def spy(df, dag):
        out = real(df, dag)
        seen.append(out)
        return out

    monkeypatch.setattr(_network, "count_plain", spy)
    return seen


def _assert_same_network(a: bs.FittedNetwork, b: bs.FittedNetwork) -> None:
    """Every number two fits give, compared as bytes: levels, info, each node's table,
    its sds, a tidy frame's interval bounds, a row's log-density."""
    assert a.schema.levels == b.schema.levels and a.schema.fixed == b.schema.fixed
    assert a.info == b.info
    for n in a.nodes:
        x, y = np.asarray(a.cpt(n)), np.asarray(b.cpt(n))
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), n
        sx, sy = a.cpd(n).table(stat="sd"), b.cpd(n).table(stat="sd")  # held (bayes' refused by cpt)
        assert (sx is None) == (sy is None)
        if sx is not None:
            assert np.asarray(sx).tobytes() == np.asarray(sy).tobytes(), n
    interval = None if a.method == "bayes" and a.estimator.network_prior is None else 0.9  # BDeu: none
    for n in a.nodes[:3]:
        fa, fb = a.cpt_frame(n, interval=interval), b.cpt_frame(n, interval=interval)
        pd.testing.assert_frame_equal(fa, fb, check_exact=True)


def _assert_same_trees(plain, general) -> None:
    """The counting's flat arrays (values, dtype, length) and every tree made of them."""
    assert plain.index == general.index and list(plain) == list(general)
    for name in FLAT:
        x, y = getattr(plain.flat, name), getattr(general.flat, name)
        assert x.dtype == y.dtype == np.int64 and np.array_equal(x, y), name
    assert plain.flat.names == general.flat.names and plain.flat.parents == general.flat.parents
    assert plain.flat.card == general.flat.card and list(plain.flat.card) == list(general.flat.card)
    for n in general:
        assert plain[n] == general[n]


@pytest.mark.parametrize("data", NETWORKS, ids=lambda f: f.__name__.strip("_"))
def test_the_plain_counting_gives_the_general_arrays(data):
    dag, df = data()
    enc = encode(df, variables=dag.nodes)
    schema, trees = _plain.count_plain(df, dag)
    assert schema.levels == enc.schema.levels and list(schema.levels) == list(enc.schema.levels)
    assert schema.fixed == enc.schema.fixed
    _assert_same_trees(trees, count_network(enc, dag))


@pytest.mark.parametrize("data", NETWORKS[:5] + NETWORKS[6:], ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("method, hyper", METHODS, ids=["mle", "bayes", "bayes-iss1", "bayes-iss10-backoff", "mest"])
def test_a_plain_fit_equals_the_general_fit(monkeypatch, data, method, hyper):
    dag, df = data()
    seen = _spy(monkeypatch)
    plain = bs.fit(dag, df, method=method, **hyper)
    assert seen and seen[-1] is not None  # (counted by the plain path)
    _general(monkeypatch)
    _assert_same_network(plain, bs.fit(dag, df, method=method, **hyper))


@pytest.mark.parametrize("data, groups, alone", [(_survey, [144], 0), (_child, [192, 216, 180, 54, 25, 144, 216, 144], 0),
                                                  (_mixed, [125, 40], 1)], ids=["survey", "child", "mixed"])
def test_the_grouped_and_the_node_by_node_counts_agree_for_every_row_count_mod_4(data, groups, alone):
    """The kernel's two ways to the dense counts (small joint tables summed into the
    nodes' cells, beside nodes of larger families counted alone; a count per node), on
    4 row counts in a row (the interleaved histograms' tails) and code matrices whose
    sizes are no multiples of 8 (the missing-value check's tail), equal the general
    counting's."""
    dag, df = data(1003)
    levels, codes = categorical_codes(df, dag.nodes)
    plan = _plain._plan(dag, tuple(map(len, levels)))
    assert plan.grouped[0][2].tolist() == groups and len(plan.grouped[1][0]) == alone
    for n in (1003, 1002, 1001, 1000):
        C = np.array([c[:n] for c in codes])
        grouped = plain_trees(C, plan.cards, *plan.grouped, *plan.arrays)
        per_node = plain_trees(C, plan.cards, *plan.per_node, *plan.arrays)
        assert grouped.shape[0] > 11 and np.array_equal(grouped, per_node)
        general = count_network(encode(df.iloc[:n], variables=dag.nodes), dag).flat
        cut = grouped[:11].tolist()  # leaf_levels' arrays: ... total (7th), nz_ptr, nz_x, nz_n (the counts)
        assert np.array_equal(grouped[cut[9]:cut[10]], general.nz_n)
        assert np.array_equal(grouped[cut[8]:cut[9]], general.nz_x)
        assert np.array_equal(grouped[cut[6]:cut[7]], general.row_total)


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_a_missing_value_anywhere_sends_the_frame_the_general_way(monkeypatch, where):
    dag, df = _cancer(3001)  # 5 x 3001 codes: the last 5 (the last node's) read one by one, the others 8 at a time
    df = df.copy()
    last = dag.nodes[-1]  # the codes' last row
    row = {"first": 0, "middle": 1500, "last": len(df) - 1}[where]
    df.loc[row, last] = np.nan
    assert _plain.count_plain(df, dag) is None
    seen = _spy(monkeypatch)
    plain = bs.fit(dag, df, method="bayes", na="available")
    assert seen == [None]
    _general(monkeypatch)
    general = bs.fit(dag, df, method="bayes", na="available")
    _assert_same_network(plain, general)
    assert plain.info["n_missing"] == {last: 1}
    with pytest.raises(bs.errors.MissingValueError, match=last):
        bs.fit(dag, df, method="bayes")


def test_text_columns_many_levels_and_integer_labels_go_the_general_way(monkeypatch):
    dag, df = _cancer()
    text = df.astype({"Smoker": str})
    many = df.copy()
    many["Xray"] = many["Xray"].cat.add_categories([f"x{i}" for i in range(2, 200)])  # int16 codes
    numbered = df.set_axis(range(5), axis=1)
    numbered_dag = bs.DAG({str(i): [str(df.columns.get_loc(p)) for p in dag.parents(v)]
                           for i, v in enumerate(df.columns)})
    for frame, d in ((text, dag), (many, dag), (numbered, numbered_dag)):
        assert _plain.count_plain(frame, d) is None
        plain = bs.fit(d, frame, method="bayes", iss=1)
        with monkeypatch.context() as m:
            _general(m)
            _assert_same_network(plain, bs.fit(d, frame, method="bayes", iss=1))


def test_weights_a_domain_and_a_file_s_levels_go_the_general_way(monkeypatch, tmp_path):
    dag, df = _cancer()
    path = tmp_path / "cancer.bif"
    bs.fit(dag, df, method="bayes").write(path)
    w = np.random.default_rng(0).integers(0, 3, len(df)).astype(float)
    dom = df.assign(site=pd.Categorical(np.arange(len(df)) % 3))
    seen = _spy(monkeypatch)
    weighted = bs.fit(dag, df, method="bayes", weights=w)
    bs.fit(dag, dom, method="bayes", domain="site")
    bs.fit(str(path), df, method="bayes")
    assert seen == []  # none of them reached the plain path
    assert weighted.cpt("Pollution").tolist() != bs.fit(dag, df, method="bayes").cpt("Pollution").tolist()


def test_unused_and_reordered_levels_are_counted_plain_and_kept(monkeypatch):
    dag, df = _survey()
    df = df.copy()
    df["T"] = df["T"].cat.add_categories(["never"])  # a level without a row: zero counts
    df["A"] = df["A"].cat.reorder_categories(["a2", "a0", "a1"])  # the given order is the levels' order
    seen = _spy(monkeypatch)
    plain = bs.fit(dag, df, method="bayes", iss=2.0)
    assert seen[-1] is not None
    assert plain.levels("T") == ["t0", "t1", "t2", "never"] and plain.levels("A") == ["a2", "a0", "a1"]
    _general(monkeypatch)
    _assert_same_network(plain, bs.fit(dag, df, method="bayes", iss=2.0))


def test_a_kept_plan_serves_neither_other_levels_nor_another_dag(monkeypatch):
    """The same DAG object with more levels in the data, then a DAG of the same node
    names with other parents: each fit equals the general one (a stale plan would count
    the new cells into the old layout, or the old parents)."""
    dag, df = _cancer()
    first = bs.fit(dag, df, method="mle")
    wider = df.copy()
    wider["Smoker"] = wider["Smoker"].cat.add_categories(["s2", "s3"])
    wider.loc[wider.index[:40], "Smoker"] = "s3"
    renamed = df.copy()
    renamed["Cancer"] = renamed["Cancer"].cat.rename_categories(["no", "yes"])  # same cardinalities
    other = bs.DAG.from_modelstring("[Pollution][Smoker|Pollution][Cancer|Smoker][Xray|Cancer:Pollution][Dyspnoea]")
    fits = [(dag, wider), (dag, renamed), (other, df), (dag, df)]
    plain = [bs.fit(d, f, method="mle") for d, f in fits]
    assert plain[0].cpt("Smoker").shape == (4,) and plain[1].levels("Cancer") == ["no", "yes"]
    assert plain[2].parents("Xray") == ["Cancer", "Pollution"] and plain[2].cpt("Xray").shape == (2, 2, 2)
    _general(monkeypatch)
    for (d, f), net in zip(fits, plain):
        _assert_same_network(net, bs.fit(d, f, method="mle"))
    _assert_same_network(first, plain[3])


def test_the_caller_s_frame_is_left_as_it_was():
    dag, df = _asia()
    before = df.copy()
    codes = {v: df[v].cat.codes.to_numpy().copy() for v in dag.nodes}
    bs.fit(dag, df, method="bayes")
    pd.testing.assert_frame_equal(df, before, check_exact=True)
    assert all(np.array_equal(df[v].cat.codes.to_numpy(), codes[v]) for v in dag.nodes)


@pytest.mark.parametrize("options", [{"na": "level"}, {"na": "drop"}, {"na": "available", "n_jobs": 1},
                                     {"random_state": 3, "max_levels": 2}], ids=["level", "drop", "available", "seed"])
def test_options_that_change_nothing_for_complete_categoricals_keep_the_plain_path(monkeypatch, options):
    dag, df = _earthquake()
    seen = _spy(monkeypatch)
    plain = bs.fit(dag, df, method="bayes", iss=3.0, **options)
    assert seen and seen[-1] is not None
    _general(monkeypatch)
    _assert_same_network(plain, bs.fit(dag, df, method="bayes", iss=3.0, **options))


def test_chunks_are_counted_plain_one_by_one_and_merged_as_the_general_counts_are(monkeypatch):
    dag, df = _survey(3000)
    chunks = [df.iloc[:1000], df.iloc[1000:2200], df.iloc[2200:]]
    chunks[1] = chunks[1].assign(T=chunks[1]["T"].cat.add_categories(["later"]))  # a level first met in chunk 2
    seen = _spy(monkeypatch)
    plain = bs.fit(dag, chunks, method="bayes")
    assert len(seen) == 3 and all(s is not None for s in seen)
    assert plain.levels("T") == ["t0", "t1", "t2", "later"]
    _general(monkeypatch)
    _assert_same_network(plain, bs.fit(dag, chunks, method="bayes"))


def test_equal_structures_share_one_plan_whatever_the_dag_object(monkeypatch):
    """A structure given again as a new object (a model string parsed again, a DAG built
    from the same parents, a fit from the string itself) finds the plan the first made:
    the plan is kept by the structure's content, never by the object's identity; a
    structure whose parents are listed in another order, or whose nodes come in another
    order, is another structure (its cells are laid out otherwise) and gets its own plan."""
    monkeypatch.setattr(_plain, "_PLANS", {})
    made = []
    real = _plain._make_plan

    def counted(specs, cards):
        made.append(specs)
        return real(specs, cards)

    monkeypatch.setattr(_plain, "_make_plan", counted)
    dag, df = _asia(300)
    cards = tuple(len(df[v].cat.categories) for v in dag.nodes)
    first = _plain._plan(dag, cards)
    again = _plain._plan(bs.DAG.from_modelstring(ASIA), cards)
    copy = _plain._plan(bs.DAG({v: list(dag.parents(v)) for v in dag.nodes}, nodes=list(dag.nodes)), cards)
    assert len(made) == 1 and again is first and copy is first
    net = bs.fit(ASIA, df, method="bayes", iss=1)  # a model string: a new DAG object inside the fit
    assert len(made) == 1 and net.parents("E") == ["L", "T"]
    swapped = {v: list(dag.parents(v)) for v in dag.nodes}
    swapped["E"] = ["T", "L"]
    other = _plain._plan(bs.DAG(swapped, nodes=list(dag.nodes)), cards)
    reordered = _plain._plan(bs.DAG({v: list(dag.parents(v)) for v in dag.nodes}, nodes=list(dag.nodes)[::-1]),
                             cards[::-1])
    assert len(made) == 3 and other is not first and reordered is not first
    assert other.specs[dag.nodes.index("E")] == ("E", ("T", "L"))
    assert _plain._plan(dag, (cards[0] + 1, *cards[1:])) is not first and len(made) == 4


def _random_families(n_nodes: int, seed: int) -> tuple[list[list[int]], tuple[int, ...]]:
    """Families of a random DAG (0-3 parents among earlier nodes, 2-3 levels), the child last."""
    rng = np.random.default_rng(seed)
    fams = []
    for i in range(n_nodes):
        k = min(i, int(rng.integers(0, 4)))
        fams.append(sorted(rng.choice(i, size=k, replace=False).tolist()) + [i] if k else [i])
    return fams, tuple(int(c) for c in rng.integers(2, 4, n_nodes))


def test_the_grouping_takes_work_linear_in_the_structure_and_groups_every_small_family(monkeypatch):
    """The grouping's work (joint table sizes computed) grows as the structure does, not
    as nodes x groups (a 4,000-node structure costs about 4 times a 1,000-node one, where
    comparing each node with every group costs 16 times); every node is in exactly one
    group or alone, each group's table holds at most ``_GROUP_CELLS`` cells and every
    member's family, and only families larger than that are alone."""
    work = []
    real = _plain._size

    def counted(variables, cards):
        work[-1] += 1
        return real(variables, cards)

    monkeypatch.setattr(_plain, "_size", counted)
    for n in (1000, 4000):
        fams, cards = _random_families(n, n)
        work.append(0)
        groups, alone = _plain._groups(fams, cards)
        members = sorted([j for _, m in groups for j in m] + alone)
        assert members == list(range(n))
        for variables, m in groups:
            assert real(variables, cards) <= _plain._GROUP_CELLS and variables == sorted(set(variables))
            assert all(set(fams[j]) <= set(variables) for j in m)
        assert all(real(fams[j], cards) > _plain._GROUP_CELLS for j in alone)
        assert len(groups) < n / 2  # (nodes do share groups)
    assert work[1] < 5 * work[0]


@pytest.mark.parametrize("data", NETWORKS, ids=lambda f: f.__name__.strip("_"))
def test_the_numpy_counting_equals_the_compiled_one(data):
    """The NumPy twin a process uses before it has loaded the compiled kernels gives
    the kernel's packed array integer for integer (grouped or not, every row count
    mod 4), and the empty array of a missing value."""
    from pybncsmooth.counting._plain_numpy import plain_trees_numpy

    dag, df = data()
    levels, codes = categorical_codes(df, dag.nodes)
    plan = _plain._plan(dag, tuple(map(len, levels)))
    n = codes[0].shape[0]
    for m in (n, n - 1, n - 2, n - 3):
        C = np.array([c[:m] for c in codes])
        compiled = plain_trees(C, plan.cards, *plan.grouped, *plan.arrays)
        mine = plain_trees_numpy(C, *plan.arrays, plan.families)
        assert mine.dtype == compiled.dtype == np.int64 and np.array_equal(mine, compiled)
    C = np.array(codes)
    C[len(codes) // 2, n // 3] = -1
    assert plain_trees_numpy(C, *plan.arrays, plan.families).shape == (0,)


@pytest.mark.parametrize("data", NETWORKS, ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("iss", [1.0, 10.0, 0.3, 7e-9])
def test_the_numpy_bayes_cells_equal_the_compiled_ones_bit_for_bit(data, iss):
    from pybncsmooth.estimators.closed._kernels import bayes_cells
    from pybncsmooth.estimators.closed._numpy import bayes_cells_numpy

    dag, df = data()
    f = count_network(encode(df, variables=dag.nodes), dag).flat
    args = (iss, f.rcard, f.pa_ptr, f.pa_card, f.blk_ptr, f.row_ptr, f.nz_ptr, f.nz_n, f.row_total)
    for x, y in zip(bayes_cells(*args), bayes_cells_numpy(*args)):
        assert x.dtype == y.dtype == np.float64 and x.shape == y.shape and x.tobytes() == y.tobytes()


def test_a_fresh_process_fits_a_small_network_without_numba_and_the_same_numbers():
    """A script's first small fit (asia, bayes) runs without loading numba (its NumPy
    twins), and its tables are those the compiled kernels give, byte for byte."""
    import json
    import os
    import subprocess
    import sys

    code = ("import json, sys, pybncsmooth as bs\n"
            f"net = bs.fit({ASIA!r}, bs.load_dataset('asia'), method='bayes', iss=1)\n"
            "print(json.dumps({'numba': 'numba' in sys.modules, "
            "'cpts': {n: net.cpt(n).tobytes().hex() for n in net.nodes}}))")
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    got = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                                    check=True).stdout.splitlines()[-1])
    assert got["numba"] is False
    from pybncsmooth._jit import numba_module

    numba_module()  # the compiled kernels from here on
    net = bs.fit(ASIA, bs.load_dataset("asia"), method="bayes", iss=1)
    assert got["cpts"] == {n: np.asarray(net.cpt(n)).tobytes().hex() for n in net.nodes}


def test_a_process_s_first_large_count_is_numpy_s_and_the_next_goes_the_compiled_way(monkeypatch):
    """Before any kernel is loaded, one count above the small bound (and beyond the plain
    kernel's work, here both bounds lowered) is made in NumPy; the next such count goes
    the general (compiled) way; every fit equals the general counting's."""
    dag, df = _alarm()
    monkeypatch.setattr(_plain, "numba_loaded", lambda: False)
    monkeypatch.setattr(_plain, "_NUMPY_SMALL", 1)
    monkeypatch.setattr(_plain, "_PLAIN_WORK", 1)
    monkeypatch.setattr(_plain, "_LARGE_DONE", [False])
    seen = _spy(monkeypatch)
    first = bs.fit(dag, df, method="bayes", iss=1)
    assert seen[-1] is not None and _plain._LARGE_DONE[0]
    second = bs.fit(dag, df, method="bayes", iss=1)
    assert seen[-1] is None
    _general(monkeypatch)
    general = bs.fit(dag, df, method="bayes", iss=1)
    _assert_same_network(first, general)
    _assert_same_network(second, general)

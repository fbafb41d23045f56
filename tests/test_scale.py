"""Out-of-core fits: structure learning and counting from files and chunks in bounded
memory, Dask DataFrames counted on a local cluster, many domains, and bad chunks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from conftest import shrunk_by_hand
from pybncsmooth.classifiers.skdb import learn_skdb
from pybncsmooth.data.sources import DataSource, auto_chunksize
from pybncsmooth.errors import DataError, EmptyDataError, MissingColumnError, UndeclaredLevelError
from pybncsmooth.structure.learning import learn_structure
from pybncsmooth.structure.statistics import StructureStatistics


def _kdb_data(n: int, seed: int = 0, n_features: int = 6, with_na: bool = False) -> pd.DataFrame:
    """Rows from a chain-like kDB-2 network (each feature depends on the class and the
    previous feature); text levels, so that chunks meet levels in different orders."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    cols = {"Class": np.array(["c0", "c1", "c2"])[y]}
    prev = y
    for j in range(n_features):
        x = (prev + rng.integers(0, 3, n) + y) % (4 + j % 2)
        cols[f"X{j}"] = np.array([f"v{i}" for i in range(6)], dtype=object)[x]
        prev = x
    df = pd.DataFrame(cols)
    if with_na:
        df.loc[rng.random(n) < 0.03, "X2"] = None
    return df


def _same_network(a, b) -> None:
    assert a.dag.nodes == b.dag.nodes
    for v in a.dag.nodes:
        assert a.dag.parents(v) == b.dag.parents(v)
        assert a.tree(v) == b.tree(v)


@pytest.fixture(scope="module")
def kdb_csv(tmp_path_factory):
    df = _kdb_data(6000, with_na=True)
    path = tmp_path_factory.mktemp("scale") / "kdb.csv"
    df.to_csv(path, index=False)
    return df, path


# ----------------------------------------------------------------------------- structure statistics


def test_statistics_merged_over_chunks_equal_one_pass_with_level_unions():
    df = _kdb_data(500, seed=3)
    # the first chunk lacks levels v3, v4 of some features and class c2: the merge recodes
    first = df[(df.Class != "c2") & (df.X0 != "v3")].iloc[:100]
    rest = df.drop(first.index)
    one = StructureStatistics("Class", [f"X{j}" for j in range(6)]).add(pd.concat([first, rest]))
    many = StructureStatistics("Class", [f"X{j}" for j in range(6)])
    for chunk in [first, rest.iloc[:7], rest.iloc[7:300], rest.iloc[300:]]:
        many.add(chunk)
    assert one.schema == many.schema
    np.testing.assert_array_equal(one.class_counts, many.class_counts)
    np.testing.assert_array_equal(one.pair_counts, many.pair_counts)
    assert one.mi() == many.mi()
    np.testing.assert_array_equal(one.cmi(), many.cmi())
    # the counts themselves: n(c, x0, x1) for one cell, by hand
    s = one.schema
    a, b = list(s["X0"]).index("v1"), list(s["X1"]).index("v2")
    c = list(s["Class"]).index("c1")
    r0, r1 = s.cardinality("X0"), s.cardinality("X1")
    cell = one.pair_counts[(c * r0 + a) * r1 + b]  # pair (X0, X1) is the first block
    assert cell == int(((df.Class == "c1") & (df.X0 == "v1") & (df.X1 == "v2")).sum())


@pytest.mark.parametrize("kind,k", [("nb", None), ("tan", None), ("kdb", 2)])
def test_structure_from_a_file_in_chunks_equals_in_memory(kdb_csv, kind, k):
    df, path = kdb_csv
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=["", "NA"])
    mem, info_m = learn_structure(frame, "Class", kind, k, return_info=True)
    out, info_o = learn_structure(path, "Class", kind, k, return_info=True, chunksize=777)
    assert mem.nodes == out.nodes and all(mem.parents(v) == out.parents(v) for v in mem.nodes)
    if info_m.cmi is not None:
        np.testing.assert_array_equal(info_m.cmi, info_o.cmi)


@pytest.mark.parametrize("structure,k", [("tan", None), ("kdb", 2), ("skdb", 3)])
def test_classifier_fit_from_a_file_equals_in_memory(kdb_csv, structure, k):
    df, path = kdb_csv
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=["", "NA"])
    mem = bs.fit("Class ~ .", frame, structure=structure, k=k, method="mestimate", na="level")
    out = bs.fit("Class ~ .", path, structure=structure, k=k, method="mestimate", chunksize=1000, na="level")
    _same_network(mem, out)
    for v in mem.dag.nodes:
        np.testing.assert_allclose(np.asarray(mem.cpt(v)), np.asarray(out.cpt(v)), rtol=0, atol=0)


def test_selective_kdb_losses_from_chunks_match_in_memory(kdb_csv):
    df, path = kdb_csv
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=["", "NA"])
    d1, i1 = learn_skdb(frame, "Class", 3, return_info=True, loss="log_loss")
    chunks = [frame.iloc[i : i + 1234] for i in range(0, len(frame), 1234)]
    d2, i2 = learn_skdb(chunks, "Class", 3, return_info=True, loss="log_loss")
    s1, s2 = i1.extra["selection"], i2.extra["selection"]
    assert (s1.k, s1.n_attributes) == (s2.k, s2.n_attributes)
    # sums over chunks in another order than over the rows: equal to rounding
    np.testing.assert_allclose(s1.loss, s2.loss, rtol=1e-12)


def test_eskdb_from_chunks_is_the_in_memory_ensemble(kdb_csv):
    df, path = kdb_csv
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=["", "NA"])
    X, y = frame.drop(columns="Class"), frame["Class"]
    kw = dict(structure="eskdb", method="mestimate", n_estimators=4, k=2, random_state=7)
    mem = bs.BNClassifier(**kw).fit(X, y)
    out = bs.BNClassifier(**kw).fit(path, "Class")
    for a, b in zip(mem.dags_, out.dags_):
        assert a.nodes == b.nodes and all(a.parents(v) == b.parents(v) for v in a.nodes)
    np.testing.assert_array_equal(mem.predict_proba(X.iloc[:200]), out.predict_proba(X.iloc[:200]))
    assert list(out.classes_) == ["c0", "c1", "c2"] and out.n_features_in_ == 6
    # the function form reads the file afresh at every pass
    fn = bs.BNClassifier(**kw).fit(lambda: pd.read_csv(path, dtype=str, chunksize=2500), "Class")
    np.testing.assert_array_equal(mem.predict_proba(X.iloc[:50]), fn.predict_proba(X.iloc[:50]))


def test_sources_that_cannot_be_read_again_or_misused_are_refused(kdb_csv):
    df, path = kdb_csv
    gen = (c for c in [df.iloc[:100], df.iloc[100:]])
    with pytest.raises(DataError, match="reads the data 3 times.*iterator"):
        bs.BNClassifier(structure="skdb", k=1).fit(gen, "Class")
    with pytest.raises(DataError, match="y is the name of the class column"):
        bs.BNClassifier().fit(str(path), df["Class"])
    with pytest.raises(MissingColumnError, match="'Klass' \\(class\\)"):
        bs.BNClassifier().fit(str(path), "Klass")
    with pytest.raises(bs.errors.HyperparameterError, match="discretize"):
        bs.BNClassifier(discretize="mdl").fit(str(path), "Class")
    with pytest.raises(bs.errors.StructureError, match="discretise"):
        bs.fit("Class ~ .", str(path), structure="nb", discretize="mdl")
    # a fixed structure reads once: a generator is fine there
    net = bs.fit("[Class][X0|Class]", (c for c in [df.iloc[:100], df.iloc[100:]]), method="mle")
    assert net.info["n_rows"] == len(df)


def test_paths_are_read_in_bounded_chunks_by_default(kdb_csv):
    df, path = kdb_csv
    assert auto_chunksize(20) == 100_000 and auto_chunksize(5000) == 1000
    src = DataSource(str(path))
    assert src.chunksize == auto_chunksize(7)
    small = DataSource(str(path), chunksize=500)
    sizes = [len(c) for c in small.chunks()]
    assert max(sizes) == 500 and sum(sizes) == len(df)


# ----------------------------------------------------------------------------- bad chunks


def test_bad_chunks_are_named(tmp_path):
    df = bs.load_dataset("asia")
    ms = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"
    net = bs.fit(ms, df)
    bad = df.astype(str)
    bad.loc[3000, "X"] = "maybe"
    with pytest.raises(
        UndeclaredLevelError, match="chunk 1: variable 'X' has level\\(s\\) 'maybe'.*declared: 'no', 'yes'"
    ):
        bs.fit(net, [bad.iloc[:2000], bad.iloc[2000:4000], bad.iloc[4000:]])
    with pytest.raises(MissingColumnError, match="chunk 1: 'X' \\(node\\)"):
        bs.fit(ms, [df.iloc[:10], df.iloc[10:20].drop(columns="X")])
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(EmptyDataError, match="is empty"):
        bs.fit(ms, str(empty))
    header = tmp_path / "header.csv"
    header.write_text(",".join(df.columns) + "\n")
    with pytest.raises(EmptyDataError, match="no rows"):
        bs.fit(ms, str(header))
    users = df.astype(object).assign(user=[f"u{i % 3}" for i in range(len(df))])
    users.loc[2500, "user"] = None
    for na in ("level", "drop", "available"):
        with pytest.raises(DataError, match="chunk 1: the domain column 'user' has 1 missing value.*row 2500"):
            bs.fit(ms, [users.iloc[:2000], users.iloc[2000:]], method="mestimate", domain="user", na=na)
    # nothing half-written: the caller's frames are untouched
    assert users["user"].isna().sum() == 1 and (bad["X"] == "maybe").sum() == 1


def test_a_chunk_that_na_drop_empties_is_skipped():
    df = _kdb_data(300, seed=1)
    all_na = df.iloc[:50].copy()
    all_na["X1"] = None
    chunks = [all_na, df.iloc[50:]]
    out = bs.fit("[Class][X0|Class][X1|Class:X0]", chunks, method="mle", na="drop")
    mem = bs.fit("[Class][X0|Class][X1|Class:X0]", pd.concat(chunks), method="mle", na="drop")
    _same_network(mem, out)
    assert out.info["n_dropped"] == 50
    s = learn_structure(chunks, "Class", "kdb", 1, na="drop")
    assert s.nodes == learn_structure(pd.concat(chunks), "Class", "kdb", 1, na="drop").nodes


# ----------------------------------------------------------------------------- many domains


def test_many_domains_memory_follows_observed_branches():
    # 400 domains x 25 rows, kDB-2 over 6 features: the domain-split trees (the domain last)
    # hold only the branches the rows reach, never domains x configurations
    n_dom, per = 400, 25
    df = _kdb_data(n_dom * per, seed=5)
    df["user"] = np.repeat([f"u{i:03d}" for i in range(n_dom)], per)
    dag = bs.learn_structure(df.drop(columns="user"), "Class", "kdb", 2)
    net = bs.fit(dag, df, method="mestimate", domain="user")
    for v in dag.nodes:
        t = net.tree(v)
        sizes = t.level_sizes()
        assert t.parents[-1] == "user"
        # a leaf per observed (configuration, domain): at most one per row, at least one per domain
        assert n_dom <= sizes[-1] <= n_dom * per
        assert sizes[-1] == len(np.unique(t.node_configs(t.depth), axis=0))
    # per-domain access gives the domain's own tables
    one = net.for_domain("u007")
    rows = df[df.user == "u007"]
    assert one.dag.nodes == dag.nodes
    p = np.asarray(one.cpt("Class"), dtype=float).ravel()
    assert abs(p.sum() - 1) < 1e-12
    counts = rows["Class"].value_counts().reindex(["c0", "c1", "c2"], fill_value=0).to_numpy()
    # the domain's counts around the pooled m-estimate (m = 1), with the concentration's posterior
    pooled = (df["Class"].value_counts().reindex(["c0", "c1", "c2"]).to_numpy() + 1 / 3) / (len(df) + 1)
    np.testing.assert_allclose(p, shrunk_by_hand(counts, pooled, net.cpd("Class").estimate.info), atol=1e-12)
    # HDP on the same trees: worker-independent answers
    h1 = bs.fit(dag, df, method="hdp", domain="user", iterations=30, random_state=3, n_jobs=1)
    h2 = bs.fit(dag, df, method="hdp", domain="user", iterations=30, random_state=3, n_jobs=2)
    for v in dag.nodes:
        np.testing.assert_array_equal(np.asarray(h1.cpt(v)), np.asarray(h2.cpt(v)))


# ----------------------------------------------------------------------------- Dask


def _dask_frame(df: pd.DataFrame, npartitions: int):
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(df, npartitions=npartitions)


def test_dask_frame_counts_equal_in_memory_with_the_local_scheduler():
    df = _kdb_data(3000, seed=2, with_na=True)
    ddf = _dask_frame(df, 4)
    ms = "[Class][X0|Class][X1|Class:X0][X2|Class:X1][X3|Class:X2]"
    _same_network(bs.fit(ms, df, method="mle", na="level"), bs.fit(ms, ddf, method="mle", na="level"))
    _same_network(
        bs.fit("Class ~ .", df, structure="tan", na="level"), bs.fit("Class ~ .", ddf, structure="tan", na="level")
    )


@pytest.mark.slow
def test_dask_on_a_local_cluster_of_worker_processes_gives_the_in_memory_fit():
    distributed = pytest.importorskip("distributed")
    df = _kdb_data(4000, seed=4)
    ddf = _dask_frame(df, 5)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster),
    ):
        for structure, k in (("kdb", 2), ("skdb", 2)):
            _same_network(
                bs.fit("Class ~ .", df, structure=structure, k=k, method="mestimate"),
                bs.fit("Class ~ .", ddf, structure=structure, k=k, method="mestimate"),
            )
        kw = dict(structure="eskdb", method="mestimate", n_estimators=3, k=2, random_state=1)
        mem = bs.BNClassifier(**kw).fit(df.drop(columns="Class"), df["Class"])
        dist = bs.BNClassifier(**kw).fit(ddf, "Class")
        np.testing.assert_array_equal(
            mem.predict_proba(df.drop(columns="Class").iloc[:100]),
            dist.predict_proba(df.drop(columns="Class").iloc[:100]),
        )


def test_progress_over_chunks_is_shown_on_request(capsys):
    df = _kdb_data(400, seed=8)
    chunks = [df.iloc[i : i + 100] for i in range(0, 400, 100)]
    quiet = bs.fit("[Class][X0|Class]", chunks, method="mle")
    assert capsys.readouterr().err == ""
    loud = bs.fit("[Class][X0|Class]", chunks, method="mle", progress=True)
    err = capsys.readouterr().err
    assert "counting" in err and "chunk" in err
    _same_network(quiet, loud)


@pytest.mark.parametrize("structure,k,passes", [("nb", None, 2), ("tan", None, 2), ("kdb", 2, 2), ("skdb", 2, 3)])
def test_structure_learning_reads_the_data_the_stated_number_of_times(structure, k, passes):
    df = _kdb_data(900, seed=9)
    reads = []

    def chunks():  # a fresh generator per call; a pass is a generator read to its end
        for i in range(0, len(df), 250):
            yield df.iloc[i : i + 250]
        reads.append(1)

    bs.fit("Class ~ .", chunks, structure=structure, k=k, method="mestimate")
    assert len(reads) == passes
    reads.clear()
    bs.BNClassifier(structure="eskdb", k=2, n_estimators=5, method="mestimate").fit(chunks, "Class")
    assert len(reads) == 4  # all members share the three passes, and the tempering's fourth


def test_predictions_for_a_file_are_scored_chunk_by_chunk(kdb_csv):
    df, path = kdb_csv
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=["", "NA"])
    clf = bs.BNClassifier(structure="kdb", k=2, method="mestimate").fit(frame, "Class")  # y names a column
    same = bs.BNClassifier(structure="kdb", k=2, method="mestimate").fit(frame.drop(columns="Class"), frame["Class"])
    X = frame.drop(columns="Class")
    np.testing.assert_array_equal(clf.predict_proba(X), same.predict_proba(X))
    # a file holding the class too: the features are picked, the rows keep their order
    src = DataSource(str(path), chunksize=700)
    np.testing.assert_array_equal(clf.predict_proba(src), clf.predict_proba(X))
    np.testing.assert_array_equal(clf.predict(str(path)), clf.predict(X))
    with pytest.raises(MissingColumnError, match="'X3' \\(feature\\)"):
        clf.predict_proba([X.drop(columns="X3")])


# dask's own Parquet reader calls reset_index(inplace=True), deprecated by pandas
@pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.reset_index")
def test_parquet_dictionaries_of_other_writers_are_read_as_plain_values(tmp_path):
    # Arrow/Spark write one dictionary per row group, in order of appearance: such
    # columns carry no level order, so chunks, the whole file and Dask agree on text order
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "dict.parquet"
    t1 = pa.table(
        {"A": pa.array(["x", "y", "x"]).dictionary_encode(), "B": pa.array(["p", "q", "q"]).dictionary_encode()}
    )
    t2 = pa.table(
        {"A": pa.array(["z", "y", "x"]).dictionary_encode(), "B": pa.array(["q", "p", "q"]).dictionary_encode()}
    )
    with pq.ParquetWriter(str(path), t1.schema) as w:
        w.write_table(t1)
        w.write_table(t2)
    whole = bs.fit("[A][B|A]", str(path), method="mle")
    chunked = bs.fit("[A][B|A]", str(path), method="mle", chunksize=3)
    assert whole.levels("A") == chunked.levels("A") == ["x", "y", "z"]
    _same_network(whole, chunked)
    np.testing.assert_allclose(chunked.cpt("B")[:, 0], [1 / 3, 2 / 3])  # P(B | A = x): p once, q twice
    dd = pytest.importorskip("dask.dataframe")
    _same_network(whole, bs.fit("[A][B|A]", dd.read_parquet(str(path), split_row_groups=True), method="mle"))
    # a Categorical written by pandas keeps its declared order, whole or in chunks
    cat = tmp_path / "cat.parquet"
    pd.DataFrame(
        {"A": pd.Categorical(["lo", "hi", "mid", "lo"], categories=["lo", "mid", "hi"]), "B": list("pqpq")}
    ).to_parquet(cat, row_group_size=2)
    assert bs.fit("[A][B|A]", str(cat), method="mle", chunksize=2).levels("A") == ["lo", "mid", "hi"]


def test_progress_reaches_the_estimators_own_bar(capsys):
    # fit's progress= covers the chunks and the estimator's own bar (HDP's sweeps)
    df = _kdb_data(300, seed=10)
    bs.fit("[Class][X0|Class]", [df.iloc[:150], df.iloc[150:]], method="hdp", iterations=60, progress=True)
    err = capsys.readouterr().err
    assert "counting" in err and "HDP sweeps" in err
    bs.BNClassifier(structure="nb", method="hdp", iterations=60, progress=True).fit(df, "Class")
    assert "HDP sweeps" in capsys.readouterr().err
    bs.fit("[Class][X0|Class]", df, method="hdp", iterations=60, progress=False)
    assert capsys.readouterr().err == ""


def test_selective_kdb_skips_empty_and_all_incomplete_chunks():
    df = _kdb_data(600, seed=11)
    incomplete = df.iloc[:60].copy()
    incomplete["X1"] = None
    chunks = [df.iloc[:0], incomplete, df.iloc[60:400], df.iloc[400:]]
    _, a = learn_skdb(chunks, "Class", 2, na="drop", return_info=True)
    _, b = learn_skdb(pd.concat(chunks), "Class", 2, na="drop", return_info=True)
    np.testing.assert_allclose(a.extra["selection"].loss, b.extra["selection"].loss, rtol=1e-12)
    assert a.extra["n_rows"] == b.extra["n_rows"] == 540


def test_a_frame_in_memory_is_sliced_by_rows_only_when_it_is_large(monkeypatch):
    """Slices of at least 250,000 rows (a wide frame was cut by cells: 1,000 columns in
    slices of 2,000 rows, every node counted and merged once per slice); a tall frame in
    slices of about two million values; the counts equal one pass either way."""
    from pybncsmooth.data import mapreduce

    assert mapreduce.slice_rows(1000) == 250_000 and mapreduce.slice_rows(4) == 500_000
    rng = np.random.default_rng(0)
    df = pd.DataFrame({c: pd.Categorical.from_codes(rng.integers(0, 3, 997), categories=list("abc")) for c in "ABCD"})
    whole = bs.fit("[A][B|A][C|A:B][D|C]", df, method="bayes")
    calls = []
    monkeypatch.setattr(mapreduce, "slice_rows", lambda n: calls.append(n) or 100)  # ten slices
    sliced = bs.fit("[A][B|A][C|A:B][D|C]", df, method="bayes")
    assert calls and whole.max_abs_diff(sliced) < 1e-15

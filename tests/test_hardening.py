"""Regression tests of the second hostile-input round (issue 20): each reproducer gives
the in-memory result or pybncsmooth's own error.  (The hyperparameter values of every
estimator are walked in ``test_hyperparameters.py``.)"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import DataError, EmptyDataError, HyperparameterError
from pybncsmooth.structure.dag import DAG


@pytest.fixture(scope="module")
def votes() -> pd.DataFrame:
    return bs.load_dataset("housevotes84")


def test_na_level_with_chunks_where_only_some_hold_missing_values(votes):
    """Item 1: the level of missing values appears in some chunks' Categoricals only."""
    d = pd.DataFrame({"A": pd.Categorical(["x", "y", None, "x"]), "B": pd.Categorical(["u", "v", "u", "v"])})
    whole = bs.fit("[A][B|A]", d, na="level")
    parts = bs.fit("[A][B|A]", [d.iloc[:2], d.iloc[2:]], na="level")
    assert parts.levels("A") == whole.levels("A") == ["x", "y", "<NA>"]
    np.testing.assert_array_equal(parts.cpt("B"), whole.cpt("B"))
    a = bs.BNClassifier().fit([votes.iloc[:100], votes.iloc[100:]], "Class")
    b = bs.BNClassifier().fit(votes, "Class")
    np.testing.assert_array_equal(a.predict_proba(votes), b.predict_proba(votes))


def test_chunks_declaring_more_levels_later_are_united():
    """Item 16: ['no'] in one chunk, ['no', 'yes'] in another, as the README says."""
    a = pd.DataFrame({"A": pd.Categorical(["no", "no"], categories=["no"]), "B": list("uv")})
    b = pd.DataFrame({"A": pd.Categorical(["no", "yes"], categories=["no", "yes"]), "B": list("uv")})
    net = bs.fit("[A][B|A]", [a, b])
    assert net.levels("A") == ["no", "yes"]
    np.testing.assert_array_equal(net.cpt("B"), bs.fit("[A][B|A]", pd.concat([a, b], ignore_index=True)).cpt("B"))
    # a later chunk adds a level not in the earlier order: appended, the NA level stays last
    c = pd.DataFrame({"A": pd.Categorical(["no", None], categories=["no", "maybe"]), "B": list("uv")})
    assert bs.fit("[A][B|A]", [b, c], na="level").levels("A") == ["no", "yes", "maybe", "<NA>"]
    # orders that disagree are refused, naming the variable
    d = pd.DataFrame({"A": pd.Categorical(["no", "yes"], categories=["yes", "no"]), "B": list("uv")})
    with pytest.raises(DataError, match="'A' has levels .* in different orders"):
        bs.fit("[A][B|A]", [b, d])


def test_missing_class_values_read_in_chunks_are_refused(votes, tmp_path):
    """Item 2: as in memory, whatever na= says."""
    h = votes.copy()
    h["Class"] = h["Class"].astype(object)
    h.loc[3, "Class"] = None
    h.to_csv(tmp_path / "v.csv", index=False)
    for na in ("level", "drop", "pairwise"):
        with pytest.raises(DataError, match="class 'Class' has missing values"):
            bs.BNClassifier(na=na).fit(str(tmp_path / "v.csv"), "Class")
        if na == "pairwise":  # ESKDB refuses it before reading any data (its selection counts complete rows)
            continue
        with pytest.raises(DataError, match="class 'Class' has missing values"):
            bs.BNClassifier(na=na, structure="eskdb", method="mestimate", n_estimators=2).fit(
                [h.iloc[:100], h.iloc[100:]], "Class"
            )
    with pytest.raises(DataError, match="y has missing values"):
        bs.BNClassifier().fit(h.drop(columns="Class"), h["Class"])


@pytest.mark.parametrize("ext", ["bif", "dsc", "net"])
def test_node_names_that_are_not_one_word_round_trip(ext, tmp_path):
    """Item 4: quoted where the grammar needs it; plain names are written as bnlearn does."""
    for name in ["x y", "a:b", "x(y)", "[x]", "x|y", "x\ty"]:
        df = pd.DataFrame({name: list("xyxyx"), "B": list("uvvuu"), "C y": list("pqqpp")})
        net = bs.fit(DAG({name: [], "C y": [], "B": [name, "C y"]}), df, method="bayes")
        net.write(tmp_path / f"n.{ext}")
        back = bs.read_network(tmp_path / f"n.{ext}")
        assert back.nodes == net.nodes and back.parents("B") == net.parents("B")
        np.testing.assert_allclose(back.cpt("B"), net.cpt("B"), rtol=1e-6)
        text = (tmp_path / f"n.{ext}").read_text()
        if ext == "bif":  # as bnlearn writes: bare, quoted only where BIF's grammar would split the name
            assert ("variable C y {" in text) and (f'"{name}"' in text) == (name in ("x(y)", "x|y"))
    if ext != "bif":
        assert '"C y"' in text and " B " in text  # only the names that need quotes have them


def test_hls_bayes_leaf_sums_over_the_other_classes_are_exact():
    """Item 5 (a child with 1000 declared levels took minutes): the log-sum-exp over the
    other classes at a leaf, recomputed for every class (quadratic in the levels), is now
    a prefix over the classes drawn this sweep and a suffix over the rest.  Checked
    against the direct sum while the classes are redrawn one after the other."""
    from pybncsmooth.estimators.hls.bayes import _prefix_add, _psi_all, _suffix_lse

    rng = np.random.default_rng(1)
    m, K = 7, 40
    eta = rng.normal(scale=20.0, size=(m, K))  # wide: exp() spans hundreds of orders
    one = np.zeros(1, dtype=np.int64)
    args = (one, one, np.array([m]), one, np.array([K]))
    suf, pre, psi = np.zeros((m, K + 1)), np.zeros(m), np.zeros(m)
    _suffix_lse(eta, *args, suf, pre)
    for k in range(K):
        _psi_all(eta, *args, k, suf, pre, psi)
        others = np.delete(eta, k, axis=1)
        direct = eta[:, k] - np.logaddexp.reduce(others, axis=1)
        np.testing.assert_allclose(psi, direct, rtol=1e-12, atol=1e-9)
        eta[:, k] = rng.normal(scale=20.0, size=m)  # the class is redrawn
        _prefix_add(eta, *args, k, pre)


def test_hls_bayes_with_many_declared_levels():
    rng = np.random.default_rng(0)
    few, many = [f"l{i}" for i in range(6)], [f"l{i}" for i in range(300)]
    vals = rng.choice(few[:3], 30)
    b = rng.choice(["u", "v"], 30)
    fits = []
    for levels in (few, many):
        df = pd.DataFrame({"A": pd.Categorical(vals, categories=levels), "B": pd.Categorical(b)})
        fits.append(bs.fit("[B][A|B]", df, method="hls-bayes", iterations=200, random_state=0))
    t_few, t_many = fits[0].cpt("A"), fits[1].cpt("A")
    assert t_many.shape == (300, 2) and np.isfinite(t_many).all()
    np.testing.assert_allclose(t_many.sum(axis=0), 1.0)
    # the observed levels keep most of the mass whatever the declared levels
    assert (t_few[:3].sum(axis=0) > 0.5).all() and (t_many[:3].sum(axis=0) > 0.5).all()


def test_one_domain_of_a_multi_domain_fit_is_written_and_read(tmp_path):
    """Item 6: for_domain(...).write('x.pbn'), known and unseen domains, every estimator
    with a tree."""
    df = pd.DataFrame({"A": list("xyxyxxyy"), "B": list("uvvuuvvv"), "d": list("aabbaabb")})
    for method in ("hmd", "hdp", "bayes", "mestimate"):
        net = bs.fit("[A][B|A]", df, method=method, domain="d", random_state=0)
        for level in ("a", "zz"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                one = net.for_domain(level)
            one.write(tmp_path / "x.pbn")
            back = bs.read_network(tmp_path / "x.pbn")
            np.testing.assert_array_equal(back.cpt("B"), one.cpt("B"))
            np.testing.assert_array_equal(back.logpdf(df), one.logpdf(df))
            if method != "mestimate":  # the sds held (bayes' BDeu sds are refused by cpt(stat="sd"))
                np.testing.assert_array_equal(back.cpd("B").table(stat="sd"), one.cpd("B").table(stat="sd"))


def test_predictions_from_a_path(votes, tmp_path):
    """Items 10 and 11: staged_predict_proba and FittedNetwork.predict_proba / logpdf take
    a path (or any data read in chunks) as predict_proba does."""
    path = tmp_path / "v.csv"
    votes.to_csv(path, index=False)
    clf = bs.BNClassifier(structure="eskdb", method="mestimate", n_estimators=3, k=2, random_state=0).fit(votes, "Class")
    staged_path = list(clf.staged_predict_proba(str(path)))
    staged_mem = list(clf.staged_predict_proba(bs.read_table(path).drop(columns="Class")))
    assert len(staged_path) == 3
    for a, b in zip(staged_path, staged_mem):
        np.testing.assert_array_equal(a, b)
    net = clf.network_
    frame = bs.read_table(path)
    p = net.predict_proba(str(path), "Class")
    np.testing.assert_array_equal(p.to_numpy(), net.predict_proba(frame, "Class").to_numpy())
    assert list(p.index) == list(range(len(votes)))
    chunks = [frame.iloc[:50], frame.iloc[50:]]
    np.testing.assert_array_equal(net.logpdf(chunks, on_unseen="backoff"), net.logpdf(frame, on_unseen="backoff"))
    with pytest.raises(DataError, match="data must be a pandas DataFrame"):
        net.predict_proba(3, "Class")


def test_files_and_chunk_sizes_that_are_not(tmp_path):
    """Item 12."""
    blank = tmp_path / "blank.csv"
    blank.write_text("\n\n\n")
    with pytest.raises(EmptyDataError, match="has no header"):
        bs.fit("[A][B|A]", str(blank))
    ok = tmp_path / "d.csv"
    pd.DataFrame({"A": list("xy"), "B": list("uv")}).to_csv(ok, index=False)
    for bad in (2.5, "a", 0, True):
        with pytest.raises(DataError, match="chunksize must be a positive whole number of rows"):
            bs.fit("[A][B|A]", str(ok), chunksize=bad)
    assert bs.fit("[A][B|A]", str(ok), chunksize=np.int64(1)).info["n_rows"] == 2


def test_nullable_class_arrays(votes):
    """Item 13: pandas' nullable integer and boolean arrays as y, as their Series."""
    X = votes.drop(columns="Class")
    dem = votes["Class"] == "democrat"
    for y in (pd.array(dem.astype(int), dtype="Int64"), pd.array(dem, dtype="boolean")):
        a = bs.BNClassifier().fit(X, y)
        b = bs.BNClassifier().fit(X, pd.Series(y))
        np.testing.assert_array_equal(a.classes_, b.classes_)
        np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    with pytest.raises(DataError, match="y has missing values"):
        bs.BNClassifier().fit(X, pd.array([pd.NA] + [0, 1] * ((len(X) - 1) // 2), dtype="Int64"))


def test_query_options_get_package_errors():
    """Item 14: numpy scalars accepted; bad values get HyperparameterError."""
    net = bs.fit("[A][B|A]", pd.DataFrame({"A": list("xyxy"), "B": list("uvvu")}), method="mestimate")
    a = net.cpt_frame("B", interval=np.float32(0.9))
    b = net.cpt_frame("B", interval=0.9)
    np.testing.assert_allclose(a.select_dtypes("number").to_numpy(), b.select_dtypes("number").to_numpy(), rtol=1e-6)
    for kw, msg in [
        (dict(interval=2), r"interval must be a number in \(0, 1\)"),
        (dict(interval="x"), "interval must be"),
    ]:
        with pytest.raises(HyperparameterError, match=msg):
            net.cpt_frame("B", **kw)
    with pytest.raises(HyperparameterError, match="stat must be 'mean' or 'sd'"):
        net.cpt("B", stat="foo")
    for n in (True, 2.5, -1, "3"):
        with pytest.raises(HyperparameterError, match="n must be an integer >= 0"):
            net.sample(n)
    with pytest.raises(HyperparameterError, match="random_state"):
        net.sample(3, random_state=-2)
    assert net.sample(np.int64(4), random_state=1).shape == (4, 2)


def test_eskdb_default_k_is_capped_at_the_features(votes):
    """Item 15: k = 5 is the thesis's default, not a demand; a k the user gives is checked."""
    small = votes[["V1", "V2", "V3", "Class"]]
    clf = bs.BNClassifier(structure="eskdb", method="mestimate", n_estimators=2, random_state=0).fit(small, "Class")
    assert clf.predict_proba(small).shape == (len(small), 2)  # raised "k = 5 is larger ..." before
    with pytest.raises(HyperparameterError, match="k = 5 is larger than the number of features"):
        bs.BNClassifier(structure="eskdb", k=5, method="mestimate").fit(small, "Class")


# ------------------------------------------------------------------ found by the next probing round


def test_probed_api_misuse_gets_package_errors(tmp_path, votes):
    from pybncsmooth.errors import FileFormatError, MissingColumnError, StructureError, UnknownDatasetError

    net = bs.fit("[A][B|A]", pd.DataFrame({"A": list("xyxy"), "B": list("uvvu")}), method="bayes")
    with pytest.raises(HyperparameterError, match="max_cells must be an integer >= 0, not 'a'"):
        net.cpt("B", max_cells="a")
    with pytest.raises(FileNotFoundError, match="the folder .*nodir' does not exist"):
        net.write(tmp_path / "nodir" / "x.bif")
    (tmp_path / "g.bif").write_bytes(b"\x00\xff\xfe garbage")
    with pytest.raises(FileFormatError, match="not a text file"):
        bs.read_network(tmp_path / "g.bif")
    (tmp_path / "g.bif.gz").write_bytes(b"not gzip")
    with pytest.raises(FileFormatError, match="not a gzip file"):
        bs.read_network(tmp_path / "g.bif.gz")
    with pytest.raises(MissingColumnError, match="'ZZ' \\(class\\) is not a column"):
        bs.BNClassifier().fit(votes, "ZZ")
    nb = {"nb": bs.BNClassifier(structure="nb")}
    with pytest.raises(HyperparameterError, match="at least 2 folds"):
        bs.evaluate(nb, votes, "Class", cv=1)
    with pytest.raises(HyperparameterError, match="models must be a mapping"):
        bs.evaluate([bs.BNClassifier()], votes, "Class")
    with pytest.raises(HyperparameterError, match="model 'nb' is a dict, not a scikit-learn classifier"):
        bs.evaluate({"nb": dict(structure="nb")}, votes, "Class")
    with pytest.raises(HyperparameterError, match="wins must be an integer >= 0"):
        bs.sign_test(-1, 2)
    with pytest.raises(HyperparameterError, match="k must be an integer, not '2'"):
        bs.learn_structure(votes, "Class", kind="kdb", k="2")
    with pytest.raises(UnknownDatasetError, match="unknown data set 'zz'; available: asia"):
        bs.load_dataset("zz")
    with pytest.raises(KeyError):  # still a KeyError for code that caught one
        bs.load_dataset("zz")
    dag = bs.DAG({1: [2], 2: []})
    assert dag.nodes == ["1", "2"] and dag.parents("1") == ["2"]
    with pytest.raises(StructureError, match="the parents of 'A' must be a list of names, not 'BC'"):
        bs.DAG({"A": "BC"})
    with pytest.raises(StructureError, match="modelstring\\(\\) takes a DAG or a fitted network"):
        bs.modelstring(None)
    with pytest.raises(DataError, match="schema must be a Schema"):
        bs.encode(votes, 3)
    with pytest.raises(DataError, match="compares two fitted networks"):
        net.max_abs_diff(3)


def test_cli_demo_needs_a_positive_number_of_repeats(capsys):
    from pybncsmooth.frontends.cli import main

    with pytest.raises(SystemExit) as e:
        main(["demo", "--repeats", "0"])
    assert e.value.code == 2 and "expected a whole number >= 1, got '0'" in capsys.readouterr().err

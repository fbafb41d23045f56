"""Regression tests of the fourth hostile-input round: queries' evidence (discretised
networks, integer levels, domain labels, evidence of probability zero, integer column
labels), domain reports, adapt's labels, evaluate and evaluate_domains, options and the
command line.  Each test's docstring names the case of the round it covers; the
property tests of the same features are in ``test_properties.py``."""

from __future__ import annotations

import shlex
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import (
    DataError,
    HyperparameterError,
    ImpossibleEvidenceError,
    NonCategoricalError,
    StatisticUnavailableError,
    UnseenDomainError,
    UnseenDomainWarning,
    UnseenLevelError,
    ZeroProbabilityWarning,
)
from pybncsmooth.frontends.cli import main
from pybncsmooth.model.domains.report import js_divergence

ROOT = Path(__file__).resolve().parents[1]
ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"


@pytest.fixture(scope="module")
def asia() -> pd.DataFrame:
    return bs.load_dataset("asia")


@pytest.fixture(scope="module")
def numeric() -> pd.DataFrame:
    """300 rows: a number x and a class y that depends on it."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=300)
    y = np.where(x + rng.normal(size=300) > 0, "yes", "no")
    return pd.DataFrame({"x": x, "y": pd.Categorical(y)})


@pytest.fixture(scope="module")
def integers() -> pd.DataFrame:
    """200 rows of integer columns: A in 0..2, B in 0..1 depending on A, domain g in 1..3."""
    rng = np.random.default_rng(1)
    a = rng.integers(0, 3, 200)
    b = (rng.random(200) < np.array([0.2, 0.5, 0.8])[a]).astype(np.int64)
    return pd.DataFrame({"A": a, "B": b, "g": rng.integers(1, 4, 200)})


def _bins(x: np.ndarray, n_bins: int = 3) -> np.ndarray:
    """The bin of each value under equal-frequency cut points, intervals (a, b]."""
    cuts = np.unique(np.quantile(x, np.arange(1, n_bins) / n_bins))
    return np.searchsorted(cuts, x, side="left")


# ----------------------------------------------------------------------------- case 1


def test_case1_a_bin_label_is_evidence_and_other_text_is_refused(numeric):
    """Case 1: with discretize=, a bin label as evidence (what schema, cpt_frame and
    predict_proba show) was dropped and the query answered the marginal; now it is that
    bin, equal to a number inside it and to BDeu's closed form on the bin's counts, and
    text that is neither a number nor a bin is an UnseenLevelError naming the value."""
    net = bs.fit("[x][y|x]", numeric, "bayes", discretize="equal_frequency", n_bins=3)
    labels = net.levels("x")
    assert list(net.cpt_frame("y", wide=True).index.get_level_values("x")) == list(labels)
    codes = _bins(numeric["x"].to_numpy())
    yes = (numeric["y"] == "yes").to_numpy()
    for b, lab in enumerate(labels):
        n_b, n_yes = (codes == b).sum(), (yes & (codes == b)).sum()
        expect = (n_yes + 1 / 6) / (n_b + 1 / 3)  # BDeu, iss = 1: alpha = 1 / (2 levels x 3 bins)
        p = net.query("y", {"x": lab})
        assert p["yes"] == pytest.approx(expect, rel=1e-12)
        inside = float(np.median(numeric["x"].to_numpy()[codes == b]))
        assert net.query("y", {"x": inside})["yes"] == pytest.approx(expect, rel=1e-12)
    assert abs(net.query("y", {"x": labels[0]})["yes"] - net.query("y")["yes"]) > 0.2
    # a frame of labels, numbers and missing cells: one rule for query and predict_proba
    mixed = pd.DataFrame({"x": pd.array([labels[0], 2.5, None, labels[2]], dtype=object)})
    numbers = pd.DataFrame({"x": [-2.0, 2.5, np.nan, 2.0]})
    pd.testing.assert_frame_equal(net.predict_proba(mixed, "y"), net.predict_proba(numbers, "y"))
    pd.testing.assert_frame_equal(net.query("y", mixed), net.query("y", numbers))
    cats = pd.DataFrame({"x": pd.Categorical([labels[1]], categories=labels)})
    assert net.query("y", cats).iloc[0, 1] == pytest.approx(net.query("y", {"x": labels[1]})["yes"], rel=1e-15)
    for bad in ("banana", "(0,1]"):
        with pytest.raises(UnseenLevelError, match=rf"'x'.*{bad!r}".replace("(", r"\(").replace("]", r"\]")):
            net.query("y", {"x": bad})
        with pytest.raises(UnseenLevelError, match="'x'"):
            net.predict_proba(pd.DataFrame({"x": [bad]}), "y")
    # under on_unseen="backoff" such a value is an unobserved cell, as an unseen level is
    p = net.predict_proba(pd.DataFrame({"x": ["banana"]}), "y", on_unseen="backoff")
    np.testing.assert_allclose(p.to_numpy()[0], net.query("y").to_numpy(), rtol=1e-12)


def test_case1_the_classifier_takes_its_bin_labels_too(numeric):
    """Case 1: BNClassifier(discretize=) treated a bin label as an unobserved cell."""
    X, y = numeric[["x"]], numeric["y"]
    clf = bs.BNClassifier(structure="nb", discretize="equal_frequency", n_bins=3).fit(X, y)
    labelled = clf.discretizer_.transform(X).astype({"x": object})
    np.testing.assert_array_equal(clf.predict_proba(labelled), clf.predict_proba(X))
    assert np.ptp(clf.predict_proba(labelled)[:, 0]) > 0.3  # the bins inform the class
    with pytest.raises(UnseenLevelError, match="'x'.*'banana'"):
        clf.predict_proba(pd.DataFrame({"x": ["banana"]}))


# ----------------------------------------------------------------------------- case 3


def test_case3_one_matching_rule_for_domain_labels(asia):
    """Case 3: on a domain stored as text, for_domain(1978) returned the population with
    a warning and sample(domain=1978) sampled it, while query(domain=1978), adapt and
    predict_proba matched 1978 to '1978'.  Every entry point now names it alike."""
    d = asia.iloc[:300].assign(year=np.repeat(["1978", "1979", "1980"], 100))
    net = bs.fit(ASIA, d, "bayes", domain="year")
    own = net.for_domain("1978")
    assert own.max_abs_diff(net.for_domain(None)) > 1e-3
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnseenDomainWarning)
        for label in (1978, np.int64(1978), 1978.0, "1978"):
            assert net.for_domain(label).max_abs_diff(own) == 0.0
            pd.testing.assert_frame_equal(net.sample(50, random_state=3, domain=label),
                                          own.sample(50, random_state=3))
            pd.testing.assert_series_equal(net.query("L", {"S": "yes"}, domain=label), own.query("L", {"S": "yes"}))
            rows = d.iloc[:5].drop(columns="L").assign(year=[label] * 5)
            pd.testing.assert_frame_equal(net.predict_proba(rows, "L"),
                                          own.predict_proba(rows.drop(columns="year"), "L"))
        assert net.adapt(d.iloc[:20].drop(columns="year"), 1978).domains == net.domains
    with pytest.warns(UnseenDomainWarning, match="1981"):
        assert net.for_domain(1981).max_abs_diff(net.for_domain(None)) == 0.0


# ----------------------------------------------------------------------------- case 4


def test_case4_the_command_line_names_integer_levels_and_domains(integers, tmp_path, capsys):
    """Case 4: `query --domain 3` answered the population's P(B) (exit 0) and `-e A=1`
    was refused ("'1' not seen; known levels: 0, 1, 2") on a network fitted on integers;
    `predict` on its CSV refused every row.  The command line's text names integer
    levels and domains as Python's integers do."""
    net = bs.fit("[A][B|A]", integers, "bayes", domain="g")
    path = str(tmp_path / "int.pbn")
    net.write(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnseenDomainWarning)
        assert main(["query", path, "-t", "B", "-e", "A=1", "--domain", "3"]) == 0
        out = capsys.readouterr().out
        p = net.query("B", {"A": 1}, domain=3)
        assert p[1] != pytest.approx(net.query("B", {"A": 1}, domain=1)[1], abs=1e-3)
        assert out.splitlines()[0] == "P(B | A=1)"
        assert [float(line.split()[1]) for line in out.splitlines()[-2:]] == pytest.approx(p.to_numpy(), rel=1e-5)
        integers.drop(columns="B").to_csv(tmp_path / "rows.csv", index=False)
        assert main(["predict", path, str(tmp_path / "rows.csv"), "-t", "B", "-o", str(tmp_path / "p.csv")]) == 0
    got = pd.read_csv(tmp_path / "p.csv")
    want = net.predict_proba(integers.drop(columns="B"), "B")
    np.testing.assert_allclose(got[["P(B=0)", "P(B=1)"]].to_numpy(), want.to_numpy(), rtol=1e-12)
    np.testing.assert_array_equal(got["B"].to_numpy(), want.to_numpy().argmax(axis=1))


# ----------------------------------------------------------------------------- case 5


def test_case5_js_divergence_is_finite_where_a_draw_underflows():
    """Case 5: the mean of a subnormal probability and zero rounds to zero, so a draw's
    JS divergence was infinite and the domain report's interval NaN; the divergence is
    now computed from p + q.  The formula against a value worked by hand."""
    assert js_divergence(np.array([5e-324, 1.0]), np.array([0.0, 1.0])) == 0.0
    assert js_divergence(np.array([1e-320, 1.0]), np.array([0.0, 1.0])) == pytest.approx(1e-320 * np.log(2) / 2,
                                                                                          rel=1e-2)
    p, q = np.array([0.5, 0.5]), np.array([1.0, 0.0])
    hand = 0.5 * (0.5 * np.log(0.5 / 0.75) + 0.5 * np.log(0.5 / 0.25)) + 0.5 * np.log(1 / 0.75)
    assert js_divergence(p, q) == pytest.approx(hand, rel=1e-14)
    assert js_divergence(q, q) == 0.0


def test_case5_domain_report_intervals_are_finite_for_domains_like_the_population(asia):
    """Case 5: four sites drawn alike (hmd, 5,000 rows, 500 draws) gave NaN js_lower /
    js_upper for node E without a word."""
    d = asia.iloc[:5000].assign(site=np.tile(["a", "b", "c", "d"], 1250))
    net = bs.fit(ASIA, d, "hmd", domain="site", random_state=0)
    rep = net.domain_report(draws=500)
    assert np.isfinite(rep[["kl", "js", "js_lower", "js_upper"]].to_numpy()).all()
    assert (rep["js_lower"] <= rep["js_upper"]).all() and (rep["js_upper"] < 0.01).all()


# ----------------------------------------------------------------------------- case 6


def _text_and_categoricals() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"A": rng.choice(["x", "y"], 60), "C": rng.choice(["p", "q"], 60),
                       "site": np.repeat(["s1", "s2", "s3"], 20)})
    df.loc[5, "C"] = "r"  # a class only one row of site s1 has
    df.loc[30, "A"] = "z"  # a feature level only site s2 has
    cats = df.astype({"A": pd.CategoricalDtype(["x", "y", "z"]), "C": pd.CategoricalDtype(["p", "q", "r"])})
    return df, cats


def test_case6_evaluate_domains_scores_text_data_as_categoricals():
    """Case 6: on text data a class the training rows lacked was scored as the model's
    last class (log-likelihood -0.67 where Categoricals give -2.67), and a feature level
    only one domain has aborted the leave-one-domain-out run.  Every level of the data
    is now a level of every fit: text and Categoricals give the same scores."""
    text, cats = _text_and_categoricals()
    sets = {"pooled": {"mode": "pooled", "method": "bayes"}, "hier": {"mode": "domain", "method": "bayes"}}
    kw = dict(target="C", k_grid=(0, 2), test_size=0.5, random_state=1)
    a = bs.evaluate_domains("[A][C|A]", text, "site", sets, **kw).results
    b = bs.evaluate_domains("[A][C|A]", cats, "site", sets, **kw).results
    assert set(a["scheme"]) == {"within", "lodo"} and len(a) == len(b)
    pd.testing.assert_frame_equal(a, b)
    assert np.isfinite(a["loglik"]).all()


def test_case6_the_rare_class_is_scored_by_its_own_probability():
    """Case 6: a left-out domain whose one row has a class the other domains never show
    is scored by BDeu's probability of that class, (0 + 1/6) / (n_x + 1/2) (iss = 1, three
    classes, two levels of A), not by the probability of the model's last class."""
    rng = np.random.default_rng(0)
    rows = pd.DataFrame({"A": rng.choice(["x", "y"], 40), "C": rng.choice(["p", "q"], 40),
                         "site": np.repeat(["s1", "s2"], 20)})
    data = pd.concat([rows, pd.DataFrame({"A": ["x"], "C": ["r"], "site": ["s3"]})], ignore_index=True)
    ev = bs.evaluate_domains("[A][C|A]", data, "site", {"p": {"mode": "pooled", "method": "bayes"}},
                             target="C", k_grid=(0,), random_state=0)
    r = ev.results.set_index(["scheme", "domain"])
    n_x = int((rows["A"] == "x").sum())
    assert r.loc[("lodo", "s3"), "loglik"] == pytest.approx(np.log((1 / 6) / (n_x + 1 / 2)), rel=1e-12)


# ----------------------------------------------------------------------------- case 7


@pytest.mark.parametrize("label, message", [
    (pd.NA, "missing value"), (pd.NaT, "missing value"), (None, "missing value"), (np.nan, "missing value"),
    (("N",), "one level"), (["N"], "one level"), ({"N"}, "one level"), (np.array(["N"]), "one level"),
    (b"N", "type bytes"), (2.5, "type float"), (np.datetime64("2020-01-01"), "type date"), (object(), "type object"),
])
def test_case7_adapt_checks_its_domain_label(asia, label, message):
    """Case 7: adapt made an unreachable <NA> domain of pd.NA / NaT, a domain named
    "['N']" of a list, and crashed with TypeError on others; every such label is now
    refused with the package's error, the network untouched."""
    net = bs.fit(ASIA, asia.iloc[:300].assign(site=np.repeat(["a", "b", "c"], 100)), "bayes", domain="site")
    with pytest.raises(DataError, match=message):
        net.adapt(asia.iloc[:10], label)
    assert net.domains == ["a", "b", "c"]
    if message == "one level":
        with pytest.raises(DataError, match="one level"):
            net.for_domain(label)
        with pytest.raises(DataError, match="one level"):
            net.query("L", domain=label)


def test_case7_adapt_names_number_labels_as_numbers(integers):
    """Case 7: a whole float and a numpy integer name the integer domain 3."""
    net = bs.fit("[A][B|A]", integers, "bayes", domain="g")
    rows = integers.iloc[:30].drop(columns="g")
    base = net.adapt(rows, 3)
    for label in (3.0, np.int16(3), "3"):
        out = net.adapt(rows, label)
        assert out.domains == [1, 2, 3] and out.max_abs_diff(base) == 0.0
    assert net.adapt(rows, 7.0).domains == [1, 2, 3, 7]


# ----------------------------------------------------------------------------- case 8


@pytest.mark.parametrize("cv", ["1", "0", 1, "0x2", "5x1"])
def test_case8_evaluate_refuses_fewer_than_two_folds(asia, cv):
    """Case 8: evaluate(cv="1") ended in scikit-learn's traceback."""
    with pytest.raises(HyperparameterError, match="at least 2 folds"):
        bs.evaluate({"nb": bs.BNClassifier(structure="nb")}, asia.iloc[:100], "L", cv=cv)


def test_case8_evaluate_cv_1_on_the_command_line(tmp_path, capsys, asia):
    """Case 8: `evaluate --cv 1` ended in a traceback; now one line, exit status 2."""
    asia.iloc[:100].to_csv(tmp_path / "a.csv", index=False)
    assert main(["evaluate", str(tmp_path / "a.csv"), "-c", "L", "-m", "nb", "--cv", "1", "-q"]) == 2
    err = capsys.readouterr().err
    assert "at least 2 folds" in err and len(err.strip().splitlines()) == 1


# ----------------------------------------------------------------------------- case 9


@pytest.mark.parametrize("kw, message", [
    ({"random_state": "x"}, "random_state must be"), ({"random_state": -1}, "random_state must be"),
    ({"draws": 1}, "draws=1"), ({"draws": -2}, "draws"), ({"level": 1.5}, "level"),
])
def test_case9_domain_report_checks_its_arguments(asia, kw, message):
    """Case 9: domain_report and plot_domains passed random_state to numpy unchecked
    (numpy's TypeError / ValueError) and accepted draws=1 (zero-width intervals)."""
    net = bs.fit(ASIA, asia.iloc[:300].assign(site=np.repeat(["a", "b", "c"], 100)), "bayes", domain="site")
    with pytest.raises(HyperparameterError, match=message):
        net.domain_report(**kw)
    with pytest.raises(HyperparameterError, match=message):
        net.plot_domains("L", **kw)
    rep = net.domain_report(draws=20, random_state=np.random.default_rng(0))
    assert (rep["js_lower"] <= rep["js_upper"]).all()
    assert "js_lower" in net.domain_report(draws=0) and net.domain_report(draws=0)["js_lower"].isna().all()


# ----------------------------------------------------------------------------- case 10


def test_case10_the_command_line_says_which_file_is_missing_or_a_folder(tmp_path, capsys, asia):
    """Case 10: a missing file was reported by its name alone ("error: data.csv"); a
    folder given as a model file gave a traceback."""
    folder = tmp_path / "net.pbn"
    folder.mkdir()
    asia.iloc[:20].to_csv(tmp_path / "a.csv", index=False)
    cases = [
        (["fit", str(tmp_path / "nope.csv"), "-s", ASIA], "no such data file: '"),
        (["predict", str(tmp_path / "nope.pbn"), str(tmp_path / "a.csv"), "-t", "L"], "no such network file"),
        (["query", str(folder), "-t", "L"], "is a folder, not a file"),
        (["info", str(folder)], "is a folder, not a file"),
        (["predict", str(ROOT / "tests/data/bnlearn/asia.bif"), str(tmp_path), "-t", "L"], "data file"),
        (["evaluate", str(tmp_path / "nope.csv"), "-c", "L", "-m", "nb"], "no such data file"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    with pytest.raises(FileNotFoundError, match="no such network file"):
        bs.read_network(tmp_path / "nope.bif")
    with pytest.raises(IsADirectoryError, match="folder"):
        bs.fit(ASIA, str(tmp_path), "bayes")


# ----------------------------------------------------------------------------- case 11


def test_case11_classifier_adapt_follows_its_on_unseen(asia):
    """Case 11: BNClassifier.adapt ignored the classifier's on_unseen="backoff" and its
    error advised an argument that adapt then refused with TypeError."""
    X, y = asia.drop(columns="L").iloc[:400], asia["L"].iloc[:400]
    rows = asia.drop(columns="L").iloc[400:420].astype(object)
    rows.iloc[0, 0] = "maybe"  # a level of A unseen in training
    holes = rows.copy()
    holes.iloc[0, 0] = np.nan
    kw = dict(structure="tan", method="bayes", domain=None)
    back = bs.BNClassifier(on_unseen="backoff", **kw).fit(X, y).adapt(rows, asia["L"].iloc[400:420], "new")
    ref = bs.BNClassifier(on_unseen="backoff", **kw).fit(X, y).adapt(holes, asia["L"].iloc[400:420], "new")
    assert back.network_.max_abs_diff(ref.network_) == 0.0
    strict = bs.BNClassifier(**kw).fit(X, y)
    with pytest.raises(UnseenLevelError, match='on_unseen="backoff"'):
        strict.adapt(rows, asia["L"].iloc[400:420], "new")
    strict.adapt(rows, asia["L"].iloc[400:420], "new", on_unseen="backoff")  # the advice is taken
    assert strict.network_.max_abs_diff(ref.network_) == 0.0
    with pytest.raises(HyperparameterError, match="on_unseen"):
        strict.adapt(rows, asia["L"].iloc[400:420], "other", on_unseen="maybe")


def test_case11_network_adapt_follows_the_fit_on_unseen(asia):
    """Case 11 (its sibling on FittedNetwork.adapt): the fit's on_unseen="backoff" is
    adapt's default, as it is the default of the network's queries."""
    net = bs.fit(ASIA, asia.iloc[:400], "bayes", na="available", on_unseen="backoff")
    rows = asia.iloc[400:420].astype(object)
    rows.iloc[0, 0] = "maybe"
    holes = rows.copy()
    holes.iloc[0, 0] = np.nan
    assert net.adapt(rows, "new").max_abs_diff(bs.fit(ASIA, asia.iloc[:400], "bayes", na="available").adapt(
        holes, "new")) == 0.0
    with pytest.raises(UnseenLevelError, match="'A'.*'maybe'"):
        net.adapt(rows, "new", on_unseen="error")


# ----------------------------------------------------------------------------- case 12


def test_case12_on_unseen_domain_error_raises_unseen_domain_error(asia):
    """Case 12: under on_unseen_domain="error" a missing domain value raised
    MissingValueError (advising na=), a missing domain column MissingColumnError and a
    query without domain= a plain DataError; the guide promises UnseenDomainError."""
    d = asia.iloc[:300].assign(site=np.repeat(["a", "b", "c"], 100))
    net = bs.fit(ASIA, d, "bayes", domain="site", on_unseen_domain="error")
    rows = d.iloc[:4].drop(columns="L")
    cases = [
        (lambda: net.predict_proba(rows.assign(site=["a", None, "b", "c"]), "L"), r"1 row\(s\) have no domain"),
        (lambda: net.predict_proba(rows.drop(columns="site"), "L"), r"'site' \(domain\) is not a column"),
        (lambda: net.logpdf(d.iloc[:4].drop(columns="site")), r"'site' \(domain\) is not a column"),
        (lambda: net.query("L"), "no domain given"),
        (lambda: net.query("L", domain=np.nan), "no domain given"),
        (lambda: net.query("L", domain="zz"), "'zz'"),
        (lambda: net.for_domain("zz"), "'zz'"),
    ]
    for fn, message in cases:
        with pytest.raises(UnseenDomainError, match=message) as e:
            fn()
        assert "'site'" in str(e.value) and "'a', 'b', 'c'" in str(e.value) and "na=" not in str(e.value)
    clf = bs.BNClassifier(structure="nb", domain="site", on_unseen_domain="error").fit(d.drop(columns="L"), d["L"])
    with pytest.raises(UnseenDomainError, match=r"'site' \(domain\) is not a column") as e:
        clf.predict_proba(rows.drop(columns="site"))
    assert isinstance(e.value, bs.errors.MissingColumnError)  # what it was before: handlers of it still catch it


# ----------------------------------------------------------------------------- case 14


def test_case14_query_map_refuses_interval_draws_and_seed(tmp_path, capsys, asia):
    """Case 14: `query --map` silently ignored --interval, --draws and --seed (and
    --draws / --seed without --interval were ignored too); now a usage error, and with
    --interval they are the Python query's draws and random_state."""
    net = bs.fit(ASIA, asia, "bayes")
    path = str(tmp_path / "a.pbn")
    net.write(path)
    for extra in (["--map", "--interval", "0.9"], ["--map", "--draws", "50"], ["--map", "--seed", "1"],
                  ["--draws", "50"], ["--seed", "2"]):
        with pytest.raises(SystemExit) as e:
            main(["query", path, "-t", "L", "-e", "S=yes", *extra])
        assert e.value.code == 2
        assert "--interval" in capsys.readouterr().err
    assert main(["query", path, "-t", "L", "-e", "S=yes", "--interval", "0.8", "--draws", "50", "--seed", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    want = net.query("L", {"S": "yes"}, interval=0.8, draws=50, random_state=3)
    got = np.array([[float(v) for v in line.split()[1:]] for line in out[-2:]])
    np.testing.assert_allclose(got, want.to_numpy(), rtol=1e-5)


def test_case14_r_query_with_map_refuses_an_interval(asia):
    """Case 14 (its sibling in R): bncs.query(map = TRUE, interval = 0.9) ignored the
    interval; the bridge under it refuses it as the command line does."""
    from pybncsmooth.interop.r_bridge import query_for_r

    net = bs.fit(ASIA, asia, "bayes")
    with pytest.raises(HyperparameterError, match="map = TRUE.*interval"):
        query_for_r(net, ["L"], {"S": "yes"}, interval=0.9, map_state=True)
    with pytest.raises(HyperparameterError, match="random_state"):
        query_for_r(net, ["L"], {"S": "yes"}, random_state=1, map_state=True)
    res = query_for_r(net, ["L", "T"], {"S": "yes"}, map_state=True)
    state, prob = net.map_query(["L", "T"], {"S": "yes"})
    assert res["stats"]["prob"] == [prob]


# ----------------------------------------------------------------------------- case 15


def test_case15_evidence_of_probability_zero_is_refused_whatever_the_target(asia):
    """Case 15: on asia by maximum likelihood (E = T or L), P(A | T=yes, E=no, L=no)
    returned [0.95, 0.05] because the evidence on E is d-separated from A given T;
    for S the zero was found.  Now ImpossibleEvidenceError for every target, map_query
    and frames (naming the row); predict_proba gives such a row the uniform
    distribution with its ZeroProbabilityWarning, as rows with a zero in the target's
    own factors."""
    net = bs.fit(ASIA, asia, "mle")
    ev = {"T": "yes", "E": "no", "L": "no"}
    for target in ("A", "S", "X", "B", ["A", "S"]):
        with pytest.raises(ImpossibleEvidenceError, match="probability zero"):
            net.query(target, ev)
    with pytest.raises(ImpossibleEvidenceError):
        net.map_query("A", ev)
    frame = pd.DataFrame({"T": ["no", "yes"], "E": ["no", "no"], "L": ["no", "no"]})
    with pytest.raises(ImpossibleEvidenceError, match=r"row\(s\) \[1\]"):
        net.query("A", frame)
    # possible evidence is still answered, by d-separation: P(A | T=yes, E=yes) = P(A | T=yes)
    pd.testing.assert_series_equal(net.query("A", {"T": "yes", "E": "yes"}), net.query("A", {"T": "yes"}))
    row = pd.DataFrame({"T": ["yes", "yes"], "E": ["no", "yes"], "L": ["no", "no"], "S": ["yes"] * 2,
                        "X": ["no"] * 2, "B": ["no"] * 2, "D": ["no"] * 2})
    with pytest.warns(ZeroProbabilityWarning, match="1 row"):
        p = net.predict_proba(row, "A")
    np.testing.assert_array_equal(p.to_numpy()[0], [0.5, 0.5])
    np.testing.assert_allclose(p.to_numpy()[1], net.query("A", row.drop(columns="A", errors="ignore").iloc[[1]]
                                                          ).to_numpy()[0], rtol=1e-12)
    with pytest.warns(ZeroProbabilityWarning):  # the same with a missing cell (the elimination's path)
        p = net.predict_proba(row.assign(D=[None, "no"]), "A")
    np.testing.assert_array_equal(p.to_numpy()[0], [0.5, 0.5])


# ----------------------------------------------------------------------------- case 16


def test_case16_integer_levels_take_a_float_column_with_missing_cells(integers):
    """Case 16: integer levels refused an evidence frame whose missing cell made pandas
    hold it as float64 ("discretise it first"), while dict evidence 1.0 was level 1.
    Whole floats now name integer levels everywhere; a fraction is still numeric data."""
    net = bs.fit("[A][B|A]", integers.drop(columns="g"), "bayes")
    frame = pd.DataFrame({"A": [1, None, 2]})
    assert frame["A"].dtype == np.float64
    got = net.query("B", frame)
    np.testing.assert_allclose(got.iloc[0], net.query("B", {"A": 1}), rtol=1e-15)
    np.testing.assert_allclose(got.iloc[1], net.query("B"), rtol=1e-12)
    np.testing.assert_allclose(got.iloc[2], net.query("B", {"A": 2}), rtol=1e-15)
    pd.testing.assert_frame_equal(net.predict_proba(frame, "B"),
                                  net.predict_proba(pd.DataFrame({"A": pd.array([1, None, 2], dtype="Int64")}), "B"))
    for same in (1.0, np.float32(1), np.int8(1), "1"):
        pd.testing.assert_series_equal(net.query("B", {"A": same}), net.query("B", {"A": 1}))
    with pytest.raises(NonCategoricalError, match="'A'"):
        net.query("B", pd.DataFrame({"A": [1.5, None]}))
    with pytest.raises(UnseenLevelError, match="'A'.*7"):
        net.query("B", pd.DataFrame({"A": [7.0, None]}))
    with pytest.raises(UnseenLevelError, match="'A'"):
        net.query("B", {"A": 1.5})


# ----------------------------------------------------------------------------- case 17


def test_case17_integer_column_labels_name_the_nodes(tmp_path):
    """Case 17: a frame with integer column labels fitted (nodes '0', '1', '2'), then
    predict_proba said "'0' is not a column; the data has '0', '1', '2'" and query
    "unknown node '0'".  Integer labels name the nodes by their text everywhere."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({0: rng.choice(list("ab"), 80), 1: rng.choice(list("xy"), 80), 2: rng.choice(list("pq"), 80)})
    net = bs.fit("[0][1|0][2|1]", df, "bayes")
    named = df.rename(columns=str)
    want = net.predict_proba(named, "1")
    pd.testing.assert_frame_equal(net.predict_proba(df, "1"), want)
    pd.testing.assert_frame_equal(net.predict_proba(df, 1), want)
    np.testing.assert_array_equal(net.logpdf(df), net.logpdf(named))
    pd.testing.assert_series_equal(net.query(1, {0: "a"}), net.query("1", {"0": "a"}))
    pd.testing.assert_frame_equal(net.query("1", df[[0, 2]].iloc[:3]), net.query("1", named[["0", "2"]].iloc[:3]))
    assert net.adapt(df.iloc[:10], "new").max_abs_diff(net.adapt(named.iloc[:10], "new")) == 0.0
    with pytest.raises(DataError, match="twice"):
        net.query("1", {0: "a", "0": "b"})


# ----------------------------------------------------------------------------- case 18


def test_case18_adapt_cuts_numbers_into_the_fitted_bins(numeric):
    """Case 18: a network fitted with discretize= could not adapt from raw numeric rows
    (NonCategoricalError) while its queries cut them; adapt now cuts them the same way."""
    d = numeric.assign(site=np.repeat(["a", "b", "c"], 100))
    net = bs.fit("[x][y|x]", d, "bayes", discretize="equal_frequency", n_bins=3, domain="site")
    rows = numeric.iloc[:25]
    out = net.adapt(rows, "new")
    cut = net.transformer.transform(rows)
    assert out.max_abs_diff(net.adapt(cut, "new")) == 0.0
    assert out.domains == ["a", "b", "c", "new"]
    p = out.predict_proba(rows.drop(columns="y").assign(site="new"), "y")
    np.testing.assert_allclose(p.to_numpy(), out.for_domain("new").predict_proba(cut.drop(columns="y"), "y"),
                               rtol=1e-12)
    with pytest.raises(UnseenLevelError, match="'x'"):
        net.adapt(rows.astype({"x": object}).assign(x=["many"] * 25), "new")


# ----------------------------------------------------------------------------- case 19


@pytest.mark.parametrize("own, message", [
    ({"structure": "tan"}, "structure does not apply to evaluate_domains"),
    ({"on_unseen_domain": "error"}, "on_unseen_domain does not apply to evaluate_domains"),
    ({"na": "sometimes"}, "na must be one of"),
    ({"em_max_iter": 3}, "em_max_iter applies to na="),
    ({"iss": -1.0}, "iss"),
])
def test_case19_options_inside_a_setting_are_checked_at_the_entry_point(asia, own, message):
    """Case 19: options inside an evaluate_domains setting skipped the options' checks
    (structure="tan" silently ignored, on_unseen_domain accepted where the entry point
    refuses it); each setting's options are now built at the entry point, named."""
    d = asia.iloc[:300].assign(site=np.repeat(["a", "b", "c"], 100))
    sets = {"odd": {"mode": "pooled", "method": "bayes", **own}, "h": {"mode": "domain", "method": "bayes"}}
    with pytest.raises((HyperparameterError, DataError), match=message) as e:
        bs.evaluate_domains(ASIA, d, "site", sets, lodo=False)
    assert "setting 'odd'" in str(e.value) or "na must be" in str(e.value)


def test_case19_a_settings_own_options_take_effect(asia):
    """Case 19: a setting's own valid option (na="drop") still takes precedence."""
    d = asia.iloc[:300].assign(site=np.repeat(["a", "b", "c"], 100))
    d.loc[::7, "X"] = None
    sets = {"drop": {"mode": "pooled", "method": "bayes", "na": "drop"}, "h": {"mode": "domain", "method": "bayes"}}
    r = bs.evaluate_domains(ASIA, d, "site", sets, lodo=False, na="available", random_state=0).results
    assert np.isfinite(r["loglik"]).all() and set(r["setting"]) == {"drop", "h"}
    with pytest.raises(DataError, match="missing"):
        bs.evaluate_domains(ASIA, d, "site", sets, lodo=False, random_state=0)  # na="error" for "h"


# ----------------------------------------------------------------------------- case 24


def _readme_commands() -> list[list[str]]:
    """The README's command-line example, one argument list per command."""
    text = (ROOT / "README.md").read_text()
    block = text.split("**Command line**", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    lines = block.replace("\\\n", " ").strip().splitlines()
    return [shlex.split(line)[1:] for line in lines if line.startswith("pybncsmooth ")]


def test_case24_the_readme_command_line_example_runs_as_written(tmp_path, monkeypatch, capsys):
    """Case 24: the README's example failed at its third step (`query net.bif ...
    --interval 0.9` after `fit -m bayes -o net.bif`: "use a Bayesian estimator", though
    the fit was bayes).  The example now writes net.pbn, which keeps the posterior, and
    every command of it runs on data of its shape."""
    rng = np.random.default_rng(0)
    n = 120
    a = rng.choice(["a1", "a2"], n)
    b = np.where(rng.random(n) < np.where(a == "a1", 0.3, 0.7), "b2", "b1")
    c = np.where(rng.random(n) < 0.5, "c1", "c2")
    cls = np.where(rng.random(n) < np.where(b == "b2", 0.8, 0.3), "yes", "no")
    pd.DataFrame({"A": a, "B": b, "C": c, "Class": cls}).to_csv(tmp_path / "data.csv", index=False)
    pd.DataFrame({"A": a[:10], "B": b[:10]}).to_csv(tmp_path / "new.csv", index=False)
    monkeypatch.chdir(tmp_path)
    commands = _readme_commands()
    assert [c[0] for c in commands] == ["fit", "predict", "query", "evaluate", "methods"]
    for argv in commands:
        assert main(argv + (["-q"] if argv[0] == "evaluate" else [])) == 0, argv
        out = capsys.readouterr().out
        if argv[0] == "query":
            assert out.splitlines()[1].split() == ["prob", "lower", "upper"]
    assert len(pd.read_csv(tmp_path / "predictions.csv")) == 10


def test_case24_intervals_from_a_bif_say_what_is_missing(tmp_path, capsys, asia):
    """Case 24: the message said "use a Bayesian estimator" to a bayes fit read back
    from a BIF.  A BIF keeps the tables only; intervals need the posterior, which a
    .pbn file keeps: the message says so (tables alone carry no sample size, so no
    interval is made up from them)."""
    net = bs.fit(ASIA, asia, "bayes")
    net.write(tmp_path / "a.bif")
    net.write(tmp_path / "a.pbn")
    back = bs.read_network(tmp_path / "a.bif")
    for fn in (lambda: back.query("L", interval=0.9), lambda: back.cpt("L", stat="sd"),
               lambda: back.sample_parameters(2)):
        with pytest.raises(StatisticUnavailableError, match=r"keeps the tables only.*\(\.pbn\)") as e:
            fn()
        assert "BIF" in str(e.value)
    assert main(["query", str(tmp_path / "a.bif"), "-t", "L", "--interval", "0.9"]) == 2
    assert ".pbn" in capsys.readouterr().err
    assert main(["query", str(tmp_path / "a.pbn"), "-t", "L", "--interval", "0.9", "--seed", "1"]) == 0


def test_a_text_names_the_level_of_its_own_levels_types_whatever_was_looked_up_before():
    """(0, 1), (False, True) and (0.0, 1.0) are equal tuples: a cache keyed by the levels
    alone handed (0, 1) the texts of (False, True) ("False", "True"), so '1' named no
    level of (0, 1) once a network with boolean levels had been queried (an evidence
    error that depended on what ran before)."""
    from pybncsmooth.data.levels import level_code

    assert level_code((False, True), "True") == 1
    assert level_code((0.0, 1.0), "1") == 1
    assert level_code((0, 1), "1") == 1
    assert level_code((0, 1), "True") == -1
    assert level_code((False, True), "1") == -1
    assert level_code((0.5, 1.0), "0.5") == 0


def test_text_levels_are_read_without_pyarrow_when_pandas_keeps_text_in_python(monkeypatch):
    """pyarrow is an optional extra. pandas' python-backed text dtype has
    ``__arrow_array__`` too (it imports pyarrow), and a frame's text levels were read
    through it whatever the storage: on a machine without pyarrow every fit of a frame
    of text Categoricals (the README's demo) failed with "No module named 'pyarrow'"."""
    rng = np.random.default_rng(3)
    text = pd.StringDtype("python")
    cols = {}
    for v, levels in (("A", ["a1", "a2"]), ("B", ["b1", "b2", "b3"])):
        cats = pd.Index(levels, dtype=text)
        cols[v] = pd.Categorical.from_codes(rng.integers(0, len(levels), 200), dtype=pd.CategoricalDtype(cats))
    df = pd.DataFrame(cols)
    assert df["B"].cat.categories.dtype.storage == "python"
    n = pd.crosstab(df["A"], df["B"]).to_numpy()
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "pyarrow", None)  # any import of pyarrow now fails
        net = bs.fit("[A][B|A]", df, method="bayes", iss=1)
        levels, cpt = list(net.levels("B")), net.cpt("B")
    assert levels == ["b1", "b2", "b3"]
    assert np.allclose(cpt, ((n + 1 / 6) / (n.sum(1, keepdims=True) + 0.5)).T, rtol=0, atol=1e-15)

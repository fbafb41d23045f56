"""Regression tests of the third hostile-input round: the features added since the second
round (row weights, EM, adapt, evaluate_domains, HGS, the command line) under the inputs
of the issue's table.  Each test's docstring names the row it covers; the property tests
of the same features are in ``test_properties.py``."""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import (
    ConvergenceWarning,
    DataError,
    HyperparameterError,
    NonCategoricalError,
    PyBNCSmoothError,
    UnknownNodeError,
    UnseenDomainWarning,
)
from pybncsmooth.frontends.cli import main

ROOT = Path(__file__).resolve().parents[1]
ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"


@pytest.fixture(scope="module")
def abc() -> pd.DataFrame:
    """40 rows of three small categorical variables (A, B | A, C | A, B)."""
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "A": pd.Categorical(rng.choice(list("xy"), 40)),
        "B": pd.Categorical(rng.choice(list("uvw"), 40)),
        "C": pd.Categorical(rng.choice(list("pq"), 40)),
    })


@pytest.fixture(scope="module")
def votes() -> pd.DataFrame:
    return bs.load_dataset("housevotes84")


@pytest.fixture(scope="module")
def asia600() -> pd.DataFrame:
    """600 rows of asia in three sites of 200 rows."""
    d = bs.load_dataset("asia").iloc[:600].reset_index(drop=True)
    return d.assign(site=np.repeat(["a", "b", "c"], 200))


# ----------------------------------------------------------------------------- row 1


def _hls_intercept_probability(n_total: float, n_second: float, tau: float = 1.0) -> float:
    """HLS of a binary node without parents: ``a`` minimises ``N log(1 + e^a) - n_2 a +
    tau a^2 / 2`` (Cooper et al. 2025, Sec. 3.2, one coefficient), so ``N sigma(a) - n_2 + tau a =
    0``; solved by bisection (the left side increases in ``a``)."""
    lo, hi = -60.0, 60.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if n_total / (1.0 + np.exp(-mid)) - n_second + tau * mid > 0:
            hi = mid
        else:
            lo = mid
    return float(1.0 / (1.0 + np.exp(-0.5 * (lo + hi))))


@pytest.mark.parametrize("method", ["hmd", "hgs", "hls", "bayes", "mle", "mbranch"])
def test_row1_extreme_weights_are_refused_naming_the_weights(abc, method):
    """Row 1: weights of 1e200 on one row, or 1e155 on every row, overflowed hmd / hgs
    (ZeroDivisionError, LinAlgError) and made hls return 0.5 everywhere; a total above
    1e12 is refused with the package's error naming the weights and saying why."""
    for w in (np.r_[1e200, np.ones(39)], np.full(40, 1e155), np.r_[2e12, np.ones(39)]):
        with pytest.raises(DataError, match=r"weights .*sum to .* above 1e\+12.*rescale"):
            bs.fit("[A][B|A][C|A:B]", abc, method, weights=w)


def test_row1_total_weight_over_chunks_is_refused_too(abc, tmp_path):
    """Row 1: a weights column read in chunks, each chunk below the bound, the total above."""
    path = tmp_path / "w.csv"
    abc.assign(w=6e11).iloc[:4].to_csv(path, index=False)
    with pytest.raises(DataError, match=r"weights .*'w'.* above 1e\+12"):
        bs.fit("[A][B|A][C|A:B]", str(path), "bayes", weights="w", chunksize=1)
    # the same rows with a total below the bound fit
    abc.assign(w=2e11).iloc[:4].to_csv(path, index=False)
    bs.fit("[A][B|A][C|A:B]", str(path), "bayes", weights="w", chunksize=1)


@pytest.mark.parametrize("big", [1e6, 1e9, 1e11])
def test_row1_large_weights_below_the_bound_give_the_converged_fit(abc, big):
    """Row 1: below the bound the fits are finite and converged: hls stopped short of its
    optimum (a ConvergenceWarning from 1e8 on, the objective's rounding mistaken for no
    progress); its root node equals the one-dimensional optimum solved by hand."""
    w = np.r_[big, np.ones(39)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        for method in ("hmd", "hgs", "hls", "mbranch"):
            net = bs.fit("[A][B|A][C|A:B]", abc, method, weights=w)
            for n in net.nodes:
                cpt = net.cpt(n)
                assert np.isfinite(cpt).all()
                np.testing.assert_allclose(cpt.sum(axis=0), 1.0, rtol=1e-12)
            if method == "hls":
                assert all(net.cpd(n).estimate.info["converged"] for n in net.nodes)
                second = float(w[abc["A"].cat.codes.to_numpy() == 1].sum())
                p = _hls_intercept_probability(float(w.sum()), second)
                assert net.cpt("A")[1] == pytest.approx(p, rel=1e-9)


# ----------------------------------------------------------------------------- row 2


def test_row2_hgs_with_prior_zero_on_two_and_three_rows(abc):
    """Row 2: ``method="hgs", prior=0`` on two or three rows raised ZeroDivisionError: a
    row whose class is alone in its leaf and in every ancestor has leave-one-out
    probability 0 whatever the weights, so it carries no information about them."""
    two = pd.DataFrame({"A": pd.Categorical(["x", "y"]), "B": pd.Categorical(["u", "v"])})
    net = bs.fit("[A][B|A]", two, "hgs", prior=0)
    # every leave-one-out term is uninformative: the weight stays at its start, alpha = 1,
    # and eq. (45) gives (n_l + alpha theta_root) / (n_l + alpha) = ((1, 0) + (.5, .5)) / 2
    assert net.cpd("B").estimate.info["alpha_levels"].tolist() == [1.0]
    np.testing.assert_allclose(net.cpt("B"), [[0.75, 0.25], [0.25, 0.75]], rtol=1e-15)
    for n in (2, 3):
        net = bs.fit("[A][B|A][C|A:B]", abc.iloc[:n], "hgs", prior=0)
        for v in net.nodes:
            assert np.isfinite(net.cpt(v)).all()
            np.testing.assert_allclose(net.cpt(v).sum(axis=0), 1.0, rtol=1e-12)


# ----------------------------------------------------------------------------- row 3


def test_row3_all_nan_float_column_is_missing_in_queries():
    """Row 3: an all-NaN float64 column (the natural "unknown") raised NonCategoricalError
    in logpdf, predict_proba and adapt; it is summed out like an all-missing categorical.
    A float column holding numbers is still refused."""
    asia = bs.load_dataset("asia")
    net = bs.fit(ASIA, asia, "bayes")
    floats = asia.iloc[:5].assign(S=np.nan)
    assert floats["S"].dtype == np.float64
    cats = asia.iloc[:5].assign(S=pd.Categorical([None] * 5, categories=asia["S"].cat.categories))
    np.testing.assert_array_equal(net.logpdf(floats), net.logpdf(cats))
    pd.testing.assert_frame_equal(net.predict_proba(floats, "L"), net.predict_proba(cats, "L"))
    # adapt on a network that counts observed cells (na="available")
    pop = bs.fit(ASIA, asia.iloc[:2000], "bayes", na="available")
    assert pop.adapt(floats, "new").max_abs_diff(pop.adapt(cats, "new")) == 0.0
    clf = bs.BNClassifier(structure="nb", na="pairwise").fit(asia, "L")
    np.testing.assert_array_equal(clf.predict_proba(floats.drop(columns="L")), clf.predict_proba(cats.drop(columns="L")))
    with pytest.raises(NonCategoricalError, match="'S'"):
        net.logpdf(asia.iloc[:3].assign(S=[1.5, np.nan, 2.0]))


# ----------------------------------------------------------------------------- row 4


def test_row4_adapt_matches_domain_labels_as_predict_proba_does():
    """Row 4: ``net.adapt(rows, 1978)`` on domains '1978', ... added a second domain 1978
    beside '1978'; the label now matches as predict_proba matches it (an integer against
    text levels by its text), and a label of another type than number levels is refused."""
    asia = bs.load_dataset("asia").iloc[:1000]
    d = asia.assign(yr=np.where(np.arange(len(asia)) % 2, "1978", "1979"))
    net = bs.fit(ASIA, d, "mestimate", domain="yr")
    rows = asia.iloc[:50]
    a = net.adapt(rows, 1978)
    assert a.domains == ["1978", "1979"]
    assert a.max_abs_diff(net.adapt(rows, "1978")) == 0.0
    # the rows may carry the domain column as text while the label is a number
    assert a.max_abs_diff(net.adapt(rows.assign(yr="1978"), 1978)) == 0.0
    b = net.adapt(rows, 1980)
    assert b.domains == ["1978", "1979", "1980"]
    q = asia.iloc[100:103]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnseenDomainWarning)
        got = b.predict_proba(q.assign(yr=1980), "L")
    pd.testing.assert_frame_equal(got, b.for_domain("1980").predict_proba(q, "L"))
    # integer domains: a text label names one by its text (the one rule of round 4, case 4: the
    # command line gives text); a text that is no number is not added beside them
    ints = bs.fit(ASIA, d.assign(yr=d["yr"].astype(int)), "mestimate", domain="yr")
    with pytest.raises(DataError, match=r"'zz'.*str.*'yr'.*int"):
        ints.adapt(rows, "zz")
    assert ints.adapt(rows, 1978).domains == [1978, 1979]
    assert ints.adapt(rows, "1978").max_abs_diff(ints.adapt(rows, 1978)) == 0.0


# ----------------------------------------------------------------------------- row 5


def _posterior_by_enumeration(net: bs.FittedNetwork, row: pd.Series, target: str) -> np.ndarray:
    """P(target | the row's observed cells) by summing the joint over every completion of
    its missing cells (each complete row's probability from ``logpdf``)."""
    missing = [v for v in net.nodes if v != target and pd.isna(row[v])]
    out = []
    for t in net.levels(target):
        total = 0.0
        for combo in itertools.product(*[net.levels(v) for v in missing]):
            full = row.copy()
            full[target] = t
            for v, x in zip(missing, combo):
                full[v] = x
            frame = pd.DataFrame({v: pd.Categorical([full[v]], categories=net.levels(v)) for v in net.nodes})
            total += float(np.exp(net.logpdf(frame)[0]))
        out.append(total)
    return np.array(out) / sum(out)


def test_row5_na_level_classifier_sums_out_missing_values_it_never_saw(votes):
    """Row 5: a classifier trained without missing values under ``na="level"`` refused a
    row with NaN (UnseenLevelError about '<NA>'); the feature is unobserved and summed
    out.  Where the training data had missing values, they stay a level of their own."""
    complete = votes.dropna().reset_index(drop=True)
    clf = bs.BNClassifier(structure="tan", na="level").fit(complete, "Class")
    holes = votes[votes.isna().any(axis=1)].iloc[:6]
    got = clf.predict_proba(holes.drop(columns="Class"))
    for i in range(len(holes)):
        want = _posterior_by_enumeration(clf.network_, holes.iloc[i], "Class")
        np.testing.assert_allclose(got[i], want, rtol=1e-10)
    # missing values in V1 only in training: V1's NaN is its '<NA>' level, V2's is summed out
    part = complete.copy()
    part["V1"] = part["V1"].astype(object)
    part.loc[:9, "V1"] = None
    clf2 = bs.BNClassifier(structure="tan", na="level").fit(part, "Class")
    net = clf2.network_
    assert net.levels("V1")[-1] == "<NA>" and "<NA>" not in net.levels("V2")
    q = complete.iloc[20:23].copy()
    q["V1"], q["V2"] = None, None
    got = clf2.predict_proba(q.drop(columns="Class"))
    for i in range(len(q)):
        row = q.iloc[i].copy()
        row["V1"] = "<NA>"
        np.testing.assert_allclose(got[i], _posterior_by_enumeration(net, row, "Class"), rtol=1e-10)


# ----------------------------------------------------------------------------- rows 6 - 9

_SETTINGS = {"pooled": {"mode": "pooled", "method": "mestimate"}, "hier": {"mode": "domain", "method": "mestimate"}}


def test_row6_evaluate_domains_with_an_empty_k_grid(asia600):
    """Row 6: ``k_grid=()`` failed with 'max() arg is an empty sequence'."""
    with pytest.raises(HyperparameterError, match="k_grid is empty"):
        bs.evaluate_domains(ASIA, asia600, "site", _SETTINGS, k_grid=())
    with pytest.raises(HyperparameterError, match="k_grid"):
        bs.evaluate_domains(ASIA, asia600, "site", _SETTINGS, k_grid=5)
    # without the leave-one-domain-out scheme no grid is needed
    ev = bs.evaluate_domains(ASIA, asia600, "site", _SETTINGS, k_grid=(), lodo=False)
    assert set(ev.results["scheme"]) == {"within"}


def test_row7_k_larger_than_every_domain(asia600):
    """Row 7: a k larger than every domain gave an empty leave-one-domain-out table and
    then messages about lodo=False and a missing setting."""
    with pytest.raises(DataError, match=r"no domain has more than 250 rows .*largest, 'a', has 200"):
        bs.evaluate_domains(ASIA, asia600, "site", _SETTINGS, k_grid=(0, 250))


def test_row8_evaluate_domains_on_a_single_domain(asia600):
    """Row 8: one domain gave 'the data has no rows (every chunk was empty)'."""
    with pytest.raises(DataError, match="at least two domains.*'site' has one: 'a'"):
        bs.evaluate_domains(ASIA, asia600.assign(site="a"), "site", _SETTINGS)


def test_row9_win_draw_loss_on_a_metric_the_results_lack(asia600):
    """Row 9: ``metric="rmse"`` with no target was a bare KeyError."""
    ev = bs.evaluate_domains(ASIA, asia600, "site", _SETTINGS, lodo=False)
    with pytest.raises(HyperparameterError, match=r"metric 'rmse'.*available: loglik"):
        ev.win_draw_loss("hier", "pooled", metric="rmse")
    assert ev.win_draw_loss("hier", "pooled")["wins"] + ev.win_draw_loss("hier", "pooled")["losses"] <= 3


# ----------------------------------------------------------------------------- rows 10 - 11


@pytest.fixture()
def holes_csv(tmp_path, asia600):
    d = asia600.iloc[:300].copy()
    for c, rows in (("S", [1, 5]), ("X", [2, 9, 40])):
        d[c] = d[c].astype(object)
        d.loc[rows, c] = None
    path = tmp_path / "holes.csv"
    d.to_csv(path, index=False)
    return path


def test_row10_cli_routes_fit_options_given_with_p(holes_csv, tmp_path, capsys):
    """Row 10: ``fit ... -p na=em`` and ``-p domain=x`` failed with 'TypeError: got
    multiple values' and a traceback; -p now routes them, and refuses with a usage line
    and exit status 2 what it cannot take."""
    out = tmp_path / "em.pbn"
    assert main(["fit", str(holes_csv), "-s", ASIA, "-p", "na=em", "-p", "em_tol=1e-9", "-o", str(out)]) == 0
    ref = bs.fit(ASIA, str(holes_csv), "bayes", na="em", em_tol=1e-9)
    assert bs.read_network(out).max_abs_diff(ref) < 1e-12
    out2 = tmp_path / "dom.pbn"
    assert main(["fit", str(holes_csv), "-s", ASIA, "-m", "mestimate", "-p", "domain=site", "-p", "na=available",
                 "-p", "seed=3", "-o", str(out2)]) == 0
    ref2 = bs.fit(ASIA, str(holes_csv), "mestimate", domain="site", na="available")
    assert bs.read_network(out2).max_abs_diff(ref2) == 0.0
    capsys.readouterr()
    for argv in (
        ["-p", "na=em", "--na", "level"],  # given twice
        ["-p", "seed=1", "--seed", "2"],
        ["-p", "structure=[A]"],  # the structure is -s
        ["-p", "na"],  # not NAME=VALUE
    ):
        with pytest.raises(SystemExit) as exc:
            main(["fit", str(holes_csv), "-s", ASIA, *argv])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("usage: pybncsmooth fit") and "error:" in err


def test_row10_evaluate_model_options_that_clash_are_refused(holes_csv, capsys):
    """Row 10 (the evaluate command's model specs): ``nb:bayes:k=2`` gave 'got multiple
    values for keyword argument'."""
    assert main(["evaluate", str(holes_csv), "-c", "L", "-m", "nb:bayes:k=2", "-q"]) == 2
    assert "'k'" in capsys.readouterr().err


def test_row11_predict_help_says_what_happens_to_missing_values(capsys):
    """Row 11: the help of ``predict --on-unseen`` said missing values were an error;
    they are summed out (or are a level where the fit made them one)."""
    with pytest.raises(SystemExit):
        main(["predict", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "unseen or missing values" not in text
    assert "missing values are summed out" in text


# ----------------------------------------------------------------------------- row 12


def test_row12_readme_states_where_integer_weights_equal_repeated_rows():
    """Row 12: the README claimed integer weights equal repeated rows for every estimator
    (the claim now lives in the data guide, docs/guide/data.md, and the README says no more);
    with ``na="em"``, hdp and hls-bayes draw the missing cells (data augmentation), and a
    row drawn once with weight 3 is not three rows drawn apart.  The claim is now stated
    where it holds, and both halves are checked here."""
    for page in ("README.md", "docs/guide/data.md"):
        text = " ".join((ROOT / page).read_text().replace("`", "").split())
        assert "repeated rows for every estimator and every structure" not in text, page
    assert 'except with na="em" for hdp and hls-bayes' in text
    asia = bs.load_dataset("asia").iloc[:200].reset_index(drop=True)
    rng = np.random.default_rng(1)
    h = asia.copy()
    for c in ("S", "E"):
        h[c] = h[c].astype(object)
        h.loc[rng.random(len(h)) < 0.1, c] = None
    w = rng.integers(0, 4, len(h))
    rep = h.loc[h.index.repeat(w)].reset_index(drop=True)
    a = bs.fit(ASIA, h, "bayes", na="em", weights=w, em_tol=1e-12)
    b = bs.fit(ASIA, rep, "bayes", na="em", em_tol=1e-12)
    assert a.max_abs_diff(b) < 1e-14  # expected counts summed in another order
    kw = dict(na="em", iterations=30, em_draws=2, em_burn=0, random_state=0)
    assert bs.fit(ASIA, h, "hdp", weights=w, **kw).max_abs_diff(bs.fit(ASIA, rep, "hdp", **kw)) > 1e-3


# ----------------------------------------------------------------------------- row 13


def test_row13_weights_series_are_aligned_by_index(abc):
    """Row 13: a Series of weights indexed like the frame but in another order was used
    by position; it is aligned by index, and one whose labels differ is refused."""
    w = pd.Series(np.arange(1.0, 41.0), index=abc.index)
    shuffled = w.sample(frac=1.0, random_state=0)
    a = bs.fit("[A][B|A][C|A:B]", abc, "bayes", weights=shuffled)
    b = bs.fit("[A][B|A][C|A:B]", abc, "bayes", weights=w.to_numpy())
    assert a.max_abs_diff(b) == 0.0
    assert a.max_abs_diff(bs.fit("[A][B|A][C|A:B]", abc, "bayes", weights=shuffled.to_numpy())) > 1e-3
    other = w.rename(index={7: 700})
    with pytest.raises(DataError, match=r"row 7 .*no weight|label 7"):
        bs.fit("[A][B|A][C|A:B]", abc, "bayes", weights=other)
    # the classifier's sample_weight with X a DataFrame: aligned as well
    X, y = abc.drop(columns="C"), abc["C"]
    c1 = bs.BNClassifier(structure="nb").fit(X, y, sample_weight=shuffled)
    c2 = bs.BNClassifier(structure="nb").fit(X, y, sample_weight=w.to_numpy())
    np.testing.assert_array_equal(c1.predict_proba(X), c2.predict_proba(X))


# ----------------------------------------------------------------------------- row 14


def test_row14_em_settings_are_checked_whatever_na_says(abc):
    """Row 14: ``em_max_iter=-5, em_draws="x"`` with ``na="available"`` were accepted and
    ignored.  Each is checked against its declaration, and refused where it cannot apply:
    with a policy that runs no EM, and with selective kDB and ESKDB, which take no EM
    policy (the options' rule names the setting and the policy)."""
    for bad in ({"em_max_iter": -5}, {"em_draws": "x"}, {"em_tol": -1.0}, {"em_burn": -1}):
        name = next(iter(bad))
        for na in ("available", "em"):  # a bad value is refused whatever the policy
            with pytest.raises(HyperparameterError, match=name):
                bs.fit("[A][B|A][C|A:B]", abc, "bayes", na=na, **bad)
        with pytest.raises(HyperparameterError, match=name):
            bs.BNClassifier(structure="nb", na="level", **bad).fit(abc.drop(columns="C"), abc["C"])
    # a valid setting with a policy that does not use it: refused, saying which policies take it
    with pytest.raises(HyperparameterError, match="em_max_iter applies to na='em' or 'hard-em', not na='available'"):
        bs.fit("[A][B|A][C|A:B]", abc, "bayes", na="available", em_max_iter=5)
    with pytest.raises(HyperparameterError, match="em_draws applies to na='em', not na='hard-em'"):
        bs.fit("[A][B|A][C|A:B]", abc, "bayes", na="hard-em", em_draws=3)
    # selective kDB and ESKDB take no EM policy, so no EM setting applies
    for structure in ("skdb", "eskdb"):
        with pytest.raises(HyperparameterError, match=f"structure='{structure}' does not take na=\"em\""):
            bs.BNClassifier(structure=structure, na="em", em_max_iter=5).fit(abc.drop(columns="C"), abc["C"])
        with pytest.raises(HyperparameterError, match="em_max_iter applies to na='em'"):
            bs.BNClassifier(structure=structure, em_max_iter=5).fit(abc.drop(columns="C"), abc["C"])
    # where it applies it is used: one iteration is reported
    holes = abc.copy()
    holes["A"] = holes["A"].astype(object)
    holes.loc[:3, "A"] = None
    with pytest.warns(bs.errors.ConvergenceWarning, match="em_max_iter"):
        one = bs.fit("[A][B|A][C|A:B]", holes, "bayes", na="em", em_max_iter=1)
    assert one.info["em"]["iterations"] == 1


# ----------------------------------------------------------------------------- the lesser ones


def test_adapt_refuses_s_domain_for_an_unknown_node():
    """Lesser item: ``adapt(s_domain={"nope": 5})`` ignored the unknown node."""
    asia = bs.load_dataset("asia").iloc[:500]
    net = bs.fit(ASIA, asia, "mestimate")
    with pytest.raises(UnknownNodeError, match="'nope'.*s_domain"):
        net.adapt(asia.iloc[:20], "d1", s_domain={"nope": 5.0})
    with pytest.raises(UnknownNodeError, match="'nope'"):
        net.adapt(asia.iloc[:20], "d1", s_domain={**{n: 2.0 for n in net.nodes}, "nope": 5.0})


def test_plot_domains_names_an_unknown_node(asia600):
    """Lesser item: ``plot_domains("nope")`` raised a plain ValueError."""
    pytest.importorskip("matplotlib").use("Agg")
    net = bs.fit(ASIA, asia600, "mestimate", domain="site")
    with pytest.raises(UnknownNodeError, match="'nope'"):
        net.plot_domains("nope")
    with pytest.raises(PyBNCSmoothError, match="'nope'"):
        bs.model.plotting.plot_domains(net.domain_report(draws=0), "nope")


@pytest.mark.parametrize("method", ["mle", "mestimate", "hgs", "mbranch", "hls"])
def test_domain_report_says_which_estimators_give_no_intervals(asia600, method):
    """Lesser item: domain_report() gave NaN intervals for mle, hgs, mbranch and hls; the
    report of such a network has no interval columns and says why."""
    net = bs.fit(ASIA, asia600, method, domain="site")
    rep = net.domain_report()
    assert "js_lower" not in rep.columns and "js_upper" not in rep.columns
    assert not rep[["kl", "js"]].isna().any().any()
    assert method in rep.attrs["intervals"] and "no posterior standard deviations" in rep.attrs["intervals"]
    pytest.importorskip("matplotlib").use("Agg")
    assert len(net.plot_domains("L").get_yticklabels()) == 3
    # an estimator with standard deviations keeps its intervals
    rep2 = bs.fit(ASIA, asia600, "bayes", domain="site").domain_report()
    assert (rep2["js_lower"] <= rep2["js_upper"]).all() and "intervals" not in rep2.attrs


# ----------------------------------------------------------------------------- found by the property tests


@pytest.mark.parametrize("method", ["mle", "bayes"])
def test_adapt_from_rows_where_a_node_is_never_observed(method):
    """Found by test_properties.py: adapting from rows whose every value of a node is
    missing gave that node an empty leaf for the domain, which mle divided as 0 / 0 (NaN
    tables, silently outside the tests).  The domain has no rows of the node: it keeps the
    population's table, as for a configuration it never saw."""
    levels = list("abc")
    d = pd.DataFrame({v: pd.Categorical(["a"] * 11 + ["b"], categories=levels) for v in "ABC"})
    d["dom"] = [1978] * 11 + [1979]
    rows = pd.DataFrame({"A": [np.nan, np.nan], "B": pd.Categorical([None, "a"], categories=levels),
                         "C": pd.Categorical(["a", "b"], categories=levels)})
    net = bs.fit("[A][B|A][C|A:B]", d, method, domain="dom", na="available")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a 0 / 0 is a RuntimeWarning
        out = net.adapt(rows, 1981)
    assert out.info["adapted"] == {1981: 2} and out.domains == [1978, 1979, 1981]
    with pytest.warns(UnseenDomainWarning):
        pop = net.for_domain(1990)
    # A is missing in both rows, and so is a parent of B and C in each: no node has a count
    for n in out.nodes:
        np.testing.assert_array_equal(out.for_domain(1981).cpt(n), pop.cpt(n))


def test_na_drop_of_every_row_says_so():
    """Found by test_properties.py: na="drop" on data whose every row is incomplete said
    'the data has no rows (every chunk was empty)'."""
    d = pd.DataFrame({"A": ["x", None, "y"], "B": [None, "u", None]})
    with pytest.raises(bs.errors.EmptyDataError, match=r'no complete rows are left after na="drop" \(every one of the 3'):
        bs.fit("[A][B|A]", d, na="drop")

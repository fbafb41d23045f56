"""Issue 56 (fifth hardening round), the cases of update, expert priors and draws.

Case 2: an integer network updated from a CSV (text) kept the text beside the integers
(six levels); case 3: integer domains from a CSV were all sent to adapt; case 5: an
expert's P(x | pa) of a parent configuration of probability 0 became uniform; case 6:
cpt_frame took draws of 0-2 for a labelled 90% interval; cases 11-13: update after
adapt (rows, Categorical domains) and a new domain's unseen level; case 17: prior= a
multi-domain network; case 20: max_levels refused a domain column of many users;
case 21: samplers' update(decay=) blamed row weights; case 29: the rows an update with
decay reports.  Closed forms are checked against the refit on all the rows (1e-9)."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import DataError, HyperparameterError, TooManyLevelsError, UnseenLevelError
from pybncsmooth.frontends.cli import main

ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"
ABC = "[A][B|A][C|A:B]"


def _as_csv_text(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` as a CSV reads it back: every cell text."""
    return pd.read_csv(io.StringIO(df.to_csv(index=False)), dtype=str)


def _integers(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (a + rng.integers(0, 2, n)) % 3
    c = (a * b + rng.integers(0, 2, n)) % 2
    return pd.DataFrame({"A": a, "B": b, "C": c})


# ----------------------------------------------------------------------------- case 2


@pytest.mark.parametrize("method", ["bayes", "mle", "hmd"])
def test_case2_an_integer_network_updated_from_text_keeps_its_levels(method):
    data = _integers(900, 0)
    net = bs.fit(ABC, data.iloc[:600], method)
    up = net.update(_as_csv_text(data.iloc[600:]))
    assert up.levels("A") == [0, 1, 2] and up.levels("B") == [0, 1, 2] and up.levels("C") == [0, 1]
    assert up.max_abs_diff(bs.fit(ABC, data, method)) < 1e-9
    assert up.info["n_rows"] == 900


def test_case2_a_new_level_in_text_joins_the_integers_and_other_text_is_refused():
    data = _integers(600, 1)
    net = bs.fit(ABC, data.iloc[:400], "bayes")
    text = _as_csv_text(data.iloc[400:])
    text.loc[text.index[:7], "A"] = "3"
    up = net.update(text)
    assert up.levels("A") == [0, 1, 2, 3]
    whole = pd.concat([data.iloc[:400], data.iloc[400:].assign(A=text["A"].astype(int).to_numpy())])
    assert up.max_abs_diff(bs.fit(ABC, whole, "bayes")) < 1e-9
    text.loc[text.index[:2], "A"] = "x"
    with pytest.raises(DataError, match=r"node 'A' has the value 'x'.*int"):
        net.update(text)


def test_case2_the_command_line_updates_an_integer_network_from_a_csv(tmp_path):
    data = _integers(900, 2)
    net = bs.fit(ABC, data.iloc[:600], "bayes")
    net.write(tmp_path / "n.pbn")
    data.iloc[600:].to_csv(tmp_path / "new.csv", index=False)
    assert main(["update", str(tmp_path / "n.pbn"), str(tmp_path / "new.csv"), "-o", str(tmp_path / "up.pbn")]) == 0
    up = bs.read_network(tmp_path / "up.pbn")
    assert up.levels("A") == [0, 1, 2]
    assert up.max_abs_diff(bs.fit(ABC, data, "bayes")) < 1e-9
    # the file's path given to update directly: the same
    assert net.update(str(tmp_path / "new.csv")).max_abs_diff(up) == 0.0


# ----------------------------------------------------------------------------- case 3


def _years(asia: pd.DataFrame, seed: int = 3) -> pd.DataFrame:
    return asia.assign(year=np.random.default_rng(seed).choice([2016, 2017, 2018], len(asia)))


@pytest.mark.parametrize("method", ["bayes", "hmd"])
def test_case3_integer_domains_from_a_csv_update_their_domains_and_the_population(asia, method):
    data = _years(asia)
    net = bs.fit(ASIA, data.iloc[:3500], method, domain="year")
    up = net.update(_as_csv_text(data.iloc[3500:]))
    ref = bs.fit(ASIA, data, method, domain="year")
    assert up.domains == [2016, 2017, 2018] and "adapted" not in up.info
    assert up.info["domain_rows"] == ref.info["domain_rows"] and up.info["n_rows"] == 5000
    assert up.max_abs_diff(ref) < 1e-9


def test_case3_a_new_integer_domain_in_text_is_adapted_as_an_integer(asia):
    data = _years(asia)
    net = bs.fit(ASIA, data.iloc[:3500], "bayes", domain="year")
    new = data.iloc[3500:].assign(year=np.where(np.arange(1500) < 100, 2019, data.year.iloc[3500:]))
    up = net.update(_as_csv_text(new))
    assert up.domains == [2016, 2017, 2018, 2019] and up.info["adapted"] == {2019: 100}
    known, fresh = new[new.year != 2019], new[new.year == 2019]
    ref = bs.fit(ASIA, pd.concat([data.iloc[:3500], known]), "bayes", domain="year").adapt(
        fresh.drop(columns="year"), 2019)
    assert up.max_abs_diff(ref) < 1e-12
    # adapt itself: the text of an integer joins integer domains as that integer
    assert net.adapt(fresh.drop(columns="year"), "2019").domains == [2016, 2017, 2018, 2019]


def test_case3_integer_rows_name_text_domains(asia):
    """The rule the other way: domains read as text, new rows with the years as numbers."""
    data = _years(asia)
    text = data.assign(year=data.year.astype(str))
    net = bs.fit(ASIA, text.iloc[:3500], "bayes", domain="year")
    up = net.update(data.iloc[3500:])
    ref = bs.fit(ASIA, text, "bayes", domain="year")
    assert up.domains == ["2016", "2017", "2018"] and "adapted" not in up.info
    assert up.max_abs_diff(ref) < 1e-9 and up.info["domain_rows"] == ref.info["domain_rows"]


# ----------------------------------------------------------------------------- case 5


@pytest.mark.parametrize("method", ["bayes", "mestimate"])
def test_case5_an_impossible_configuration_keeps_the_experts_conditional(method, tmp_path):
    """The expert says A = 'y' never happens and P(B = 'u' | A = 'y') = 0.76; with 10
    pseudo-counts per configuration and 3 of 4 rows 'u' there, the estimate is
    (3 + 10 * 0.76) / (4 + 10), not (3 + 5) / 14 from a uniform vector."""
    df = pd.DataFrame({"A": ["x"] * 8 + ["y"] * 4, "B": ["u", "v"] * 4 + ["u", "u", "u", "v"]})
    expert = {"A": np.array([1.0, 0.0]), "B": np.array([[0.5, 0.76], [0.5, 0.24]])}
    net = bs.fit("[A][B|A]", df, method, prior=expert, prior_weight=10, prior_per="configuration")
    assert net.cpt("B")[0, 1] == pytest.approx((3 + 7.6) / 14, abs=1e-12)
    assert net.cpt("B")[0, 0] == pytest.approx((4 + 5) / 18, abs=1e-12)  # a possible configuration: as before
    # the expert's conditional survives a save and an update
    net.write(tmp_path / "p.pbn")
    back = bs.read_network(tmp_path / "p.pbn")
    assert back.update(df).cpt("B")[0, 1] == pytest.approx((6 + 7.6) / 18, abs=1e-12)


# ----------------------------------------------------------------------------- case 6


def test_case6_min_draws_is_two_over_the_tail_mass():
    from pybncsmooth.validation import check_draws, min_draws

    assert [min_draws(v) for v in (0.5, 0.8, 0.9, 0.95, 0.99)] == [4, 10, 20, 40, 200]
    assert check_draws(20, 0.9) == 20 and check_draws(0, 0.9, zero_ok=True) == 0
    with pytest.raises(HyperparameterError, match=r"draws=19: a 90% interval needs draws >= 20"):
        check_draws(19, 0.9)
    with pytest.raises(HyperparameterError, match=r"draws=2\.0"):
        check_draws(2.0, 0.9)


@pytest.mark.parametrize("method,kw", [
    ("hmd", {}), ("mestimate", {}), ("hdp", {"iterations": 40, "random_state": 0}),
    ("hls-bayes", {"iterations": 40, "random_state": 0}),
])
def test_case6_every_entry_point_refuses_too_few_draws(asia, method, kw):
    net = bs.fit(ASIA, asia.iloc[:400], method, **kw)
    for draws in (0, 1, 2, 19):
        with pytest.raises(HyperparameterError, match=rf"draws={draws}: a 90% interval needs draws >= 20"):
            net.cpt_frame("L", interval=0.9, draws=draws)
        with pytest.raises(HyperparameterError, match=rf"draws={draws}: a 90% interval needs draws >= 20"):
            net.query("L", interval=0.9, draws=draws)
        with pytest.raises(HyperparameterError, match=rf"draws={draws}: a 90% interval needs draws >= 20"):
            net.summary(draws=draws)
    with pytest.raises(HyperparameterError, match=r"draws=30: a 95% interval needs draws >= 40"):
        net.cpt_frame("L", interval=0.95, draws=30)
    f = net.cpt_frame("L", interval=0.9, draws=20, random_state=1)
    assert (f["upper"] - f["lower"]).min() > 0 and f.attrs["level"] == 0.9


def test_case6_domain_report_takes_zero_or_enough_draws(asia):
    net = bs.fit(ASIA, asia.iloc[:600].assign(site=np.repeat(["a", "b", "c"], 200)), "bayes", domain="site")
    with pytest.raises(HyperparameterError, match=r"draws=5: a 90% interval needs 0 \(no interval\) or draws >= 20"):
        net.domain_report(draws=5)
    assert net.domain_report(draws=0)["js_lower"].isna().all()
    rep = net.domain_report(draws=20)
    assert (rep["js_lower"] <= rep["js_upper"]).all()


# ----------------------------------------------------------------------------- cases 11 and 12


@pytest.mark.parametrize("method", ["bayes", "hmd"])
def test_case11_an_update_after_adapt_counts_the_adapted_rows(asia, method):
    data = asia.assign(site=np.random.default_rng(3).choice(["a", "b", "c"], len(asia)))
    net = bs.fit(ASIA, data.iloc[:3000], method, domain="site")
    adapted = net.adapt(data.iloc[3000:3200].drop(columns="site"), "d")
    new = data.iloc[3200:4000].assign(site=np.where(np.arange(800) < 100, "d", data.site.iloc[3200:4000]))
    up = adapted.update(new)
    ref = bs.fit(ASIA, pd.concat([data.iloc[:3000], data.iloc[3000:3200].assign(site="d"), new]), method,
                 domain="site")
    assert up.max_abs_diff(ref) < 1e-9
    assert up.info["n_rows"] == ref.info["n_rows"] == 4000
    assert up.info["domain_rows"] == ref.info["domain_rows"] and up.info["domain_rows"]["d"] == 300
    assert "adapted" not in up.info  # the update estimated domain 'd' with the others
    assert re.search(r"Rows used:\s+4000\b", str(up.summary(draws=20)))


def test_case12_updates_after_adapt_with_a_categorical_domain_column(asia):
    data = asia.assign(site=np.random.default_rng(4).choice(["a", "b", "c"], len(asia)))
    old = data[data.site != "a"].iloc[:2500]
    cat = old.assign(site=pd.Categorical(old.site, categories=["b", "c"]))
    net = bs.fit(ASIA, cat, "bayes", domain="site")
    adapted = net.adapt(data[data.site == "a"].iloc[:100].drop(columns="site"), "a")
    assert adapted.domains == ["b", "c", "a"]
    rest = data.iloc[3500:]
    parts = [rest.iloc[:700], rest.iloc[700:]]
    up = adapted
    for p in parts:  # the user's Categorical now lists every site, in its own order
        up = up.update(p.assign(site=pd.Categorical(p.site, categories=["a", "b", "c"])))
    assert up.domains == ["b", "c", "a"]
    whole = pd.concat([cat.assign(site=cat.site.astype(str)), data[data.site == "a"].iloc[:100], rest])
    ref = bs.fit(ASIA, whole, "bayes", domain="site")
    assert up.max_abs_diff(ref) < 1e-9 and up.info["domain_rows"] == ref.info["domain_rows"]


# ----------------------------------------------------------------------------- case 13


def test_case13_a_new_domains_unseen_level_gets_advice_that_works(asia):
    data = asia.assign(site=np.random.default_rng(5).choice(["a", "b"], len(asia)))
    net = bs.fit(ASIA, data.iloc[:3000], "bayes", domain="site")
    new = pd.concat([data.iloc[3000:3100].assign(site="z"), data.iloc[3100:3400]])
    new = new.assign(A=np.where(np.arange(400) < 3, "maybe", new.A))
    with pytest.raises(UnseenLevelError) as err:
        net.update(new)
    text = str(err.value)
    assert "net.adapt(rows, 'z', on_unseen='backoff')" in text and "A='maybe'" in text
    assert 'pass on_unseen="backoff"' not in text
    with pytest.raises(HyperparameterError):  # what the old message advised
        net.update(new, on_unseen="backoff")
    z = new[new.site == "z"]
    done = net.update(new[new.site != "z"]).adapt(z.drop(columns="site"), "z", on_unseen="backoff")
    assert done.domains == ["a", "b", "z"] and done.info["adapted"] == {"z": 100}


# ----------------------------------------------------------------------------- case 17


def test_case17_a_multi_domain_prior_is_refused_naming_the_choice(asia):
    data = asia.assign(site=np.random.default_rng(6).choice(["x", "y"], len(asia)))
    md = bs.fit(ASIA, data.iloc[:2000], "bayes", domain="site")
    with pytest.raises(HyperparameterError, match=r"multi-domain network.*for_domain\(None\).*for_domain\('x'\)"):
        bs.fit(ASIA, asia.iloc[2000:2500], "bayes", prior=md, prior_weight=100)
    pop = md.for_domain(None)
    got = bs.fit(ASIA, asia.iloc[2000:2500], "bayes", prior=pop, prior_weight=100)
    as_dict = bs.fit(ASIA, asia.iloc[2000:2500], "bayes", prior={n: pop.cpt(n) for n in pop.nodes},
                     prior_weight=100)
    assert got.max_abs_diff(as_dict) < 1e-12


# ----------------------------------------------------------------------------- case 20


def test_case20_a_domain_column_of_many_users_is_not_limited_by_max_levels(tmp_path):
    rng = np.random.default_rng(0)
    n = 6000
    df = pd.DataFrame({"A": rng.choice(["x", "y"], n), "B": rng.choice(["x", "y"], n),
                       "user": [f"u{i:04d}" for i in rng.integers(0, 1500, n)]})
    users = df.user.nunique()
    assert users > 1000
    net = bs.fit("[A][B|A]", df, "bayes", domain="user")
    assert len(net.domains) == users and sum(net.info["domain_rows"].values()) == n
    df.to_csv(tmp_path / "users.csv", index=False)
    chunked = bs.fit("[A][B|A]", str(tmp_path / "users.csv"), "bayes", domain="user", chunksize=1000)
    assert chunked.max_abs_diff(net) < 1e-12
    up = bs.fit("[A][B|A]", df.iloc[:3000], "bayes", domain="user").update(df.iloc[3000:])
    assert len(up.domains) == users
    with pytest.raises(TooManyLevelsError, match="'A'"):  # a node still is
        bs.fit("[A][B|A]", df.assign(A=df.user), "bayes")


# ----------------------------------------------------------------------------- case 21


@pytest.mark.parametrize("method", ["hdp", "hls-bayes"])
def test_case21_samplers_refuse_decay_saying_why(asia, method):
    net = bs.fit(ASIA, asia.iloc[:400], method, iterations=20, random_state=0)
    with pytest.raises(HyperparameterError, match=rf"{method} needs whole counts.*decay=0\.5") as err:
        net.update(asia.iloc[400:600], decay=0.5)
    assert "weights" not in str(err.value)
    assert net.update(asia.iloc[400:600], decay=1, random_state=0).info["n_rows"] == 600


# ----------------------------------------------------------------------------- case 29


def test_case29_the_rows_of_a_decayed_update_agree_with_the_nodes(asia, tmp_path, capsys):
    net = bs.fit(ASIA, asia.iloc[:2500], "bayes")
    up = net.update(asia.iloc[2500:3000], decay=0.9)
    assert up.info["n_effective"] == pytest.approx(2500 * 0.9 + 500, abs=1e-9)
    assert np.allclose(up.node_summary()["n"].astype(float), up.info["n_effective"], rtol=0, atol=1e-9)
    assert up.info["n_rows"] == 3000  # the rows read, beside it
    assert "n=2750 (rows weighed decay**age; 3000 read)" in repr(up)
    assert re.search(r"Rows used:\s+2750 \(rows weighed decay\*\*age; 3000 read\)", str(up.summary(draws=20)))
    again = up.update(asia.iloc[3000:3100])  # without decay: the effective count goes on
    assert again.info["n_effective"] == pytest.approx(2850.0, abs=1e-9)
    assert "n_effective" not in net.update(asia.iloc[2500:3000]).info
    # the command line: update --decay, then info
    asia.iloc[:2500].to_csv(tmp_path / "a.csv", index=False)
    asia.iloc[2500:3000].to_csv(tmp_path / "b.csv", index=False)
    assert main(["fit", str(tmp_path / "a.csv"), "-s", ASIA, "-o", str(tmp_path / "a.pbn")]) == 0
    assert main(["update", str(tmp_path / "a.pbn"), str(tmp_path / "b.csv"), "--decay", "0.9",
                 "-o", str(tmp_path / "ab.pbn")]) == 0
    capsys.readouterr()
    assert main(["info", str(tmp_path / "ab.pbn")]) == 0
    out = capsys.readouterr().out
    assert "n=2750 (rows weighed decay**age; 3000 read)" in out and "n=3000)" not in out

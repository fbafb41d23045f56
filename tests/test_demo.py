"""The demo (``pybncsmooth demo``): a progress bar while it fits (a line per split instead
when standard error is not a terminal), each mean with its standard error over the
splits, and a best estimator named only where a paired comparison on the same splits
says it leads."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import HyperparameterError
from pybncsmooth.frontends import demo
from pybncsmooth.frontends.demo import compare_estimators, leaders, paired_difference, run_demo, summarize


def _results(scores: dict[tuple[int, str], list[float]]) -> pd.DataFrame:
    """The shape compare_estimators returns, from per-split scores."""
    rows = [{"repeat": rep, "train_rows": n, "estimator": est, "loglik_per_row": v,
             "impossible_rows": 0.0, "fit_seconds": 0.0}
            for (n, est), values in scores.items() for rep, v in enumerate(values)]
    return pd.DataFrame(rows)


def test_demo_standard_errors_and_a_winner_only_where_the_paired_test_says_so():
    base = [-2.0, -2.1, -1.9, -2.0]
    res = _results({
        # 50 rows: B trails A by 1e-4 nats in every split, but by +-0.05 split to split: no winner
        (50, "A"): base, (50, "B"): [v - 1e-4 + e for v, e in zip(base, (0.05, -0.04, 0.03, -0.04))],
        (50, "mle"): [-np.inf] * 4,
        # 200 rows: B trails A by 0.5 nats: far beyond the standard errors
        (200, "A"): base, (200, "B"): [v - 0.5 for v in base], (200, "mle"): base[:3] + [-np.inf],
    })
    mean, se = summarize(res, ["mle", "A", "B"])
    assert mean.at["A", 50] == pytest.approx(-2.0, abs=1e-12)
    assert se.at["A", 50] == pytest.approx(np.std(base, ddof=1) / 2, rel=1e-12)  # sd / sqrt(4 splits)
    assert se.at["B", 200] == pytest.approx(np.std(base, ddof=1) / 2, rel=1e-12)
    assert mean.at["mle", 200] == -np.inf and np.isnan(se.at["mle", 200])  # -inf: no standard error
    lead = leaders(res, ["mle", "A", "B"])
    assert list(lead["leader"]) == ["A", "A"] and list(lead["runner_up"]) == ["B", "B"]  # mle (-inf) left out
    d = 1e-4 - np.array([0.05, -0.04, 0.03, -0.04])  # A - B per split
    assert lead.at[50, "gap"] == pytest.approx(d.mean(), abs=1e-12)
    assert lead.at[50, "se"] == pytest.approx(np.std(d, ddof=1) / 2, rel=1e-9)
    assert lead.at[50, "won"] == 2 and lead.at[50, "splits"] == 4
    assert lead.at[50, "winner"] == "" and lead.at[200, "winner"] == "A"
    assert lead.at[50, "tied"] == ["B"] and lead.at[200, "tied"] == []
    assert lead.at[200, "gap"] == pytest.approx(0.5) and lead.at[200, "se"] == pytest.approx(0, abs=1e-12)
    # one split: no standard error, no winner
    one = _results({(50, "A"): [-2.0], (50, "B"): [-3.0]})
    assert np.isnan(leaders(one, ["A", "B"]).at[50, "se"]) and leaders(one, ["A", "B"]).at[50, "winner"] == ""


def test_demo_pairs_the_splits_a_small_steady_lead_wins():
    """The test sets' shared variation (+-0.1 nats between splits) hides a steady lead of
    0.01 nats in each estimator's own standard error; paired on the splits it is clear."""
    base = np.array([-2.0, -2.1, -1.9, -2.0, -2.15, -1.95])
    noise = np.array([0.001, -0.001, 0.0005, -0.0005, 0.0, 0.0002])
    res = _results({(200, "hmd"): list(base), (200, "bayes"): list(base - 0.01 + noise)})
    mean, se = summarize(res, ["bayes", "hmd"])
    assert mean.at["hmd", 200] - mean.at["bayes", 200] < se.at["hmd", 200]  # within the unpaired errors
    d = 0.01 - noise
    pair = paired_difference(res, "hmd", "bayes", 200)
    assert pair == pytest.approx({"diff": d.mean(), "se": np.std(d, ddof=1) / np.sqrt(6), "won": 6, "splits": 6})
    lead = leaders(res, ["bayes", "hmd"])
    assert lead.at[200, "winner"] == "hmd" and lead.at[200, "won"] == 6
    # the t quantile at 5 degrees of freedom (2.571), not 2: a lead of 2.3 standard errors is no win
    d2 = np.array([0.03, -0.002, 0.02, 0.008, 0.0, 0.015])
    res2 = _results({(200, "hmd"): list(base), (200, "bayes"): list(base - d2)})
    t = d2.mean() / (np.std(d2, ddof=1) / np.sqrt(6))
    assert 2 < t < 2.571
    assert leaders(res2, ["bayes", "hmd"]).at[200, "winner"] == ""
    # against every other estimator: tied with one of two is no win
    three = _results({(200, "hmd"): list(base), (200, "bayes"): list(base - 0.01 + noise),
                      (200, "hdp"): list(base - d2 / 10)})
    lead = leaders(three, ["bayes", "hdp", "hmd"])
    assert lead.at[200, "runner_up"] == "hdp" and lead.at[200, "tied"] == ["hdp"] and lead.at[200, "winner"] == ""


def test_demo_prints_a_line_per_split_when_not_at_a_terminal(capsys, monkeypatch):
    """No progress bar where standard error is not a terminal (redirected output), so a line
    per split on standard output instead, its training sizes written as they finish; the
    paired comparison's line per size."""
    methods = [("mle", "mle", {}), ("bayes iss=1", "bayes", {"iss": 1}), ("mestimate m=1", "mestimate", {"m": 1})]
    original = compare_estimators
    monkeypatch.setattr(demo, "DEMO_METHODS", methods)
    monkeypatch.setattr(demo, "compare_estimators", lambda *a, **k: original(*a, **{**k, "methods": methods}))
    run_demo(repeats=2)
    captured = capsys.readouterr()
    assert captured.err == ""
    lines = captured.out.splitlines()
    for rep in (1, 2):
        assert sum(bool(re.fullmatch(rf"split {rep} of 2: fitted on 50 200 1000 4000 rows \(\d+\.\d s\)", l))
                   for l in lines) == 1, lines
    best = [l for l in lines if re.match(r" +\d+ rows: ", l)]
    pair = r" - .*: [+-]\d\.\d+(e-\d\d)? ± \d\.\d+(e-\d\d)?, \d/2 splits\)(; ahead of the others)?$"
    assert len(best) == 4 and all(re.search(pair, l) for l in best), best
    # the paired table: a row per estimator, mle's cells "inf" where it gave a test row probability zero
    start = lines.index(next(l for l in lines if l.startswith("Paired on the same splits")))
    table = lines[start + 3:start + 7]
    assert [l.split()[0] for l in table[1:]] == ["mle", "bayes", "mestimate"], table
    assert all(re.search(r"leader|[+-]\d\.\d+(e-\d\d)? ± \d\.\d+(e-\d\d)? \d/2|inf", l) for l in table[1:]), table
    run_demo(repeats=2, progress=False)  # -q: quiet
    assert "split 1 of 2" not in capsys.readouterr().out


def test_demo_progress_bar_only_when_asked_or_at_a_terminal(capsys):
    asia = bs.load_dataset("asia")
    dag = bs.datasets.structure("asia")
    methods = [("mle", "mle", {}), ("bayes", "bayes", {"iss": 1})]
    kw = dict(train_sizes=[50, 100], test_size=200, repeats=2, seed=1, methods=methods)
    res = compare_estimators(asia, dag, progress=True, **kw)
    err = capsys.readouterr().err
    # a bar of 2 splits x 2 sizes x 2 estimators (tqdm redraws at most every 0.1 s, so how
    # far the last drawn state got depends on the machine's speed: the total is what is fixed)
    assert "fits" in err and "/8 [" in err
    again = compare_estimators(asia, dag, progress=None, **kw)  # standard error is not a terminal here
    assert capsys.readouterr().err == ""
    pd.testing.assert_frame_equal(res.drop(columns="fit_seconds"), again.drop(columns="fit_seconds"))
    with pytest.raises(HyperparameterError, match="progress"):
        run_demo(repeats=1, progress="yes")

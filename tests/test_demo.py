"""The demo (``pybncsmooth demo``): a progress bar while it fits (quiet when standard error
is not a terminal), each mean with its standard error over the splits, and a best
estimator named only where its lead exceeds the standard errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import HyperparameterError
from pybncsmooth.frontends.demo import compare_estimators, leaders, run_demo, summarize


def _results(scores: dict[tuple[int, str], list[float]]) -> pd.DataFrame:
    """The shape compare_estimators returns, from per-split scores."""
    rows = [{"repeat": rep, "train_rows": n, "estimator": est, "loglik_per_row": v,
             "impossible_rows": 0.0, "fit_seconds": 0.0}
            for (n, est), values in scores.items() for rep, v in enumerate(values)]
    return pd.DataFrame(rows)


def test_demo_standard_errors_and_a_winner_only_beyond_them():
    base = [-2.0, -2.1, -1.9, -2.0]
    res = _results({
        # 50 rows: B trails A by 1e-4 nats in every split: within A's standard error
        (50, "A"): base, (50, "B"): [v - 1e-4 for v in base], (50, "mle"): [-np.inf] * 4,
        # 200 rows: B trails A by 0.5 nats: far beyond the standard errors
        (200, "A"): base, (200, "B"): [v - 0.5 for v in base], (200, "mle"): base[:3] + [-np.inf],
    })
    mean, se = summarize(res, ["mle", "A", "B"])
    assert mean.at["A", 50] == pytest.approx(-2.0, abs=1e-12)
    assert se.at["A", 50] == pytest.approx(np.std(base, ddof=1) / 2, rel=1e-12)  # sd / sqrt(4 splits)
    assert se.at["B", 200] == pytest.approx(np.std(base, ddof=1) / 2, rel=1e-12)
    assert mean.at["mle", 200] == -np.inf and np.isnan(se.at["mle", 200])  # -inf: no standard error
    lead = leaders(mean, se)
    assert list(lead["leader"]) == ["A", "A"] and list(lead["runner_up"]) == ["B", "B"]  # mle (-inf) left out
    assert lead.at[50, "gap"] == pytest.approx(1e-4, rel=1e-6)
    assert lead.at[50, "winner"] == "" and lead.at[200, "winner"] == "A"
    # one split: no standard error, no winner
    one = _results({(50, "A"): [-2.0], (50, "B"): [-3.0]})
    m1, s1 = summarize(one, ["A", "B"])
    assert np.isnan(s1.at["A", 50]) and leaders(m1, s1).at[50, "winner"] == ""


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

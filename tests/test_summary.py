"""``net.summary()``: a statsmodels Summary of the fit (header, nodes, every entry with its
sd, interval and rows), and ``node_summary()``, the per-node frame."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.iolib.summary import Summary

import pybncsmooth as bs
from pybncsmooth.errors import UnknownNodeError
from pybncsmooth.model.summary import config_rows, effective_draws

ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"


@pytest.fixture(scope="module")
def asia():
    return bs.load_dataset("asia").iloc[:800]


def test_summary_is_a_statsmodels_summary_whose_text_shows_the_bounds(asia):
    net = bs.fit(ASIA, asia, method="hmd", random_state=0)
    s = net.summary(alpha=0.1, nodes=["D", "S"], random_state=3)
    assert isinstance(s, Summary)
    text = s.as_text()
    f = net.cpt_frame("D", interval=0.9, draws=500, random_state=3)
    rows = config_rows(net, "D").reshape(-1, order="F")
    for i, r in f.iterrows():
        line = next(l for l in text.splitlines() if l.startswith(f"{r['D']} | B={r['B']}, E={r['E']} "))
        cells = line.split()[-5:]
        assert cells == [f"{r['prob']:.4f}", f"{r['sd']:.4f}", f"{r['lower']:.4f}", f"{r['upper']:.4f}",
                         f"{rows[i // 2]:g}"]
    assert "P(D | B, E)" in text and "[0.05" in text and "0.95]" in text and "Rows used:" in text
    # the configurations' rows are the training counts
    counts = asia.groupby(["B", "E"], observed=False).size().to_numpy().reshape(2, 2)
    np.testing.assert_array_equal(config_rows(net, "D"), counts)
    for out in (s.as_html(), s._repr_html_(), s.as_latex(), s.as_csv()):
        assert "P(D | B, E)" in out and f"{f['upper'].iloc[0]:.4f}" in out
    wider = net.summary(alpha=0.01, nodes=["D"], random_state=3).as_text()
    assert "[0.005" in wider and "0.995]" in wider
    with pytest.raises(UnknownNodeError, match="'Q'"):
        net.summary(nodes=["Q"])


def test_the_header_says_data_missing_values_estimator_options_and_diagnostics(asia):
    df = asia.copy()
    df.loc[:39, "S"] = np.nan
    net = bs.fit(ASIA, df, method="hdp", iterations=200, n_chains=2, na="em", random_state=0)
    text = net.summary(nodes=["S"]).as_text()
    for piece in ("Estimator:", "hdp", "Rows used:", "800", "Missing cells:", "40 cells in 1 columns",
                  "em (expectation-maximisation)", "Largest R-hat:", "Effective draws (min):",
                  "Augmentation blocks:", "12", "iterations=200", "n_chains=2", "na='em'", "random_state=0",
                  "credible"):
        assert piece in text, piece
    rhat = max(net.cpd(v).estimate.info["rhat"] for v in net.nodes)
    assert f"{rhat:.4g}" in text
    mle = bs.fit(ASIA, asia, method="mle").summary(nodes=["L"]).as_text()
    assert "Wilson score intervals" in mle and "[0, 1], the data say nothing" in mle
    read = bs.read_network(Path(__file__).parent / "data" / "bnlearn" / "asia.bif")
    text = read.summary(nodes=["L"]).as_text()
    assert "tables read from a file" in text and "std err" not in text


def test_effective_draws_of_an_autoregressive_chain():
    # AR(1) with coefficient 0.5: n (1 - 0.5) / (1 + 0.5) effective draws; 20000 steps put
    # the estimate within 10% (its own sd is about 3%)
    rng = np.random.default_rng(0)
    x = np.zeros(20000)
    for t in range(1, len(x)):
        x[t] = 0.5 * x[t - 1] + rng.standard_normal()
    assert effective_draws(x) == pytest.approx(20000 / 3, rel=0.1)
    assert effective_draws(rng.standard_normal(5000)) == pytest.approx(5000, rel=0.1)
    assert effective_draws(np.ones(10)) == 10


def test_node_summary_is_the_per_node_frame(asia):
    net = bs.fit(ASIA, asia, method="bayes")
    frame = net.node_summary()
    assert isinstance(frame, pd.DataFrame) and list(frame.index) == net.nodes
    assert frame.loc["D", "configurations"] == 4 and frame.loc["D", "n"] == 800

"""Row weights: fractional counts. Integer weights equal repeated rows for every
estimator; fractional ones give the weighted closed forms; any data source; bad
weights named."""

from __future__ import annotations

import numpy as np
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import DataError, HyperparameterError

ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"


@pytest.fixture(scope="module")
def asia400():
    return bs.load_dataset("asia").iloc[:400].reset_index(drop=True)


@pytest.mark.parametrize("method", ["mle", "bayes", "mestimate", "hmd", "hls", "hgs", "mbranch", "hdp", "hls-bayes"])
def test_integer_weights_equal_repeated_rows(asia400, method):
    w = np.random.default_rng(0).integers(0, 4, len(asia400))
    rep = asia400.loc[asia400.index.repeat(w)].reset_index(drop=True)
    kw = {"iterations": 100} if method in ("hdp", "hls-bayes") else {}
    a = bs.fit(ASIA, asia400, method=method, weights=w, random_state=0, **kw)
    b = bs.fit(ASIA, rep, method=method, random_state=0, **kw)
    assert a.max_abs_diff(b) == 0.0
    assert a.info["weights"] == "per row"


def test_fractional_weights_give_weighted_frequencies(asia400):
    w = np.random.default_rng(1).random(len(asia400))
    net = bs.fit(ASIA, asia400, method="mle", weights=w)
    assert net.tree("A").fractional and net.tree("A").total == pytest.approx(w.sum())
    # P(E | T, L) by hand: weighted counts over each configuration
    for (t, l), grp in asia400.assign(w=w).groupby(["T", "L"], observed=True):
        for e in ("no", "yes"):
            expect = grp.loc[grp["E"] == e, "w"].sum() / grp["w"].sum()
            got = net.cpt("E")[net.levels("E").index(e), net.levels("T").index(t), net.levels("L").index(l)]
            assert got == pytest.approx(expect, rel=1e-12)
    bay = bs.fit(ASIA, asia400, method="bayes", iss=2, weights=w)
    n_a = np.array([w[(asia400["A"] == v).to_numpy()].sum() for v in ("no", "yes")])
    np.testing.assert_allclose(bay.cpt("A"), (n_a + 1) / (w.sum() + 2), rtol=1e-12)
    with pytest.raises(DataError, match="hdp needs whole counts"):
        bs.fit(ASIA, asia400, method="hdp", weights=w)


def test_weights_column_in_chunks_and_na_drop(asia400, tmp_path):
    w = np.random.default_rng(2).random(len(asia400))
    framed = asia400.assign(wt=w)
    path = tmp_path / "asia.csv"
    framed.to_csv(path, index=False)
    mem = bs.fit(ASIA, asia400, method="bayes", weights=w)
    col = bs.fit(ASIA, framed, method="bayes", weights="wt")
    csv = bs.fit(ASIA, str(path), method="bayes", weights="wt", chunksize=57)
    assert col.max_abs_diff(mem) == 0.0
    assert csv.max_abs_diff(mem) < 1e-12  # sums in another order
    # na="drop": the weights follow the rows that stay
    holes = asia400.copy()
    holes.loc[::7, "D"] = np.nan
    dropped = bs.fit(ASIA, holes, method="mle", na="drop", weights=w)
    keep = holes["D"].notna().to_numpy()
    ref = bs.fit(ASIA, asia400[keep], method="mle", weights=w[keep])
    assert dropped.max_abs_diff(ref) == 0.0
    chunked = bs.fit(ASIA, [holes.assign(wt=w).iloc[:150], holes.assign(wt=w).iloc[150:]], method="mle", na="drop",
                     weights="wt")
    assert chunked.max_abs_diff(ref) < 1e-12


def test_weights_with_domains(asia400):
    df = asia400.assign(site=np.where(np.arange(len(asia400)) % 3 == 0, "a", "b"))
    w = np.random.default_rng(3).integers(1, 3, len(df))
    rep = df.loc[df.index.repeat(w)].reset_index(drop=True)
    a = bs.fit(ASIA, df, method="hmd", domain="site", weights=w)
    assert a.max_abs_diff(bs.fit(ASIA, rep, method="hmd", domain="site")) == 0.0


def test_bad_weights_are_named(asia400, tmp_path):
    n = len(asia400)
    with pytest.raises(DataError, match="one weight per row"):
        bs.fit(ASIA, asia400, weights=np.ones(n - 1))
    bad = np.ones(n)
    bad[5] = -1
    with pytest.raises(DataError, match="negative.*first at row 5"):
        bs.fit(ASIA, asia400, weights=bad)
    bad[5] = np.nan
    with pytest.raises(DataError, match="missing, infinite or negative"):
        bs.fit(ASIA, asia400, weights=bad)
    with pytest.raises(DataError, match="not numbers"):
        bs.fit(ASIA, asia400.assign(wt="x"), weights="wt")
    with pytest.raises(DataError, match="not a column"):
        bs.fit(ASIA, asia400, weights="nope")
    with pytest.raises(bs.errors.StructureError, match="weights column 'A'"):
        bs.fit(ASIA, asia400, weights="A")
    path = tmp_path / "a.csv"
    asia400.to_csv(path, index=False)
    with pytest.raises(DataError, match="DataFrame in memory"):
        bs.fit(ASIA, str(path), weights=np.ones(n))
    with pytest.raises(HyperparameterError, match="learn the classifier's first"):
        bs.fit("D ~ .", asia400, structure="nb", weights=np.ones(n))

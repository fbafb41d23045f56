"""A frame of Categoricals is counted through one stacked code matrix (the encoding's
``stacked``: the codes copied once, checked for missing values in one reduction) and a
fit with no option given shares its immutable defaults: every number must be the one the
column-by-column path gives, the caller's frame must stay as it was, and bad input must
be named as before."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.data import encode
from pybncsmooth.errors import MissingValueError
from pybncsmooth.options import Options

_encode_module = importlib.import_module("pybncsmooth.data.encode")
_network_module = importlib.import_module("pybncsmooth.counting.network")
REF = Path(__file__).parent / "data" / "bnlearn"
ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"


def _alarm(rows: int = 1500) -> tuple[bs.DAG, pd.DataFrame]:
    df = pd.read_csv(REF / "alarm.csv.gz", dtype="category").iloc[:rows]
    return bs.DAG.from_modelstring((REF / "alarm.modelstring.txt").read_text().strip()), df


def _unused_levels() -> tuple[bs.DAG, pd.DataFrame]:
    dag, df = _alarm()
    df = df.copy()
    df["HR"] = df["HR"].cat.add_categories(["NEVER"])  # a level no row has: zero counts
    df["CVP"] = df["CVP"].cat.set_categories(list(reversed(df["CVP"].cat.categories)))  # a given order kept
    return dag, df


def _holes() -> tuple[bs.DAG, pd.DataFrame]:
    df = bs.load_dataset("asia").iloc[:2000].copy()
    rng = np.random.default_rng(0)
    for c in ("T", "E", "X"):
        df.loc[rng.random(len(df)) < 0.05, c] = np.nan
    return bs.DAG.from_modelstring(ASIA), df


def _object_columns() -> tuple[bs.DAG, pd.DataFrame]:
    dag, df = _alarm()
    df = df.copy()
    for c in ("HR", "PCWP", "KINK"):
        df[c] = df[c].astype(str).astype(object)  # text: levels inferred and sorted
    return dag, df


def _column_by_column(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every column encoded by the general path (no Categorical read as it stands, no
    stacked matrix, no plain-frame counting)."""
    monkeypatch.setattr(_encode_module, "_categorical_arrays", lambda df, names: ({}, None))
    monkeypatch.setattr(_network_module, "count_plain", lambda df, dag: None)  # nor counted by the plain path


def _tables(net: bs.FittedNetwork) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    # the sds the estimate holds (bayes' BDeu sds are refused by cpt(stat="sd"))
    return {n: (np.asarray(net.cpt(n)), np.asarray(net.cpd(n).table(stat="sd"))) for n in net.nodes}


CASES = [(_alarm, {}), (_unused_levels, {}), (_holes, {"na": "available"}), (_object_columns, {})]


@pytest.mark.parametrize("data, options", CASES, ids=["categorical", "unused-levels", "missing", "object-columns"])
@pytest.mark.parametrize("method, hyper", [("bayes", {"iss": 1}), ("bayes", {"iss": 0.3, "unseen": "backoff"}),
                                           ("mle", {})])
def test_the_stacked_path_equals_the_column_by_column_one(monkeypatch, data, options, method, hyper):
    dag, df = data()
    lean = bs.fit(dag, df, method=method, **options, **hyper)
    with monkeypatch.context() as m:
        _column_by_column(m)
        general = bs.fit(dag, df, method=method, **options, **hyper)
    assert lean.schema.levels == general.schema.levels
    assert lean.info == general.info
    a, b = _tables(lean), _tables(general)
    for n in dag.nodes:
        for x, y in zip(a[n], b[n]):
            assert x.dtype == y.dtype and np.array_equal(x, y), n  # bit for bit


def test_the_stacked_matrix_is_used_exactly_when_every_column_is_a_complete_categorical():
    _, df = _unused_levels()
    enc = encode(df, na="available")
    names, rows = enc.stacked
    assert names == tuple(df.columns) and rows.shape == (len(df.columns), len(df))
    assert enc.schema["HR"][-1] == "NEVER"  # an unused level kept, last
    for j, v in enumerate(names):
        assert np.array_equal(rows[j], df[v].cat.codes.to_numpy()) and enc.codes[v].base is rows
    _, holes = _holes()
    enc = encode(holes, na="available")
    assert enc.stacked is None  # three columns with missing values: each counted as it is
    assert enc.codes["T"].min() == -1 and enc.codes["A"].min() == 0
    _, mixed = _object_columns()
    assert encode(mixed).stacked is None


def test_the_callers_frame_is_neither_changed_nor_shared():
    dag, df = _unused_levels()
    before = df.copy(deep=True)
    net = bs.fit(dag, df, method="bayes", iss=1)
    pd.testing.assert_frame_equal(df, before)
    enc = encode(df)
    frame_codes = {v: df[v].cat.codes.to_numpy() for v in df.columns}
    for v, c in enc.codes.items():
        assert not np.shares_memory(c, frame_codes[v]), v  # the stacked copy, not the frame's arrays
    enc.codes["HR"][:] = 0  # writing into the encoding leaves the frame alone
    pd.testing.assert_frame_equal(df, before)
    assert np.array_equal(np.asarray(bs.fit(dag, df, method="bayes", iss=1).cpt("HR")), np.asarray(net.cpt("HR")))
    _, holes = _holes()
    enc = encode(holes, na="available")
    assert not enc.codes["A"].flags.writeable  # the frame's own codes, read only


def test_a_missing_value_among_complete_categoricals_is_still_named():
    dag, df = _alarm(300)
    df = df.copy()
    df.loc[df.index[17], "PCWP"] = np.nan
    with pytest.raises(MissingValueError, match=r"PCWP.*17|17.*PCWP"):
        bs.fit(dag, df, method="bayes", iss=1)
    net = bs.fit(dag, df, method="bayes", iss=1, na="available")
    assert net.info["n_missing"] == {"PCWP": 1}


def test_the_default_options_are_built_once_and_equal_a_fresh_build():
    first = Options.build("fit")
    assert Options.build("fit") is first
    assert first == Options._build("fit", {})
    assert Options.build("classifier") is not first and Options.build("classifier").entry == "classifier"
    given = Options.build("fit", na="level")
    assert given is not Options.build("fit", na="level") and given.na == "level"
    assert Options.build("fit").na != "level"  # a given option never changes the shared defaults

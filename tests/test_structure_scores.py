"""bs.score against bnlearn's score(..., by.node = TRUE): loglik, aic, bic, bde (iss 1
and 10), bds (iss 1 and 10) and k2 on the first 2,000 rows of bnlearn's alarm and
insurance data sets, for the true network, the empty graph and a structure learned by
bnlearn's hc (tests/data/structure/scores.json, written by make_golden.R there)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import DataError, HyperparameterError, MissingColumnError, MissingValueError

from conftest import load_reference_csv

GOLDEN = json.loads((Path(__file__).parent / "data" / "structure" / "scores.json").read_text())
TYPES = {
    "loglik": ("loglik", {}), "aic": ("aic", {}), "bic": ("bic", {}), "bde_iss1": ("bde", {"iss": 1}),
    "bde_iss10": ("bde", {"iss": 10}), "bds_iss1": ("bds", {"iss": 1}), "bds_iss10": ("bds", {"iss": 10}),
    "k2": ("k2", {}),
}
_FRAMES: dict[str, pd.DataFrame] = {}


def _rows(name: str) -> pd.DataFrame:
    if name not in _FRAMES:
        _FRAMES[name] = load_reference_csv(name).iloc[:2000].copy()
    return _FRAMES[name]


@pytest.mark.parametrize("key", sorted(GOLDEN))
@pytest.mark.parametrize("which", sorted(TYPES))
def test_score_by_node_equals_bnlearn(key, which):
    entry = GOLDEN[key]
    type_, hyper = TYPES[which]
    df = _rows(entry["network"])
    got = bs.score(entry["modelstring"], df, type_, by_node=True, **hyper)
    ref = pd.Series(entry["values"][which])
    assert sorted(got.index) == sorted(ref.index)
    np.testing.assert_allclose(got[ref.index].to_numpy(), ref.to_numpy(), rtol=1e-9, atol=1e-9)
    total = bs.score(entry["modelstring"], df, type_, **hyper)
    assert math.isclose(total, ref.sum(), rel_tol=1e-9)


def test_bds_differs_from_bde_where_configurations_are_unobserved():
    # the hc structure of insurance has parent configurations no row shows: BDs spreads
    # iss over the observed ones only, so the two scores differ there and agree elsewhere
    entry = GOLDEN["insurance/truth"]
    bde = pd.Series(entry["values"]["bde_iss10"])
    bds = pd.Series(entry["values"]["bds_iss10"])
    assert (bde != bds).any() and (bde == bds).any()


def test_score_defaults_and_hyperparameters():
    df = _rows("alarm")
    ms = GOLDEN["alarm/truth"]["modelstring"]
    assert bs.score(ms, df) == bs.score(ms, df, "bic")  # bnlearn's default for discrete data
    ll = bs.score(ms, df, "loglik")
    bic0 = bs.score(ms, df, "bic", k=0)
    assert math.isclose(ll, bic0, rel_tol=1e-12)
    aic2 = bs.score(ms, df, "aic", k=2)
    aic1 = bs.score(ms, df, "aic")
    assert math.isclose(ll - aic2, 2 * (ll - aic1), rel_tol=1e-12)


def test_score_bad_input_is_named():
    df = _rows("alarm")
    ms = GOLDEN["alarm/truth"]["modelstring"]
    with pytest.raises(HyperparameterError, match="type must be one of"):
        bs.score(ms, df, "bdeu")
    with pytest.raises(HyperparameterError, match="does not take 'iss'"):
        bs.score(ms, df, "bic", iss=1)
    with pytest.raises(HyperparameterError, match="iss"):
        bs.score(ms, df, "bde", iss=0)
    with pytest.raises(MissingColumnError, match="HIST"):
        bs.score(ms, df.drop(columns="HIST"), "bic")
    bad = df.copy()
    bad.iloc[3, bad.columns.get_loc("CVP")] = None
    with pytest.raises(MissingValueError, match="CVP"):
        bs.score(ms, bad, "bic")
    with pytest.raises(DataError, match="no row"):
        bs.score(ms, df.iloc[:0], "bic")


def test_score_does_not_read_extra_columns_and_does_not_mutate():
    df = _rows("alarm").copy()
    pristine = df.copy()
    ms = GOLDEN["alarm/truth"]["modelstring"]
    ref = bs.score(ms, df, "bde", iss=1)
    df2 = df.assign(site=np.arange(len(df)) % 3)
    assert bs.score(ms, df2, "bde", iss=1) == ref
    assert df.equals(pristine)

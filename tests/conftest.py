"""Shared fixtures: the bnlearn reference files in tests/data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

DATA = Path(__file__).parent / "data"
BNLEARN = DATA / "bnlearn"


def bnlearn_path(name: str) -> Path:
    return BNLEARN / name


def load_reference_csv(name: str) -> pd.DataFrame:
    """A bnlearn data set with bnlearn's factor level order, as Categoricals."""
    levels = json.loads((BNLEARN / f"{name}.levels.json").read_text())
    df = pd.read_csv(BNLEARN / f"{name}.csv.gz", dtype=str, keep_default_na=False, na_values=[""])
    for col in levels["columns"]:
        df[col] = pd.Categorical(df[col], categories=levels["levels"][col])
    return df


def load_golden(name: str) -> dict:
    """``node -> dict(parents, dims, levels, table)`` from a bnlearn JSON file."""
    raw = json.loads((BNLEARN / name).read_text())
    out = {"meta": raw["meta"], "nodes": {}}
    for node, nd in raw["nodes"].items():
        prob = np.array([np.nan if v is None else v for v in nd["prob"]], dtype=float)
        out["nodes"][node] = {
            "parents": nd["parents"],
            "children": nd["children"],
            "dims": nd["dims"],
            "levels": nd["levels"],
            "table": prob.reshape(nd["shape"], order="F"),
        }
    return out


def modelstring_of(name: str) -> str:
    return (BNLEARN / f"{name}.modelstring.txt").read_text().strip()


# Data frames shared by many tests, with a pristine copy each: after every test they must be
# unchanged (no public call may mutate the caller's data).
_SHARED: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}


def _shared(name: str) -> pd.DataFrame:
    df = load_reference_csv(name)
    _SHARED[name] = (df, df.copy(deep=True))
    return df


@pytest.fixture(autouse=True)
def _caller_data_unchanged():
    yield
    for name, (df, pristine) in _SHARED.items():
        assert df.equals(pristine) and list(df.dtypes) == list(pristine.dtypes), (
            f"a public call modified the caller's data frame {name!r}"
        )


@pytest.fixture(scope="session")
def asia() -> pd.DataFrame:
    return _shared("asia")


@pytest.fixture(scope="session")
def learning_test() -> pd.DataFrame:
    return _shared("learning_test")


@pytest.fixture(scope="session")
def alarm() -> pd.DataFrame:
    return _shared("alarm")


@pytest.fixture(scope="session")
def insurance() -> pd.DataFrame:
    return _shared("insurance")


def adapted_by_hand(counts, pooled, info, code: int, mass=None) -> np.ndarray:
    """An adapted domain's table by hand (the same layout as :func:`shrunk_by_hand`): the
    posterior means (n + s' m) / (N + s') with the nested model's s' = s A / (s + A + 1)
    (``mass``: A per column, default the node's ``s_domain_mass``; infinite: s itself),
    averaged over the domain's own posterior of s (``info["s_own_*"]`` of ``code``)."""
    n = np.asarray(counts, dtype=float)
    m = np.asarray(pooled, dtype=float)
    codes = list(np.asarray(info["s_own_codes"]))
    row = codes.index(code)
    A = np.asarray(info["s_domain_mass"] if mass is None else mass, dtype=float)
    out = np.zeros_like(n)
    for log_s, w in zip(info["s_own_log"][row], info["s_own_weights"][row]):
        if w == 0:
            continue
        s = np.exp(log_s)
        sp = np.where(np.isfinite(A), s * A / (s + A + 1), s)
        out += w * (n + sp * m) / (n.sum(axis=0) + sp)
    return out


def shrunk_by_hand(counts, pooled, info) -> np.ndarray:
    """A domain's table by hand from its counts and the pooled table (the same layout, the
    child on axis 0): the posterior means (n + s m) / (N + s) averaged over the fit's
    posterior of the domain concentration s (``info["s_domain_log"]``, ``["s_domain_weights"]``)."""
    n = np.asarray(counts, dtype=float)
    m = np.asarray(pooled, dtype=float)
    out = np.zeros_like(n)
    for log_s, w in zip(info["s_domain_log"], info["s_domain_weights"]):
        s = np.exp(log_s)
        out += w * (n + s * m) / (n.sum(axis=0) + s)
    return out

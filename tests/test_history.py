"""An answer does not depend on what the process ran before (issue 56).

The property: ``fit``, ``logpdf``, ``query``, ``map_query``, ``predict_proba`` and a
classifier's ``predict_proba`` give in a fresh process exactly what they give after
unrelated work on networks whose levels share names in other orders and of other types
(``['yes', 'no']`` beside ``['no', 'yes']``; ``0, 1`` beside ``False, True``, ``0.0,
1.0`` and the texts ``'0', '1'``): the same numbers to the last bit, the same levels of
the same types.

* The hypothesis tests stand a fresh process in by emptying the package's process-wide
  caches (:mod:`process_state`): the answers of a network drawn at random, computed
  from empty caches, then again after the same calls on another network drawn at
  random (by its own draw, or the first's levels in other orders and types).
* A test in real fresh processes (subprocesses importing this checkout) runs the
  issue's reproducers, and an HDP fit beside a larger one (the process-wide Stirling
  tables), once first thing and once after the unrelated work.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import pybncsmooth as bs  # noqa: E402
from process_state import clear_caches  # noqa: E402

STRUCTURE = "[A][B|A][C|A:B]"
NODES = ("A", "B", "C")
#: each family's values for codes 0, 1, 2: level names shared across families (equal
#: numbers of other types, digits as text) and across orders (Categoricals' categories)
VALUES: dict[str, list[Any]] = {
    "text": ["yes", "no", "maybe"],
    "text-cat": ["yes", "no", "maybe"],
    "digits-cat": ["0", "1", "2"],
    "int": [0, 1, 2],
    "int-cat": [0, 1, 2],
    "float-cat": [0.0, 1.0, 2.0],
    "bool": [False, True],
    "bool-cat": [False, True],
}
FAMILIES = tuple(VALUES)


def _settings(n: int):
    """``n`` examples, the same ones on every run (derandomised, no example database)."""
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


@st.composite
def node_specs(draw) -> tuple[str, int, tuple[int, ...]]:
    """A node's family, number of levels and order of its Categorical's categories."""
    family = draw(st.sampled_from(FAMILIES))
    k = 2 if family.startswith("bool") else draw(st.integers(2, 3))
    order = tuple(draw(st.permutations(range(k))))
    return family, k, order


networks = st.tuples(node_specs(), node_specs(), node_specs(), st.integers(0, 2**16))


def _column(codes: np.ndarray, spec: tuple[str, int, tuple[int, ...]]) -> Any:
    family, k, order = spec
    values = VALUES[family][:k]
    col = [values[c] for c in codes]
    if family.endswith("-cat"):
        return pd.Categorical(col, categories=[values[i] for i in order])
    if family == "text":
        return np.array(col, dtype=object)
    return np.array(col, dtype=bool if family == "bool" else np.int64)


def _frame(net_spec: tuple) -> pd.DataFrame:
    """30 rows of ``A``, ``B | A``, ``C | A, B`` (every level of every node seen)."""
    *specs, seed = net_spec
    rng = np.random.default_rng(seed)
    n = 30
    k = [s[1] for s in specs]
    a = rng.integers(0, k[0], n)
    b = (a + (rng.random(n) < 0.3) * rng.integers(1, 3, n)) % k[1]
    c = (a + b + (rng.random(n) < 0.3)) % k[2]
    for j, x in enumerate((a, b, c)):
        x[: k[j]] = np.arange(k[j])
        x[k[j]: 2 * k[j]] = np.arange(k[j])[::-1]
    return pd.DataFrame({v: _column(x, s) for v, x, s in zip(NODES, (a, b, c), specs)})


def _typed(values: Any) -> tuple:
    """Values as ``(type, repr)`` pairs: ``0`` and ``False`` differ, as ``1`` and ``1.0``."""
    return tuple((type(v).__name__, repr(v)) for v in values)


def _index(idx: pd.Index) -> tuple:
    if isinstance(idx, pd.MultiIndex):
        return ("multi", tuple(_index(lev) for lev in idx.levels), tuple(map(tuple, idx.codes)), tuple(idx.names))
    return (repr(idx.dtype), _typed(idx), idx.name)


def answers(net_spec: tuple, method: str) -> dict[str, tuple]:
    """What a user reads off a network of ``net_spec``'s frame: labels (typed) and numbers."""
    df = _frame(net_spec)
    net = bs.fit(STRUCTURE, df, method=method)
    out: dict[str, tuple] = {}
    for v in NODES:
        out[f"levels {v}"] = (_typed(net.levels(v)), None)
        out[f"cpt {v}"] = ((), net.cpt(v))
    out["logpdf"] = ((), net.logpdf(df))
    p = net.predict_proba(df[["A", "B"]], "C")
    out["predict_proba"] = (_index(p.columns), p.to_numpy())
    pred = net.predict(df[["A", "B"]], "C")
    out["predict"] = (repr(getattr(pred, "dtype", None)), _typed(pred), None)
    a0 = df["A"].iloc[0]
    q = net.query("C", evidence={"A": a0})
    out["query"] = (_index(q.index), q.to_numpy())
    j = net.query(["A", "B"], evidence={"C": df["C"].iloc[-1]})
    out["query joint"] = (_index(j.index), j.to_numpy())
    m = net.map_query("C", evidence=df[["A", "B"]].head(6))
    out["map_query frame"] = (repr(m["C"].dtype), _typed(m["C"]), m["prob"].to_numpy())
    one = net.map_query(["B", "C"], evidence={"A": a0})
    out["map_query"] = (_typed(one.state.values()), np.array([one.prob]))
    clf = bs.BNClassifier(structure="nb", method=method).fit(df[["A", "B"]], df["C"])
    out["classifier"] = (_typed(clf.classes_), clf.predict_proba(df[["A", "B"]]))
    return out


def _assert_same(after: dict, fresh: dict) -> None:
    assert list(after) == list(fresh)
    for key in fresh:
        *labels, numbers = fresh[key]
        *labels_after, numbers_after = after[key]
        assert labels_after == labels, key
        if numbers is not None:
            np.testing.assert_array_equal(numbers_after, numbers, err_msg=key)


def _check_history(target: tuple, other: tuple, method: str) -> None:
    clear_caches()
    fresh = answers(target, method)
    clear_caches()
    answers(other, method)  # the unrelated work
    _assert_same(answers(target, method), fresh)


@_settings(30)
@given(target=networks, other=networks, method=st.sampled_from(["bayes", "mestimate"]))
@example(target=(("text-cat", 2, (0, 1)),) * 3 + (1,), other=(("text-cat", 2, (1, 0)),) * 3 + (2,), method="bayes")
@example(target=(("int", 2, (0, 1)),) * 3 + (1,), other=(("bool", 2, (0, 1)),) * 3 + (2,), method="bayes")
@example(target=(("float-cat", 3, (2, 0, 1)),) * 3 + (1,), other=(("int-cat", 3, (0, 1, 2)),) * 3 + (2,),
         method="mestimate")
def test_answers_do_not_depend_on_unrelated_work(target, other, method):
    """After any other network's fit and queries, a network answers as in a fresh process."""
    _check_history(target, other, method)


@st.composite
def relabelled(draw):
    """A network and another whose every node has the first's number of levels, in
    another order of the categories and (often) another family of equal values."""
    target = draw(networks)
    other = []
    for family, k, order in target[:3]:
        same_k = [f for f in FAMILIES if k == 2 or not f.startswith("bool")]
        other.append((draw(st.sampled_from(same_k)), k, tuple(draw(st.permutations(range(k))))))
    return target, (*other, draw(st.integers(0, 2**16)))


@_settings(30)
@given(pair=relabelled(), method=st.sampled_from(["bayes", "mestimate"]))
def test_answers_do_not_depend_on_work_on_the_same_level_names(pair, method):
    """The unrelated network has the same numbers of levels, so that its level names are
    the target's in other orders and types (the caches' colliding keys)."""
    _check_history(*pair, method)


# ----------------------------------------------------------------------------- fresh processes

_SCRIPT = r"""
import json, sys
import numpy as np, pandas as pd
import pybncsmooth as bs

mode, expert = sys.argv[1], sys.argv[2]
asia = bs.datasets.load_dataset("asia")
yes_first = asia.apply(lambda s: s.cat.reorder_categories(["yes", "no"]))
rng = np.random.default_rng(3)
ints = pd.DataFrame({"A": rng.integers(0, 2, 200), "B": rng.integers(0, 3, 200)})
ints["B"] = (ints["A"] + ints["B"] * (rng.random(200) < 0.4)) % 3
small = asia.head(40)

if mode == "after":  # unrelated work on networks whose levels share names in other orders and types
    other = bs.fit(bs.datasets.structure("asia"), yes_first, method="bayes")
    other.logpdf(yes_first)
    other.predict_proba(yes_first.drop(columns="X"), "X")
    other.query("X", evidence={"A": "yes"})
    bools = ints.assign(A=ints["A"].astype(bool), B=ints["B"] > 0)
    b = bs.fit("[A][B|A]", bools)
    b.query("B", evidence={"A": True})
    b.map_query("B", evidence=bools[["A"]])
    floats = ints.astype(float).astype("category")
    bs.fit("[A][B|A]", floats).query("B", evidence={"A": 1.0})
    bs.BNClassifier(structure="nb").fit(yes_first.drop(columns="X"), yes_first["X"]).predict_proba(yes_first.head())
    bs.fit(bs.datasets.structure("asia"), asia, method="hdp", iterations=60, random_state=1)  # large counts

def typed(values):
    return [[type(v).__name__, repr(v)] for v in values]

out = {}
net = bs.fit(expert, asia)
out["expert levels"] = typed(net.levels("A"))
out["expert cpt A"] = net.cpt("A").tolist()
out["expert logpdf"] = net.logpdf(asia.head(200)).tolist()
fit = bs.fit(bs.datasets.structure("asia"), asia, method="bayes")
out["logpdf"] = fit.logpdf(yes_first.head(200)).tolist()
p = fit.predict_proba(yes_first.drop(columns="X").head(50), "X")
out["predict_proba"] = [typed(p.columns), p.to_numpy().tolist()]
q = bs.fit("[A][B|A]", ints).query("B", evidence={"A": 1})
out["query"] = [typed(q.index), repr(q.index.dtype), q.to_numpy().tolist()]
m = bs.fit("[A][B|A]", ints).map_query("B", evidence=ints[["A"]].head(5))
out["map_query"] = [typed(m["B"]), repr(m["B"].dtype), (m["B"] == 1).tolist()]
clf = bs.BNClassifier(structure="nb").fit(asia.drop(columns="X"), asia["X"])
out["classifier"] = [typed(clf.classes_), clf.predict_proba(yes_first.drop(columns="X").head(50)).tolist()]
hdp = bs.fit(bs.datasets.structure("asia"), small, method="hdp", iterations=60, random_state=0)
out["hdp"] = [hdp.cpt(v).tolist() for v in hdp.nodes]
print(json.dumps(out))
"""


def _run(mode: str, expert: Path) -> dict:
    root = str(Path(bs.__file__).resolve().parents[1])  # the checkout these tests import
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])]))
    res = subprocess.run([sys.executable, "-c", _SCRIPT, mode, str(expert)], capture_output=True, text=True,
                         env=env, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_fresh_process_and_after_unrelated_work_agree(tmp_path):
    """The issue's reproducers in two new processes: first thing, and after unrelated work.
    ``bs.fit("expert.bif", asia)`` (the file lists ``yes`` first, the data ``no`` first)
    gives P(A = yes) = (42 + 1/2) / 5001 in both."""
    asia = bs.datasets.load_dataset("asia")
    expert = tmp_path / "expert.bif"
    flipped = asia.apply(lambda s: s.cat.reorder_categories(["yes", "no"]))
    bs.fit(bs.datasets.structure("asia"), flipped.head(50), method="bayes").write(expert)
    fresh, after = _run("fresh", expert), _run("after", expert)
    assert fresh["expert levels"] == [["str", "'yes'"], ["str", "'no'"]]
    np.testing.assert_allclose(fresh["expert cpt A"], [42.5 / 5001, 4958.5 / 5001], rtol=1e-12)
    assert fresh["query"][0] == [["int", "0"], ["int", "1"], ["int", "2"]]
    for key in fresh:
        assert after[key] == fresh[key], key

"""The NumPy twins of the structure-learning kernels (pybncsmooth.learning._twins),
which a process's first small searches use instead of starting numba: the same counts,
the same family terms (to a few units in the last place), the same choice of move
(ties and the tolerance included), so hc and tabu take bnlearn's path on either."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.counting.family import family_counts
from pybncsmooth.learning import _family, _kernels, _twins
from pybncsmooth.learning.search import TOL

from conftest import load_reference_csv

STRUCT = Path(__file__).parent / "data" / "structure"
GOLDEN = json.loads((STRUCT / "searches.json").read_text())


def _rows(name: str) -> pd.DataFrame:
    if name == "hailfinder":
        lv = json.loads((STRUCT / "hailfinder.levels.json").read_text())
        codes = pd.read_csv(STRUCT / "hailfinder.codes.csv.gz")
        return pd.DataFrame({v: pd.Categorical.from_codes(codes[v].to_numpy(), categories=lv["levels"][v])
                             for v in lv["columns"]})
    return load_reference_csv(name).iloc[:10000].copy()


@pytest.fixture(params=["twins", "compiled"])
def path(request, monkeypatch):
    """Force the searches onto the NumPy twins or the compiled kernels."""
    if request.param == "twins":
        monkeypatch.setattr(_family, "numba_loaded", lambda: False)
        monkeypatch.setattr(_family, "TWIN_WORK", math.inf)
        monkeypatch.setattr(_family, "TWIN_BUDGET", math.inf)
    else:
        monkeypatch.setattr(_family, "TWIN_WORK", -1.0)
    return request.param


def _check_path(scorer_twins: bool, path: str) -> None:
    assert scorer_twins == (path == "twins")


@pytest.mark.parametrize("name", ["alarm", "insurance", "hailfinder"])
def test_hc_takes_bnlearns_path_on_either(name, path, monkeypatch):
    df = _rows(name)
    seen = []
    real = _family.use_twins
    monkeypatch.setattr("pybncsmooth.learning.search.use_twins", lambda s, f: seen.append(real(s, f)) or seen[-1])
    dag = bs.hc(df, score="bde", iss=1, progress=False)
    _check_path(seen[0], path)
    assert dag.modelstring() == GOLDEN[name]["hc"]["modelstring"]
    assert bs.score(dag, df, "bde", iss=1) == pytest.approx(GOLDEN[name]["hc"]["score"], rel=1e-9)


@pytest.mark.parametrize("name", ["alarm", "insurance"])
def test_tabu_and_controls_agree_between_twins_and_kernels(name, monkeypatch):
    df = _rows(name).iloc[:3000]
    nodes = list(df.columns)
    kw = dict(blacklist=[(nodes[0], nodes[1])], whitelist=[(nodes[2], nodes[3])], maxp=2)
    got = {}
    for which in ("twins", "compiled"):
        with monkeypatch.context() as m:
            if which == "twins":
                m.setattr(_family, "numba_loaded", lambda: False)
                m.setattr(_family, "TWIN_WORK", math.inf)
                m.setattr(_family, "TWIN_BUDGET", math.inf)
            else:
                m.setattr(_family, "TWIN_WORK", -1.0)
            got[which] = (bs.tabu(df, "bde", iss=1, progress=False).modelstring(),
                          bs.hc(df, "bic", restart=2, perturb=3, random_state=5, progress=False, **kw).modelstring(),
                          bs.tabu(df, "bds", iss=10, tabu=5, progress=False, **kw).modelstring())
    assert got["twins"] == got["compiled"]


def test_tabu_reaches_bnlearns_score_on_either(path):
    df = _rows("insurance")
    dag = bs.tabu(df, score="bde", iss=1, progress=False)
    assert bs.score(dag, df, "bde", iss=1) == pytest.approx(GOLDEN["insurance"]["tabu"]["score"], rel=1e-9)


def _tables(rng: np.random.Generator):
    for q, r in [(1, 2), (1, 5), (3, 2), (8, 3), (24, 4), (2, 7)]:
        t = rng.poisson(rng.choice([0.3, 3.0, 40.0]), size=(q, r)).astype(np.int64)
        t[rng.random(q) < 0.25] = 0  # unobserved configurations
        yield t
    yield np.zeros((4, 3), dtype=np.int64)
    big = rng.poisson(2.0, size=(300, 10)).astype(np.int64)  # over _DISTINCT_FROM cells: distinct values
    yield big


@pytest.mark.parametrize("kind", range(6))
def test_table_score_twin_equals_the_kernel(kind):
    rng = np.random.default_rng(kind)
    for t in _tables(rng):
        n = int(t.sum())
        for a in (1.0, 10.0, 0.5 * math.log(max(n, 2))):
            want = float(_kernels.table_score(t, kind, a, n))
            got = _twins.table_score_numpy(t, kind, a, n)
            assert got == want, (kind, t.shape, a)  # the same double


def test_family_counts_twin_equals_the_compiled_counting():
    rng = np.random.default_rng(3)
    cards = [2, 3, 4, 2, 5]
    M = np.asfortranarray(np.stack([rng.integers(0, c, 500) for c in cards], axis=1).astype(np.int8))
    cols = _twins.int64_columns(M)
    for child, parents in [(0, []), (1, [0]), (2, [4, 0]), (4, [3, 1, 2]), (3, [2, 1, 0, 4])]:
        want = family_counts(M, child, parents, cards)
        got = _twins.family_counts_numpy(cols, child, parents, cards)
        assert got.dtype == np.int64 and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def _random_state(rng: np.random.Generator, p: int):
    order = rng.permutation(p)
    am = np.zeros((p, p), dtype=np.int8)
    for a in range(p):
        for b in range(a + 1, p):
            if rng.random() < 0.2:
                am[order[a], order[b]] = 1
    cache = np.round(rng.normal(0, 3, size=(p, p)), 1)  # rounded: many exact ties
    cache[rng.random((p, p)) < 0.1] += TOL / 3  # and ties within the tolerance
    wl = np.zeros((p, p), dtype=np.int8)
    bl = np.zeros((p, p), dtype=np.int8)
    for _ in range(2):
        i, j = rng.integers(p, size=2)
        if i != j:
            bl[i, j] = 1
    arcs = np.argwhere(am == 1)
    if len(arcs):
        i, j = arcs[0]
        wl[i, j] = 1
    added = ((am == 0) & (am.T == 0)).astype(np.int8)
    np.fill_diagonal(added, 0)
    added[bl != 0] = 0
    return am, cache, added, wl, bl


def test_best_move_twin_equals_the_kernel():
    rng = np.random.default_rng(11)
    for trial in range(300):
        p = int(rng.integers(2, 12))
        am, cache, added, wl, bl = _random_state(rng, p)
        nparents = am.sum(axis=0).astype(np.float64)
        maxp = float(rng.choice([1.0, 2.0, 1e300]))
        n_tabu = int(rng.integers(0, 4))
        tabu = np.zeros((max(n_tabu, 1), p, p), dtype=np.int8)
        for k in range(n_tabu):  # networks one move away from am: some moves are tabu
            tabu[k] = am
            i, j = rng.integers(p, size=2)
            if i != j and am[j, i] == 0:
                tabu[k, i, j] = 1 - tabu[k, i, j]
        for baseline in (0.0, -math.inf):
            want = _kernels.best_move(am.copy(), cache, added, wl, bl, nparents, maxp, tabu, n_tabu, baseline, TOL)
            got = _twins.best_move_numpy(am.copy(), cache, added, wl, bl, nparents, maxp, tabu, n_tabu, baseline,
                                         TOL)
            assert tuple(int(x) for x in got) == tuple(int(x) for x in want), (trial, baseline)


def test_has_path_twin_equals_the_kernel():
    rng = np.random.default_rng(2)
    for _ in range(100):
        p = int(rng.integers(2, 10))
        am, *_ = _random_state(rng, p)
        stack, seen = np.empty(p, dtype=np.int64), np.empty(p, dtype=np.int64)
        for src in range(p):
            for dst in range(p):
                if src == dst:
                    continue
                for skip in (False, True):
                    assert _twins.has_path_numpy(am, src, dst, skip) == bool(
                        _kernels.has_path(am, src, dst, skip, stack, seen))


def test_a_first_small_search_does_not_start_numba_and_the_budget_ends_the_twins():
    code = """
import sys, pybncsmooth as bs
from pybncsmooth.learning import _family
df = bs.load_dataset("asia")
first = bs.hc(df, "bde", iss=1, progress=False).modelstring()
print(first, 'numba' in sys.modules)
_family._TWIN_DONE[0] = _family.TWIN_BUDGET + 1
print(bs.hc(df, "bde", iss=1, progress=False).modelstring() == first, 'numba' in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["[A][S][T][L|S][B|S][E|T:L][X|E][D|B:E]", "False", "True", "True"]

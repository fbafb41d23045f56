"""A script's first read and queries: ``import pybncsmooth`` brings NumPy, pandas and
the reading and querying of a network, so that a fresh process's ``read_network`` and
``query`` import nothing more (no module of the package, no numba, SciPy or
scikit-learn) and answer exactly what the same calls answer in a process that has
run everything else (compiled kernels loaded, the general reader warm)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import pybncsmooth as bs
from conftest import BNLEARN, DATA

ROOT = Path(__file__).resolve().parents[1]
NETWORKS = [BNLEARN / "alarm.bif", BNLEARN / "insurance.bif", DATA / "repository" / "child.bif.gz",
            BNLEARN / "asia.dsc"]
#: what a first read and query must not import (their own cost, or numba's start)
LATE = ("pybncsmooth", "numba", "scipy", "sklearn", "statsmodels", "matplotlib")

_SCRIPT = """
import json, sys
import pybncsmooth as bs
before = set(sys.modules)
net = bs.read_network(sys.argv[1])
answers = [net.query(t, ev).to_numpy().tolist() for t, ev in json.loads(sys.argv[2])]
joint = net.query(json.loads(sys.argv[3]), json.loads(sys.argv[2])[0][1])
new = sorted(set(sys.modules) - before)
print("RESULT", json.dumps({"before": sorted(before), "new": new, "answers": answers,
                            "joint": joint.to_numpy().tolist(), "index": [list(map(str, i)) for i in joint.index]}))
"""


def _queries(net, n: int = 6, n_evidence: int = 4) -> list:
    """``n`` queries: a target and ``n_evidence`` other nodes observed at one sampled
    row's values (never impossible), the nodes picked by a fixed rule."""
    rows = net.sample(n, random_state=3)
    nodes = list(net.nodes)
    out = []
    for i in range(n):
        picked = [nodes[(i * 7 + j * 5) % len(nodes)] for j in range(n_evidence + 1)]
        picked = list(dict.fromkeys(picked))
        out.append((picked[0], {v: str(rows.iloc[i][v]) for v in picked[1:]}))
    return out


def _fresh(path: Path, queries: list, joint: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", _SCRIPT, str(path), json.dumps(queries), json.dumps(joint)],
                         capture_output=True, text=True, env=env, check=True)
    line = next(x for x in out.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line[7:])


@pytest.mark.parametrize("path", NETWORKS, ids=[p.name for p in NETWORKS])
def test_a_fresh_process_reads_and_queries_without_importing(path):
    net = bs.read_network(path)
    queries = _queries(net)
    joint = list(net.nodes[:2])
    got = _fresh(path, queries, joint)
    assert {"numpy", "pandas", "pybncsmooth.interop", "pybncsmooth.model.query.queries"} <= set(got["before"])
    late = [m for m in got["new"] if m.split(".")[0] in LATE]
    assert not late, late
    # the same answers, bit for bit, as this process gives (where the kernels may be loaded)
    warm = [net.query(t, ev).to_numpy().tolist() for t, ev in queries]
    assert got["answers"] == warm
    j = net.query(joint, queries[0][1])
    assert got["joint"] == j.to_numpy().tolist()
    assert got["index"] == [list(map(str, i)) for i in j.index]


def test_the_check_can_fail():
    """A call that needs more than the package's import (here a fit: the fit pipeline)
    shows up in the same comparison."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    code = ("import json, sys\nimport pybncsmooth as bs\nbefore = set(sys.modules)\n"
            "bs.fit('[A][B|A]', bs.load_dataset('asia')[['A', 'B']], method='bayes', iss=1)\n"
            "print(json.dumps(sorted(set(sys.modules) - before)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    new = json.loads(out.stdout.splitlines()[-1])
    assert "pybncsmooth.pipeline" in new

"""Query speed: ``FittedNetwork.query`` beside pgmpy's ``VariableElimination.query``
and pyAgrum's ``LazyPropagation``, in one run, on the same BIF files.

Networks: alarm (37 nodes) and insurance (27 nodes), bnlearn's BIF files, and a random
200-node network (2-4 levels a node, up to 3 parents among the 12 nodes before it,
Dirichlet(1) tables; written to a BIF file that all three libraries read).  Queries:
50 random queries a network, each a random target and three random evidence variables
whose values come from one row sampled from the network (so no evidence is
impossible).

* **single**: the 50 queries one call each (ours: ``net.query(target, {..})``).
* **batch**: one target, 50 rows of evidence (three random variables observed a row,
  the others missing) -- ours one call ``net.query(target, frame)``, the others one
  query per row (neither has a batch API for posteriors).

Each is timed *cold* and *warm*.  Cold starts from a network object just read from
the file (reading not timed, for any library) and counts everything after it:
pgmpy's ``VariableElimination(model)``, pyAgrum's ``LazyPropagation(bn)``, and our
compilation of the dense tables (once per network) and of a plan per query pattern
(once per pattern; cached on the network).  Warm repeats the same calls on the same
objects (our tables and plans cached, pyAgrum's engine and junction tree reused,
pgmpy's engine reused).  Every figure is the best of ``--repeat`` runs (each cold run on a
new object read from the file).  "first" is the first query alone
on a freshly read network.  Before any timing each library answers a query on
another network (asia), so that imports and one-time initialisations of the process
count for no network.  The answers of all three are compared (largest absolute
difference printed).

pgmpy and pyAgrum are not dependencies of pybncsmooth; install them in a separate
environment::

    python3 -m venv .venv-bench --system-site-packages
    .venv-bench/bin/pip install pgmpy pyagrum
    PYTHONPATH=$PWD .venv-bench/bin/python benchmarks/bench_query.py

(``--system-site-packages`` lets the venv see NumPy/pandas and the package's other
dependencies; ``PYTHONPATH`` picks this checkout.)
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

import pybncsmooth as bs
from pybncsmooth.data.schema import Schema
from pybncsmooth.model.cpd import TableCPD

ROOT = Path(__file__).resolve().parents[1]
N_QUERIES = 50


def random_network(n_nodes: int = 200, window: int = 12, max_parents: int = 3, seed: int = 0) -> bs.FittedNetwork:
    """A random network: parents among the ``window`` nodes before each node."""
    rng = np.random.default_rng(seed)
    names = [f"V{i:03d}" for i in range(n_nodes)]
    cards = rng.integers(2, 5, n_nodes)
    parents: dict[str, list[str]] = {}
    for i, v in enumerate(names):
        pool = names[max(0, i - window) : i]
        k = int(rng.integers(0, min(max_parents, len(pool)) + 1))
        parents[v] = sorted(rng.choice(pool, k, replace=False).tolist()) if k else []
    schema = Schema({v: tuple(f"s{j}" for j in range(c)) for v, c in zip(names, cards)})
    cpds = {}
    for i, v in enumerate(names):
        pc = [int(cards[names.index(p)]) for p in parents[v]]
        t = rng.dirichlet(np.ones(cards[i]), size=int(np.prod(pc, dtype=int))).T.reshape(int(cards[i]), *pc)
        cpds[v] = TableCPD(v, parents[v], t)
    return bs.FittedNetwork(bs.DAG(parents, nodes=names), schema, cpds)


def make_queries(net: bs.FittedNetwork, seed: int) -> tuple[list, str, pd.DataFrame]:
    """50 random (target, evidence) queries, and one target with a frame of 50 rows."""
    rng = np.random.default_rng(seed)
    rows = net.sample(2 * N_QUERIES, random_state=seed)
    single = []
    for i in range(N_QUERIES):
        vs = rng.choice(net.nodes, 4, replace=False)
        single.append((str(vs[0]), {str(v): str(rows.iloc[i][v]) for v in vs[1:]}))
    target = str(rng.choice(net.nodes))
    others = [v for v in net.nodes if v != target]
    frame = pd.DataFrame({v: pd.Series([None] * N_QUERIES, dtype=object) for v in others})
    for i in range(N_QUERIES):
        for v in rng.choice(others, 3, replace=False):
            frame.at[i, v] = str(rows.iloc[N_QUERIES + i][v])
    return single, target, frame


# ---------------------------------------------------------------------------- the libraries
class Ours:
    name = "pybncsmooth"

    def __init__(self, path: str) -> None:
        self.path = path

    def fresh(self) -> Any:
        return bs.read_network(self.path)

    def setup(self, net: Any) -> Any:
        return net

    def single(self, eng: Any, target: str, ev: dict) -> np.ndarray:
        return eng.query(target, ev).to_numpy()

    def batch(self, eng: Any, target: str, frame: pd.DataFrame) -> np.ndarray:
        return eng.query(target, frame).to_numpy()


class Pgmpy:
    name = "pgmpy"

    def __init__(self, path: str) -> None:
        from pgmpy.readwrite import BIFReader

        self.path, self.reader = path, BIFReader

    def fresh(self) -> Any:
        return self.reader(self.path).get_model()

    def setup(self, model: Any) -> Any:
        from pgmpy.inference import VariableElimination

        return VariableElimination(model)

    def single(self, eng: Any, target: str, ev: dict) -> np.ndarray:
        f = eng.query([target], evidence=ev, show_progress=False)
        return f.values

    def batch(self, eng: Any, target: str, frame: pd.DataFrame) -> np.ndarray:
        out = []
        for _, row in frame.iterrows():
            ev = {k: v for k, v in row.items() if v is not None and v == v}
            out.append(eng.query([target], evidence=ev, show_progress=False).values)
        return np.array(out)


class PyAgrum:
    name = "pyAgrum"

    def __init__(self, path: str) -> None:
        import pyagrum as gum

        self.path, self.gum = path, gum

    def fresh(self) -> Any:
        return self.gum.loadBN(self.path)

    def setup(self, bn: Any) -> Any:
        return self.gum.LazyPropagation(bn)

    def single(self, eng: Any, target: str, ev: dict) -> np.ndarray:
        eng.eraseAllEvidence()
        eng.setEvidence(ev)
        eng.makeInference()
        return eng.posterior(target).toarray()

    def batch(self, eng: Any, target: str, frame: pd.DataFrame) -> np.ndarray:
        out = []
        for _, row in frame.iterrows():
            out.append(self.single(eng, target, {k: v for k, v in row.items() if v is not None and v == v}))
        return np.array(out)


# ---------------------------------------------------------------------------- timing
def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def measure(lib: Any, single: list, target: str, frame: pd.DataFrame, repeat: int) -> dict[str, Any]:
    """Cold and warm seconds of the 50 single queries and of the batch (each the best of
    ``repeat`` runs; a cold run on a freshly read object), and the answers."""
    res: dict[str, Any] = {}

    def run_single(eng: Any) -> list:
        return [lib.single(eng, t, ev) for t, ev in single]

    def cold(work: Callable[[Any], Any]) -> tuple[float, Any, Any]:
        best, out, eng = np.inf, None, None
        for _ in range(repeat):
            obj = lib.fresh()
            t0 = time.perf_counter()
            eng = lib.setup(obj)
            out = work(eng)
            best = min(best, time.perf_counter() - t0)
        return best, eng, out

    res["first"], _, _ = cold(lambda e: lib.single(e, *single[0]))
    res["single_cold"], eng, res["single_answers"] = cold(run_single)
    res["single_warm"] = min(_timed(lambda: run_single(eng))[0] for _ in range(repeat))
    res["batch_cold"], eng, res["batch_answers"] = cold(lambda e: lib.batch(e, target, frame))
    res["batch_warm"] = min(_timed(lambda: lib.batch(eng, target, frame))[0] for _ in range(repeat))
    return res


def max_diff(a: dict, b: dict) -> float:
    d = max(float(np.max(np.abs(np.ravel(x) - np.ravel(y)))) for x, y in zip(a["single_answers"], b["single_answers"]))
    return max(d, float(np.max(np.abs(np.asarray(a["batch_answers"]) - np.asarray(b["batch_answers"])))))


def warm_up(path: str) -> None:
    """One query by each library on another network: imports and one-time
    initialisations of the process are not any network's cold cost."""
    for lib in (Ours(path), Pgmpy(path), PyAgrum(path)):
        obj = lib.fresh()
        lib.single(lib.setup(obj), "L", {"S": "yes"})
        lib.batch(lib.setup(obj), "L", pd.DataFrame({"S": ["yes", None], "X": [None, "no"]}))


def run_network(name: str, path: str, repeat: int, seed: int) -> None:
    net = bs.read_network(path)
    single, target, frame = make_queries(net, seed)
    libs = [Ours(path), Pgmpy(path), PyAgrum(path)]
    results = {lib.name: measure(lib, single, target, frame, repeat) for lib in libs}
    ours = results["pybncsmooth"]
    print(f"\n{name}: {len(net.nodes)} nodes, {N_QUERIES} queries (3 evidence variables each)")
    print(f"{'':14s}{'first (ms)':>11s}{'single cold':>13s}{'single warm':>13s}{'batch cold':>12s}{'batch warm':>12s}"
          f"{'max |diff|':>12s}")
    for lib in libs:
        r = results[lib.name]
        diff = "" if lib.name == "pybncsmooth" else f"{max_diff(ours, r):12.1e}"
        print(f"{lib.name:14s}{1e3 * r['first']:11.2f}{r['single_cold']:12.4f}s{r['single_warm']:12.4f}s"
              f"{r['batch_cold']:11.4f}s{r['batch_warm']:11.4f}s{diff}")
    for lib in libs[1:]:
        r = results[lib.name]
        ratios = [r[k] / ours[k] for k in ("first", "single_cold", "single_warm", "batch_cold", "batch_warm")]
        print(f"{'x ' + lib.name + ' / ours':14s}" + "".join(f"{x:12.1f}x" for x in ratios))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="warm runs (best of)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--networks", nargs="+", default=["alarm", "insurance", "random200"])
    args = ap.parse_args()
    logging.getLogger("pgmpy").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    data = ROOT / "tests" / "data" / "bnlearn"
    warm_up(str(data / "asia.bif"))
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.networks:
            if name == "random200":
                path = str(Path(tmp) / "random200.bif")
                random_network().write(path)
            else:
                path = str(data / f"{name}.bif")
            run_network(name, path, args.repeat, args.seed)


if __name__ == "__main__":
    main()

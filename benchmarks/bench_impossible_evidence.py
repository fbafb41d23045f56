"""What finding evidence of probability zero costs: queries and ``predict_proba`` on a
network whose tables have zeros, with the check and with it switched off, in one run.

A query leaves out the factors its evidence d-separates from the targets; where a table
has a zero, :mod:`pybncsmooth.model.query.zeros` checks the parts left out (so that
impossible evidence is refused whatever the target).  Networks without zeros (every
Bayesian estimate, bnlearn's alarm and insurance BIF files) pay one cached flag; this
prints what a network with zeros pays: alarm fitted by maximum likelihood on 2,000
rows (20 of its 37 tables have zeros), 50 queries of a random target given three
random variables at their first level, and ``predict_proba`` of one node on 500 rows.
"Off" replaces the check by "no zero anywhere" (the answers are then those of a query
that cannot see a zero it leaves out).  Best of ``--repeat`` runs, seconds::

    python benchmarks/bench_impossible_evidence.py
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import pybncsmooth as bs
import pybncsmooth.model._network_rows as rows_module
import pybncsmooth.model.query.zeros as zeros_module

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "bnlearn"


def _best(fn, repeat: int) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _setup(seed: int):
    data = pd.read_csv(DATA / "alarm.csv.gz", dtype=str)
    net = bs.fit((DATA / "alarm.modelstring.txt").read_text().strip(), data.iloc[:2000], "mle")
    rng = np.random.default_rng(seed)
    queries = []
    for _ in range(50):
        chosen = rng.choice(net.nodes, 4, replace=False)
        queries.append((chosen[0], {v: net.levels(v)[0] for v in chosen[1:]}))
    target = net.nodes[5]
    return net, queries, data.iloc[2000:2500].drop(columns=[target]), target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    net, queries, rows, target = _setup(args.seed)

    def run_queries() -> int:
        refused = 0
        for t, ev in queries:
            try:
                net.query(t, ev)
            except bs.errors.ImpossibleEvidenceError:
                refused += 1
        return refused

    print(f"alarm by mle: {len(zeros_module.zero_nodes(net))} of {len(net.nodes)} tables have zeros")
    print(f"seconds, warm: best of {args.repeat} runs of each in one process")
    print(f"{'check':<6} {'50 queries':>11} {'refused':>8} {'predict_proba 500 rows':>23}")
    figures = {}
    real = zeros_module.has_zeros
    for label in ("on", "off"):
        if label == "off":
            zeros_module.has_zeros = rows_module.has_zeros = lambda net: False
        for key in ("_query_zero_masks", "_query_zero_parts"):
            net.__dict__.pop(key, None)
        tq, refused = _best(run_queries, args.repeat)
        tp, _ = _best(lambda: net.predict_proba(rows, target), args.repeat)
        figures[label] = (tq, tp)
        print(f"{label:<6} {tq:>11.4f} {refused:>8} {tp:>23.4f}")
    zeros_module.has_zeros = rows_module.has_zeros = real
    on, off = figures["on"], figures["off"]
    print(f"cost of the check: queries {on[0] / off[0]:.1f}x, predict_proba {on[1] / off[1]:.1f}x")


if __name__ == "__main__":
    main()

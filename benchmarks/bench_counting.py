"""Counting + bayes on alarm (20000 rows, 37 nodes, the true DAG).

Prints rows/s of our fit and the ratios, measured in this one run, to

* a naive pandas version of the same counts (``DataFrame.groupby(...).size()`` per
  node, then the BDeu formula on the resulting table), and
* bnlearn's ``bn.fit(alarm_dag, alarm, method = "bayes", iss = 1)``: 0.015 s elapsed
  (0.010 s CPU), recorded in ``tests/data/bnlearn/bnlearn_run_info.json`` on this
  workplace's 2-core machine (R is not timed here: bnlearn cannot be installed).

Run: ``python benchmarks/bench_counting.py`` (``--repeat N`` for more timing runs).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import pybncsmooth as bs
from pybncsmooth.counting import count_network
from pybncsmooth.data import encode
from pybncsmooth.estimators import Bayes

from _timing import best_time  # benchmarks/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "tests" / "data" / "bnlearn"


def load_alarm() -> tuple[pd.DataFrame, bs.DAG]:
    levels = json.loads((REF / "alarm.levels.json").read_text())
    df = pd.read_csv(REF / "alarm.csv.gz", dtype=str, keep_default_na=False, na_values=[""])
    for c in levels["columns"]:
        df[c] = pd.Categorical(df[c], categories=levels["levels"][c])
    dag = bs.DAG.from_modelstring((REF / "alarm.modelstring.txt").read_text().strip())
    return df, dag


def naive_bayes_fit(df: pd.DataFrame, dag: bs.DAG, iss: float = 1.0) -> dict[str, np.ndarray]:
    """The same BDeu tables from pandas groupby counts (the naive baseline)."""
    out = {}
    for node in dag.nodes:
        pa = dag.parents(node)
        r = len(df[node].cat.categories)
        q = int(np.prod([len(df[p].cat.categories) for p in pa])) if pa else 1
        counts = df.groupby([node] + pa, observed=False).size()
        t = counts.to_numpy(dtype=float).reshape([r] + [len(df[p].cat.categories) for p in pa])
        a = iss / (r * q)
        out[node] = (t + a) / (t.sum(axis=0, keepdims=True) + r * a)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)

    df, dag = load_alarm()
    info = json.loads((REF / "bnlearn_run_info.json").read_text())
    bn_elapsed = info["timings_s"]["alarm_bayes"]
    bn_cpu = info["cpu_timings_s"]["alarm_bayes"]
    n = len(df)

    enc = encode(df, variables=dag.nodes)
    est = Bayes(iss=1)

    def ours_full():
        return bs.fit(dag, df, method="bayes", iss=1)

    def ours_counting_and_bayes():
        trees = count_network(enc, dag)
        return {k: est.estimate(t) for k, t in trees.items()}

    def naive():
        return naive_bayes_fit(df, dag)

    # the two compute the same tables
    net = ours_full()
    ref = naive()
    worst = max(float(np.max(np.abs(net.cpt(k) - ref[k]))) for k in dag.nodes)
    assert worst < 1e-12, worst

    t_full = best_time(ours_full, args.repeat)
    t_core = best_time(ours_counting_and_bayes, args.repeat)
    t_naive = best_time(naive, max(3, args.repeat // 4))

    print(f"alarm: {n} rows x {len(dag)} nodes, {len(dag.arcs)} arcs; bayes iss=1; best of {args.repeat} runs")
    print(f"{'':44s}{'seconds':>10s}{'rows/s':>14s}")
    print(f"{'pybncsmooth fit() (encode + count + bayes)':44s}{t_full:10.4f}{n / t_full:14,.0f}")
    print(f"{'pybncsmooth count + bayes (pre-encoded)':44s}{t_core:10.4f}{n / t_core:14,.0f}")
    print(f"{'naive pandas groupby + bayes':44s}{t_naive:10.4f}{n / t_naive:14,.0f}")
    label = 'bnlearn bn.fit(method = "bayes") (recorded)'
    print(f"{label:44s}{bn_elapsed:10.4f}{n / bn_elapsed:14,.0f}")
    print()
    print(f"speed-up of fit() over the naive groupby version:      {t_naive / t_full:6.1f}x")
    print(f"speed-up of fit() over bnlearn (elapsed 0.015 s):       {bn_elapsed / t_full:6.2f}x")
    print(f"speed-up of fit() over bnlearn (CPU {bn_cpu} s):          {bn_cpu / t_full:6.2f}x")
    print(f"max |difference| between our tables and the naive ones: {worst:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

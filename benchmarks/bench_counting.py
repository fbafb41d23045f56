"""Counting + bayes: alarm (20000 rows, 37 nodes, the true DAG) and wide random networks.

Prints rows/s of our fit on alarm and the ratios, measured in this one run, to

* a naive pandas version of the same counts (``DataFrame.groupby(...).size()`` per
  node, then the BDeu formula on the resulting table), and
* bnlearn's ``bn.fit(dag, data, method = "bayes", iss = 1)``: timed side by side when R
  and bnlearn are installed (the data handed over as a CSV file, read before timing),
  else the figure recorded in ``tests/data/bnlearn/bnlearn_run_info.json`` (0.015 s
  elapsed on another 2-core machine, labelled as recorded).

Then wide networks (``--wide 1000 10000``): a random DAG of three-level nodes with up to
three parents each and 20,000 rows sampled from random CPTs, fitted from a data frame in
memory; bnlearn side by side for networks of up to ``--bnlearn-max`` nodes (default
1000: larger ones take minutes to hand over as CSV).  Each wide fit runs in a process of
its own and reports its peak memory (the data frame included).

Run: ``python benchmarks/bench_counting.py`` (``--repeat N`` for more timing runs).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
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


def random_network(n_nodes: int, n_rows: int, seed: int = 0) -> tuple[pd.DataFrame, bs.DAG]:
    """A random DAG of three-level nodes (each with 0-3 parents among the earlier nodes)
    and ``n_rows`` rows sampled forward from random CPTs (Dirichlet(1, 1, 1) columns)."""
    rng = np.random.default_rng(seed)
    names = [f"V{i}" for i in range(n_nodes)]
    parents, cols = {}, {}
    for i, v in enumerate(names):
        k = min(i, int(rng.integers(0, 4)))
        pa = sorted(rng.choice(i, size=k, replace=False).tolist()) if k else []
        parents[v] = [names[j] for j in pa]
        if pa:  # codes kept as int8: the generator holds no more than the frame will
            key = sum(cols[names[j]].astype(np.int64) * 3**t for t, j in enumerate(pa))
            cum = np.cumsum(rng.dirichlet(np.ones(3), size=3 ** len(pa)), axis=1)
            cols[v] = np.minimum((rng.random(n_rows)[:, None] > cum[key]).sum(axis=1), 2).astype(np.int8)
        else:
            cols[v] = rng.integers(0, 3, n_rows, dtype=np.int8)
    df = pd.DataFrame({v: pd.Categorical.from_codes(cols[v], categories=["a", "b", "c"]) for v in names})
    return df, bs.DAG(parents, nodes=names)


_R_FIT = """
suppressMessages(library(bnlearn))
a <- commandArgs(TRUE)
df <- read.csv(a[1], colClasses = "factor")
dag <- model2network(readLines(a[2], warn = FALSE))
df <- df[, nodes(dag)]
invisible(bn.fit(dag, df[1:100, ], method = "bayes", iss = 1))
t <- replicate(as.integer(a[3]), system.time(bn.fit(dag, df, method = "bayes", iss = 1))[["elapsed"]])
cat(min(t), "\n")
"""


def bnlearn_available() -> bool:
    if shutil.which("Rscript") is None:
        return False
    ok = subprocess.run(["Rscript", "-e", "quit(status = !requireNamespace('bnlearn', quietly = TRUE))"],
                        capture_output=True)  # fmt: skip
    return ok.returncode == 0


def time_bnlearn(df: pd.DataFrame, dag: bs.DAG, repeat: int) -> float:
    """bnlearn's bn.fit(bayes, iss = 1) on the same data and DAG: best of ``repeat``."""
    with tempfile.TemporaryDirectory() as tmp:
        csv, ms, script = Path(tmp) / "d.csv", Path(tmp) / "dag.txt", Path(tmp) / "fit.R"
        df.to_csv(csv, index=False)
        ms.write_text(dag.modelstring())
        script.write_text(_R_FIT)
        out = subprocess.run(["Rscript", str(script), str(csv), str(ms), str(repeat)],
                             capture_output=True, text=True, check=True)  # fmt: skip
    return float(out.stdout.split()[-1])


def _wide_child(n_nodes: int, n_rows: int, repeat: int) -> None:
    """In a process of its own: our best fit time and the process's peak memory."""
    df, dag = random_network(n_nodes, n_rows)
    bs.fit(dag, df.iloc[:100], method="bayes", iss=1)  # compile / warm up
    t = best_time(lambda: bs.fit(dag, df, method="bayes", iss=1), repeat, label="bayes fit")
    print(t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def wide(sizes: list[int], n_rows: int, repeat: int, bnlearn_max: int) -> None:
    have_bn = bnlearn_available()
    print(f"\nwide random networks, {n_rows} rows, bayes iss=1 (a data frame in memory; warm: best of "
          f"{repeat} after a warm-up fit, a process per size)")
    print(f"{'nodes':>8s}{'ours s':>10s}{'peak MB':>10s}{'bnlearn s':>11s}{'bnlearn/ours':>14s}")
    for n in sizes:
        out = subprocess.run([sys.executable, __file__, "--_wide-child", str(n), str(n_rows), str(repeat)],
                             capture_output=True, text=True, check=True)  # fmt: skip
        t, peak = (float(v) for v in out.stdout.split()[-2:])
        if have_bn and n <= bnlearn_max:
            tb = time_bnlearn(*random_network(n, n_rows), repeat=min(repeat, 3))
            print(f"{n:8d}{t:10.3f}{peak:10.0f}{tb:11.3f}{tb / t:14.2f}")
        else:
            why = "no bnlearn" if not have_bn else "not timed"
            print(f"{n:8d}{t:10.3f}{peak:10.0f}{why:>11s}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--wide", type=int, nargs="*", default=[1000, 10000], help="node counts of the wide networks")
    ap.add_argument("--wide-rows", type=int, default=20000)
    ap.add_argument("--bnlearn-max", type=int, default=1000, help="time bnlearn on networks up to this size")
    ap.add_argument("--_wide-child", type=int, nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._wide_child:
        _wide_child(*args._wide_child)
        return 0

    df, dag = load_alarm()
    info = json.loads((REF / "bnlearn_run_info.json").read_text())
    bn_elapsed = info["timings_s"]["alarm_bayes"]
    bn_cpu = info["cpu_timings_s"]["alarm_bayes"]
    bn_label = 'bnlearn bn.fit(method = "bayes") (recorded)'
    if bnlearn_available():
        bn_elapsed, bn_cpu = time_bnlearn(df, dag, repeat=max(3, args.repeat // 4)), None
        bn_label = 'bnlearn bn.fit(method = "bayes") (this run)'
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

    t_full = best_time(ours_full, args.repeat, label="ours, whole fit")
    t_core = best_time(ours_counting_and_bayes, args.repeat, label="ours, counting and bayes")
    t_naive = best_time(naive, max(3, args.repeat // 4))

    print(f"alarm: {n} rows x {len(dag)} nodes, {len(dag.arcs)} arcs; bayes iss=1; warm: best of {args.repeat} runs "
          "after a warm-up call, in one process")
    print(f"{'':44s}{'seconds':>10s}{'rows/s':>14s}")
    print(f"{'pybncsmooth fit() (encode + count + bayes)':44s}{t_full:10.4f}{n / t_full:14,.0f}")
    print(f"{'pybncsmooth count + bayes (pre-encoded)':44s}{t_core:10.4f}{n / t_core:14,.0f}")
    print(f"{'naive pandas groupby + bayes':44s}{t_naive:10.4f}{n / t_naive:14,.0f}")
    print(f"{bn_label:44s}{bn_elapsed:10.4f}{n / bn_elapsed:14,.0f}")
    print()
    print(f"speed-up of fit() over the naive groupby version:      {t_naive / t_full:6.1f}x")
    print(f"speed-up of fit() over bnlearn (elapsed {bn_elapsed:.3f} s):       {bn_elapsed / t_full:6.2f}x")
    if bn_cpu is not None:
        print(f"speed-up of fit() over bnlearn (CPU {bn_cpu} s, recorded):  {bn_cpu / t_full:6.2f}x")
    print(f"max |difference| between our tables and the naive ones: {worst:.1e}")
    if args.wide:
        wide(args.wide, args.wide_rows, min(args.repeat, 5), args.bnlearn_max)
    return 0


if __name__ == "__main__":
    sys.exit(main())

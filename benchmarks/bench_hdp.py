"""HDP sampler speed against the authors' Java implementation.

For the four data sets of ``tests/data/hdp/table3`` (child X, parents P1..P4 of
cardinality 2 or 5, 1000 or 100000 rows) the sampler runs 5000 sweeps (level
tying, the Java defaults) and the script prints our time next to the Java time
recorded in ``tests/data/hdp/README.md`` (inside the JVM after warm-up, best of
repeats, one core), the ratio per iteration, and the mean absolute difference of
the CPT entries from the Java estimates at the same number of iterations.

Our time excludes the one-off compilation of the numba kernels (a warm-up run
first) and the one-off growth of the shared Stirling-number table, which is
reported separately.  A last line times a whole network (alarm, 37 CPTs) with one
and with two threads.

Run: ``python benchmarks/bench_hdp.py`` (``--repeat N`` timing runs, best kept).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import pybncsmooth as bs
from pybncsmooth.counting import count_tree
from pybncsmooth.estimators import HDP
from pybncsmooth.estimators._stirling import SHARED_RATIOS

ROOT = Path(__file__).resolve().parents[1]
HDPDATA = ROOT / "tests" / "data" / "hdp"
# seconds for 5000 iterations, from the reference README
JAVA_SECONDS = {(2, 1000): 0.245, (5, 1000): 1.89, (2, 100000): 1.48, (5, 100000): 15.8}


def load(card: int, n: int) -> pd.DataFrame:
    suffix = ".gz" if n == 100000 else ""
    return pd.read_csv(HDPDATA / "table3" / f"table3_card{card}_n{n}.csv{suffix}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=5000)
    args = ap.parse_args(argv)
    its = args.iterations

    SHARED_RATIOS.ensure(8)  # loads the compiled builders
    t0 = time.perf_counter()
    SHARED_RATIOS.ensure(4096)
    t_table = time.perf_counter() - t0

    print(f"HDP, {its} sweeps, level tying; times in seconds (ours: best of {args.repeat})")
    print(
        f"{'data set':18s}{'tree nodes':>11s}{'ours':>9s}{'Java':>9s}{'speed-up':>10s}{'us/sweep':>10s}"
        f"{'MAD vs Java':>13s}"
    )
    for (card, n), java_s in JAVA_SECONDS.items():
        df = load(card, n)
        parents = ["P1", "P2", "P3", "P4"]
        tree = count_tree("X", parents, df["X"].to_numpy(), [df[p].to_numpy() for p in parents], card, [card] * 4)
        est = HDP(iterations=its, random_state=1, n_jobs=1, progress=False)
        est.estimate(tree)  # warm-up (loads the compiled kernels)
        best = np.inf
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            estimate = est.estimate(tree)
            best = min(best, time.perf_counter() - t0)
        leaves = estimate.probs[-1]
        configs = tree.node_configs(4)
        code = ((configs[:, 0] * card + configs[:, 1]) * card + configs[:, 2]) * card + configs[:, 3]
        ref = pd.read_csv(HDPDATA / f"java_hdp_5000it_card{card}_n{n}.csv")[[f"p{k}" for k in range(card)]]
        mad = float(np.abs(leaves - ref.to_numpy()[code]).mean()) if its == 5000 else float("nan")
        java_scaled = java_s * its / 5000
        print(
            f"card{card}_n{n:<11d}{tree.n_nodes:>11d}{best:>9.3f}{java_scaled:>9.3f}{java_scaled / best:>9.1f}x"
            f"{best / its * 1e6:>10.1f}{mad:>13.5f}"
        )
    print(f"(one-off: the exact Stirling ratio tables up to n = 4096 take {t_table:.3f} s to build, once per process)")

    # a whole network: CPTs in parallel threads
    ref = ROOT / "tests" / "data" / "bnlearn"
    levels = json.loads((ref / "alarm.levels.json").read_text())
    alarm = pd.read_csv(ref / "alarm.csv.gz", dtype=str)
    for c in levels["columns"]:
        alarm[c] = pd.Categorical(alarm[c], categories=levels["levels"][c])
    ms = (ref / "alarm.modelstring.txt").read_text().strip()
    times = {}
    for jobs in (1, 2):
        bs.fit(ms, alarm, method="hdp", iterations=200, random_state=0, n_jobs=jobs, progress=False)
        t0 = time.perf_counter()
        bs.fit(ms, alarm, method="hdp", iterations=1000, random_state=0, n_jobs=jobs, progress=False)
        times[jobs] = time.perf_counter() - t0
    print(
        f"alarm (37 CPTs, 20000 rows), 1000 sweeps each: {times[1]:.2f} s on 1 thread, {times[2]:.2f} s on 2 "
        f"threads ({times[1] / times[2]:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

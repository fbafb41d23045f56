"""Structure searches side by side with bnlearn: ``bs.hc`` / ``bs.tabu`` against
bnlearn's ``hc()`` / ``tabu()`` with BDeu (iss 1) on the first 10,000 rows of bnlearn's
alarm, insurance and hailfinder data sets.

Every timing is a fresh process (Python: ``import pybncsmooth`` and reading the data
not counted; R: ``library(bnlearn)`` and reading the data not counted) timing its first
call (numba's start-up and loading the cached kernels included) and then a second,
warm call; the two programs alternate for ``--rounds`` rounds and the table shows each
one's median and the ratio bnlearn / ours (above 1: ours faster).  Both also print the
final BDeu score, which must agree.

    python benchmarks/bench_structure.py                 # hc, three networks, 3 rounds
    python benchmarks/bench_structure.py --algo tabu --rounds 5 --networks alarm
    python benchmarks/bench_structure.py --bhd     # hc-BHD against our hc-BDeu, alarm 5 x 1,000 rows

``--bhd`` times hc with the BHD score on the first 5,000 rows of alarm split into 5
domains of 1,000 rows against hc with BDeu on the same rows (pooled): each in a fresh
process, first call and warm call, the two alternating, and prints the ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PY = r"""
import json, sys, time
import pandas as pd
import pybncsmooth as bs
name, algo, root = sys.argv[1], sys.argv[2], sys.argv[3]
if name == "hailfinder":
    lv = json.load(open(f"{root}/tests/data/structure/hailfinder.levels.json"))
    c = pd.read_csv(f"{root}/tests/data/structure/hailfinder.codes.csv.gz")
    df = pd.DataFrame({v: pd.Categorical.from_codes(c[v].to_numpy(), categories=lv["levels"][v]) for v in lv["columns"]})
else:
    lv = json.load(open(f"{root}/tests/data/bnlearn/{name}.levels.json"))
    df = pd.read_csv(f"{root}/tests/data/bnlearn/{name}.csv.gz", dtype=str, nrows=10000, keep_default_na=False)
    df = pd.DataFrame({v: pd.Categorical(df[v], categories=lv["levels"][v]) for v in lv["columns"]})
fn = bs.hc if algo == "hc" else bs.tabu
t0 = time.perf_counter(); dag = fn(df, "bde", iss=1, progress=False); t1 = time.perf_counter()
fn(df, "bde", iss=1, progress=False); t2 = time.perf_counter()
print(json.dumps({"first": t1 - t0, "warm": t2 - t1, "score": bs.score(dag, df, "bde", iss=1)}))
"""

R = r"""
suppressPackageStartupMessages(library(bnlearn))
args = commandArgs(TRUE); name = args[1]; algo = args[2]; root = args[3]
if (name == "hailfinder") { data(hailfinder); d = hailfinder[1:10000, ] } else {
  lv = jsonlite::fromJSON(file.path(root, "tests/data/bnlearn", paste0(name, ".levels.json")))
  d = read.csv(gzfile(file.path(root, "tests/data/bnlearn", paste0(name, ".csv.gz"))), colClasses = "character",
               nrows = 10000)
  for (v in lv$columns) d[[v]] = factor(d[[v]], levels = lv$levels[[v]])
  d = d[, lv$columns]
}
fn = if (algo == "hc") hc else tabu
t0 = proc.time()[["elapsed"]]; g = fn(d, score = "bde", iss = 1); t1 = proc.time()[["elapsed"]]
fn(d, score = "bde", iss = 1); t2 = proc.time()[["elapsed"]]
cat(sprintf('{"first": %.6f, "warm": %.6f, "score": %.10f}\n', t1 - t0, t2 - t1, score(g, d, type = "bde", iss = 1)))
"""


def _run(cmd: list[str]) -> dict:
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


PY_BHD = r"""
import json, sys, time
import numpy as np
import pandas as pd
import pybncsmooth as bs
score, root = sys.argv[1], sys.argv[2]
lv = json.load(open(f"{root}/tests/data/bnlearn/alarm.levels.json"))
raw = pd.read_csv(f"{root}/tests/data/bnlearn/alarm.csv.gz", dtype=str, nrows=5000, keep_default_na=False)
df = pd.DataFrame({v: pd.Categorical(raw[v], categories=lv["levels"][v]) for v in lv["columns"]})
hyper = {"iss": 1}
if score == "bhd":
    df["site"] = pd.Categorical(np.arange(len(df)) // 1000)
    hyper = {"domain": "site"}
t0 = time.perf_counter(); dag = bs.hc(df, score, progress=False, **hyper); t1 = time.perf_counter()
bs.hc(df, score, progress=False, **hyper); t2 = time.perf_counter()
print(json.dumps({"first": t1 - t0, "warm": t2 - t1, "arcs": len(dag.arcs)}))
"""


def _bhd_ratio(rounds: int) -> None:
    """hc-BHD on alarm's first 5,000 rows as 5 domains of 1,000 rows against hc-BDeu on
    the same rows pooled: fresh processes, alternating, first call and warm call."""
    bde, bhd = [], []
    for _ in range(rounds):
        bde.append(_run([sys.executable, "-c", PY_BHD, "bde", str(ROOT)]))
        bhd.append(_run([sys.executable, "-c", PY_BHD, "bhd", str(ROOT)]))
    print(f"alarm, 5 domains x 1,000 rows; medians of {rounds} alternating fresh-process rounds")
    print(f"{'':<6} {'hc-BDeu':>8} {'hc-BHD':>8} {'ratio':>6}")
    for k in ("first", "warm"):
        a, b = statistics.median(o[k] for o in bde), statistics.median(o[k] for o in bhd)
        print(f"{k:<6} {a:>7.2f}s {b:>7.2f}s {b / a:>5.1f}x", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--algo", choices=("hc", "tabu"), default="hc")
    ap.add_argument("--networks", default="alarm,insurance,hailfinder")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bhd", action="store_true", help="hc-BHD against hc-BDeu instead")
    args = ap.parse_args()
    if args.bhd:
        _bhd_ratio(args.rounds)
        return
    print(f"{args.algo} with BDeu (iss 1), 10,000 rows; medians of {args.rounds} alternating fresh-process rounds")
    print(f"{'network':<11} {'ours first':>10} {'bnlearn first':>13} {'ratio':>6} {'ours warm':>9} "
          f"{'bnlearn warm':>12} {'ratio':>6}  score ours / bnlearn")
    for name in args.networks.split(","):
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(_run([sys.executable, "-c", PY, name, args.algo, str(ROOT)]))
            theirs.append(_run(["Rscript", "-e", R, name, args.algo, str(ROOT)]))
        med = {k: (statistics.median(o[k] for o in ours), statistics.median(t[k] for t in theirs))
               for k in ("first", "warm")}
        print(f"{name:<11} {med['first'][0]:>9.3f}s {med['first'][1]:>12.3f}s {med['first'][1] / med['first'][0]:>6.2f} "
              f"{med['warm'][0]:>8.3f}s {med['warm'][1]:>11.3f}s {med['warm'][1] / med['warm'][0]:>6.2f}  "
              f"{ours[0]['score']:.6f} / {theirs[0]['score']:.6f}", flush=True)


if __name__ == "__main__":
    main()

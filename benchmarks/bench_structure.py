"""Structure searches side by side with bnlearn and pgmpy: ``bs.hc`` / ``bs.tabu``
against bnlearn's ``hc()`` / ``tabu()`` with BDeu (iss 1) on the first 10,000 rows of
bnlearn's alarm, insurance and hailfinder data sets, and against pgmpy's
``HillClimbSearch`` with its BDeu score (hc only; alarm by default).

Every timing is a fresh process (Python: ``import pybncsmooth`` and reading the data
not counted; R: ``library(bnlearn)`` and reading the data not counted; pgmpy: its
import and reading the data not counted) timing its first call ("cold": numba's
start, or the NumPy twins a process uses before it, included) and then a second call
in the same process ("warm"); the programs alternate for ``--rounds`` rounds and the
table shows each one's median and the ratios bnlearn / ours and pgmpy / ours (above 1:
ours faster).  Ours also times a third call with the compiled kernels loaded
("compiled": the speed of a process that has run many searches).  Each prints the
BDeu score of its network: ours and bnlearn's must agree (pgmpy's search differs:
no tolerance on ties, a tabu list of its last moves, so its network and score do).

    python benchmarks/bench_structure.py                 # hc, three networks, 3 rounds, pgmpy on alarm
    python benchmarks/bench_structure.py --algo tabu --rounds 5 --networks alarm
    python benchmarks/bench_structure.py --pgmpy-python /path/to/venv/bin/python --pgmpy-networks alarm,insurance
    python benchmarks/bench_structure.py --bhd     # hc-BHD against our hc-BDeu, alarm 5 x 1,000 rows

pgmpy runs in ``--pgmpy-python`` (default: this Python) when pgmpy imports there, else
its columns are left out; ``--pgmpy-networks none`` leaves them out (a pgmpy search
on alarm takes a minute or more).

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
from pybncsmooth._jit import numba_module
numba_module(); fn(df.iloc[:500], "bde", iss=1, progress=False)  # the compiled kernels loaded
t3 = time.perf_counter(); again = fn(df, "bde", iss=1, progress=False); t4 = time.perf_counter()
assert again.modelstring() == dag.modelstring()
print(json.dumps({"first": t1 - t0, "warm": t2 - t1, "compiled": t4 - t3, "score": bs.score(dag, df, "bde", iss=1)}))
"""

PGMPY = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
import pandas as pd
name, root = sys.argv[1], sys.argv[2]
if name == "hailfinder":
    lv = json.load(open(f"{root}/tests/data/structure/hailfinder.levels.json"))
    c = pd.read_csv(f"{root}/tests/data/structure/hailfinder.codes.csv.gz")
    df = pd.DataFrame({v: pd.Categorical.from_codes(c[v].to_numpy(), categories=lv["levels"][v]) for v in lv["columns"]})
else:
    lv = json.load(open(f"{root}/tests/data/bnlearn/{name}.levels.json"))
    df = pd.read_csv(f"{root}/tests/data/bnlearn/{name}.csv.gz", dtype=str, nrows=10000, keep_default_na=False)
    df = pd.DataFrame({v: pd.Categorical(df[v], categories=lv["levels"][v]) for v in lv["columns"]})
from pgmpy.estimators import BDeu, HillClimbSearch
def run():
    return HillClimbSearch(df).estimate(scoring_method=BDeu(df, equivalent_sample_size=1), show_progress=False)
t0 = time.perf_counter(); dag = run(); t1 = time.perf_counter()
run(); t2 = time.perf_counter()
print(json.dumps({"first": t1 - t0, "warm": t2 - t1, "score": BDeu(df, equivalent_sample_size=1).score(dag)}))
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


def _has_pgmpy(python: str) -> bool:
    return subprocess.run([python, "-c", "import pgmpy"], capture_output=True).returncode == 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--algo", choices=("hc", "tabu"), default="hc")
    ap.add_argument("--networks", default="alarm,insurance,hailfinder")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pgmpy-python", default=sys.executable, help="a Python with pgmpy (default: this one)")
    ap.add_argument("--pgmpy-networks", default="alarm", help="networks to time pgmpy on (hc only; 'none': no pgmpy)")
    ap.add_argument("--bhd", action="store_true", help="hc-BHD against hc-BDeu instead")
    args = ap.parse_args()
    if args.bhd:
        _bhd_ratio(args.rounds)
        return
    with_pgmpy = set(args.pgmpy_networks.split(",")) - {"none"} if args.algo == "hc" else set()
    if with_pgmpy and not _has_pgmpy(args.pgmpy_python):
        print(f"(pgmpy does not import in {args.pgmpy_python}: its columns are left out)")
        with_pgmpy = set()
    print(f"{args.algo} with BDeu (iss 1), 10,000 rows; medians of {args.rounds} alternating fresh-process rounds "
          "(pgmpy: one round); ratios: the other's time / ours")
    print(f"{'network':<11} {'':<6} {'ours':>8} {'bnlearn':>8} {'ratio':>6} {'pgmpy':>8} {'ratio':>6}")
    for name in args.networks.split(","):
        ours, theirs, pg = [], [], []
        for k in range(args.rounds):
            ours.append(_run([sys.executable, "-c", PY, name, args.algo, str(ROOT)]))
            theirs.append(_run(["Rscript", "-e", R, name, args.algo, str(ROOT)]))
            if name in with_pgmpy and k == 0:
                pg.append(_run([args.pgmpy_python, "-c", PGMPY, name, str(ROOT)]))
        for key in ("first", "warm", "compiled"):
            o = statistics.median(x[key] for x in ours)
            label = {"first": "cold", "warm": "warm", "compiled": "comp."}[key]
            line = f"{name if key == 'first' else '':<11} {label:<6} {o:>7.3f}s"
            if key != "compiled":
                t = statistics.median(x[key] for x in theirs)
                line += f" {t:>7.3f}s {t / o:>6.2f}"
                if pg:
                    line += f" {pg[0][key]:>7.2f}s {pg[0][key] / o:>6.1f}"
            print(line, flush=True)
        score = f"{'':<11} score  ours {ours[0]['score']:.6f}, bnlearn {theirs[0]['score']:.6f}"
        print(score + (f", pgmpy {pg[0]['score']:.6f}" if pg else ""), flush=True)


if __name__ == "__main__":
    main()

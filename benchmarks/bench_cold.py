"""Speed as a user meets it: a fresh process, a structure given as a string, the first call.

Every case runs in fresh processes, ours and the reference's alternating pair by pair
(the machine's speed drifts; a pair meets one state), and prints each side's *cold*
time (a fresh process, the first call, a new structure object: what a script pays)
beside its *warm* time (the same call again in the same process), and the ratios::

    PYTHONPATH=$PWD /path/to/venv-with-pyagrum-and-pgmpy/bin/python benchmarks/bench_cold.py

Cases (``--cases``, comma-separated; ``--pairs`` fresh-process pairs each):

* ``import``: ``import pybncsmooth`` beside ``import pandas, numpy``, timed inside each
  fresh process around the import statement, and so is ``import pybncsmooth;
  pybncsmooth.fit`` (the public names are imported when first asked for); and the command line's ``--help``
  (``pybncsmooth.frontends.cli:main``, as the installed ``pybncsmooth`` script calls it),
  the whole process's wall time.  Python's bytecode files are written first (an
  installed package has them: pip compiles them), so no side pays for compiling source.
* ``asia``: ``bs.fit(modelstring, asia, method="bayes", iss=1)``, the first call after
  ``import pybncsmooth`` (cold) and again (warm), beside bnlearn's ``bn.fit`` of
  ``model2network(modelstring)`` in a fresh R process after ``library(bnlearn)`` (timed
  as for the wide fit below).
* ``wide``: the same on a random 1,000-node DAG (three levels, 0-3 parents) and 20,000
  rows (``bench_counting.random_network``): cold (a fresh process's first fit), *new
  structure* (a fresh process that fitted another structure twice first, so the
  compiled kernels are loaded: the first fit of this structure, from its model string) and
  warm (the same model string again).  bnlearn's cold is a fresh R process's first
  ``bn.fit(dag, df)`` (the data read and ``model2network`` run before the timing: ours
  parses the model string inside its time), its warm the best of three more.
* ``queries``: for barley, pathfinder, win95pts and alarm (pgmpy's copy of the bnlearn
  repository, decompressed), reading the file and answering 20 queries of 4 evidence
  nodes (one sampled row's values, so never impossible; seeded) in a fresh process,
  import excluded: ours (``bs.read_network`` then ``net.query``) beside pyAgrum's
  (``gum.loadBN``, ``LazyPropagation``, ``setEvidence`` / ``makeInference`` /
  ``posterior``).  Cold is the first read and queries of the process, warm the best
  of three repeats (read and queries again), *script* the whole script: the import
  (``import numpy, pybncsmooth`` beside ``import numpy, pyagrum``) and the cold read and
  queries.  The largest difference between the two answers is printed.

Ratios are reference / ours (above 1: ours faster), the median over the pairs; the
times are medians too.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"
QUERY_NETWORKS = ("barley", "pathfinder", "win95pts", "alarm")
N_QUERIES, N_EVIDENCE = 20, 4


def _env() -> dict[str, str]:
    """This checkout first on the path; bytecode written (as an installed package's is)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), str(HERE), env.get("PYTHONPATH", "")) if p)
    return env


def _run(argv: list[str], timeout: float = 900) -> dict[str, Any]:
    """The JSON a child prints on its ``RESULT`` line."""
    out = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=timeout)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{argv[:3]} failed:\n{out.stderr[-3000:]}")


def _py(script: str, *args: str) -> dict[str, Any]:
    return _run([sys.executable, "-c", script, *args])


def _r(script: str, *args: str) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as fh:
        fh.write(script)
    try:
        return _run(["Rscript", fh.name, *args])
    finally:
        os.unlink(fh.name)


def _wall(argv: list[str]) -> float:
    import time

    t = time.perf_counter()
    subprocess.run(argv, capture_output=True, env=_env(), check=True)
    return time.perf_counter() - t


def _med(xs: list[float]) -> float:
    return statistics.median(xs)


def _row(name: str, ours: dict[str, list[float]], theirs: dict[str, list[float]], ref: str) -> None:
    """One printed row: each side's medians and the median ratio of the pairs, per kind."""
    cells = []
    for kind in ours:
        o = ours[kind]
        t = theirs.get(kind) or theirs.get("warm")  # a new structure in a warm process: beside bnlearn's warm fit
        ratio = _med([b / a for a, b in zip(o, t)]) if t else float("nan")
        cells.append(f"{kind} {_med(o):.3f} s vs {_med(t):.3f} s ({ratio:.2f}x)")
    print(f"{name:<44s} ours vs {ref}: " + "; ".join(cells), flush=True)


# ----------------------------------------------------------------------------- import

_IMPORT = """
import json, time
t = time.perf_counter()
import {what}
print("RESULT", json.dumps({{"cold": time.perf_counter() - t}}))
"""


def case_import(pairs: int) -> None:
    _py(_IMPORT.format(what="pybncsmooth"))  # bytecode written once, untimed
    ours, theirs, first_name = {"cold": []}, {"cold": []}, {"cold": []}
    help_s, bare = [], []
    cli = "import sys; from pybncsmooth.frontends.cli import main; sys.exit(main())"
    for _ in range(pairs):
        ours["cold"].append(_py(_IMPORT.format(what="pybncsmooth"))["cold"])
        theirs["cold"].append(_py(_IMPORT.format(what="pandas, numpy"))["cold"])
        first_name["cold"].append(_py(_IMPORT.format(what="pybncsmooth; pybncsmooth.fit"))["cold"])
        help_s.append(_wall([sys.executable, "-c", cli, "--help"]))
        bare.append(_wall([sys.executable, "-c", "import pandas, numpy"]))
    _row("import pybncsmooth (fresh process)", ours, theirs, "import pandas, numpy")
    _row("import pybncsmooth; pybncsmooth.fit (fresh)", first_name, theirs, "import pandas, numpy")  # names are lazy
    print(f"{'pybncsmooth --help (whole process)':<44s} {_med(help_s):.3f} s; a process importing pandas and numpy "
          f"{_med(bare):.3f} s (ratio {_med([a / b for a, b in zip(help_s, bare)]):.2f})", flush=True)


# ----------------------------------------------------------------------------- fits

_OURS_FIT = """
import json, sys, time
import pybncsmooth as bs
kind, size = sys.argv[1], int(sys.argv[2])
if kind == "asia":
    df, ms = bs.load_dataset("asia"), {asia!r}
else:
    import bench_counting
    df, dag = bench_counting.random_network(size, 20000)
    ms = dag.modelstring()
    del dag
out = {{}}
if len(sys.argv) > 3:  # kernels loaded by another structure's fit first
    odf, odag = bench_counting.random_network(size, 20000, seed=1)  # another structure, the same path
    for _ in range(2):  # (a process's first large count is NumPy's, the second loads the kernels)
        bs.fit(odag.modelstring(), odf, method="bayes", iss=1)
t = time.perf_counter()
bs.fit(ms, df, method="bayes", iss=1)
out["first"] = time.perf_counter() - t
warm = []
for _ in range(3):
    t = time.perf_counter()
    bs.fit(ms, df, method="bayes", iss=1)
    warm.append(time.perf_counter() - t)
out["warm"] = min(warm)
print("RESULT", json.dumps(out))
"""

_R_FIT = r"""
suppressMessages(library(bnlearn))
a <- commandArgs(TRUE)
if (a[1] == "asia") {
  df <- read.csv(a[2], colClasses = "factor")
} else {
  df <- readRDS(a[2])
}
ms <- readLines(a[3], warn = FALSE)
dag <- model2network(ms)  # (untimed: bn.fit's own time, as bnlearn users quote it)
df <- df[, nodes(dag)]
fit <- function() invisible(bn.fit(dag, df, method = "bayes", iss = 1))
s <- as.numeric(Sys.time())
fit()
cold <- as.numeric(Sys.time()) - s
w <- c()
for (i in 1:3) {
  s <- as.numeric(Sys.time())
  fit()
  w <- c(w, as.numeric(Sys.time()) - s)
}
cat("RESULT", sprintf('{"first": %.6f, "warm": %.6f}', cold, min(w)), "\n")
"""


def _r_data(kind: str, folder: Path) -> tuple[str, str]:
    """The data file and the model string file bnlearn's child reads."""
    import pybncsmooth as bs

    ms = folder / f"{kind}.ms"
    if kind == "asia":
        csv = folder / "asia.csv"
        bs.load_dataset("asia").to_csv(csv, index=False)
        ms.write_text(ASIA)
        return str(csv), str(ms)
    sys.path.insert(0, str(HERE))
    import bench_counting

    df, dag = bench_counting.random_network(1000, 20000)
    csv, rds = folder / "wide.csv", folder / "wide.rds"
    df.to_csv(csv, index=False)
    ms.write_text(dag.modelstring())
    subprocess.run(["Rscript", "-e", f"saveRDS(read.csv('{csv}', colClasses = 'factor'), '{rds}')"], check=True,
                   capture_output=True)
    return str(rds), str(ms)


def case_fit(kind: str, pairs: int, folder: Path) -> None:
    have_r = shutil.which("Rscript") is not None
    data = _r_data(kind, folder) if have_r else None
    script = _OURS_FIT.format(asia=ASIA)
    size = "8" if kind == "asia" else "1000"
    ours: dict[str, list[float]] = {"cold": [], "warm": []} if kind == "asia" else {"cold": [], "new structure": [],
                                                                                     "warm": []}
    theirs: dict[str, list[float]] = {"cold": [], "warm": []}
    for _ in range(pairs):
        got = _py(script, kind, size)
        ours["cold"].append(got["first"])
        ours["warm"].append(got["warm"])
        if kind != "asia":
            ours["new structure"].append(_py(script, kind, size, "warm kernels")["first"])
        if data is not None:
            r = _r(_R_FIT, kind, *data)
            theirs["cold"].append(r["first"])
            theirs["warm"].append(r["warm"])
    what = "asia, 5,000 rows" if kind == "asia" else "1,000 nodes x 20,000 rows"
    if data is None:
        print(f"fit {what}: ours " + "; ".join(f"{k} {_med(v):.3f} s" for k, v in ours.items()) + " (no R)")
        return
    _row(f"bs.fit(modelstring, {what}, bayes)", ours, theirs, "bnlearn bn.fit")


# ----------------------------------------------------------------------------- queries

_OURS_QUERIES = """
import gc, json, sys, time
t0 = time.perf_counter()
import numpy as np, pybncsmooth as bs
imported = time.perf_counter() - t0
queries = json.loads(open(sys.argv[2]).read())
out = {}
for round in range(4):
    gc.collect()
    t = time.perf_counter()
    net = bs.read_network(sys.argv[1])
    read = time.perf_counter() - t
    answers = [net.query(target, ev).to_numpy().tolist() for target, ev in queries]
    total = time.perf_counter() - t
    if round == 0:
        out.update(cold=total, read=read, answers=answers, script=imported + total)
    else:
        out["warm"] = min(total, out.get("warm", total))
print("RESULT", json.dumps(out))
"""

_PYAGRUM_QUERIES = """
import gc, json, sys, time
t0 = time.perf_counter()
import numpy as np, pyagrum as gum
imported = time.perf_counter() - t0
queries = json.loads(open(sys.argv[2]).read())
out = {}
for round in range(4):
    gc.collect()
    t = time.perf_counter()
    bn = gum.loadBN(sys.argv[1])
    read = time.perf_counter() - t
    ie = gum.LazyPropagation(bn)
    answers = []
    for target, ev in queries:
        ie.setEvidence(ev)
        ie.makeInference()
        answers.append(np.asarray(ie.posterior(target).toarray()).tolist())
    total = time.perf_counter() - t
    if round == 0:
        out.update(cold=total, read=read, answers=answers, script=imported + total)
    else:
        out["warm"] = min(total, out.get("warm", total))
print("RESULT", json.dumps(out))
"""


def _network_file(name: str, folder: Path) -> Path:
    """``name``'s BIF file, decompressed from pgmpy's copy of the repository."""
    import _networks

    src = _networks.locate(name)
    if src.suffix != ".gz":
        return src
    dst = folder / src.name[:-3]
    with gzip.open(src, "rb") as fin, open(dst, "wb") as fout:
        shutil.copyfileobj(fin, fout)
    return dst


def _queries(path: Path, seed: int = 0) -> list:
    """20 queries: a random target and 4 random evidence nodes, the evidence one sampled row."""
    import numpy as np

    import pybncsmooth as bs

    net = bs.read_network(path)
    rng = np.random.default_rng(seed)
    rows = net.sample(N_QUERIES, random_state=seed)
    out = []
    for i in range(N_QUERIES):
        vs = [str(v) for v in rng.choice(net.nodes, N_EVIDENCE + 1, replace=False)]
        out.append((vs[0], {v: str(rows.iloc[i][v]) for v in vs[1:]}))
    return out


def case_queries(name: str, pairs: int, folder: Path) -> None:
    path = _network_file(name, folder)
    qfile = folder / f"{name}.queries.json"
    qfile.write_text(json.dumps(_queries(path)))
    try:
        import pyagrum  # noqa: F401

        have_gum = True
    except ImportError:
        have_gum = False
    _py(_OURS_QUERIES, str(path), str(qfile))  # bytecode written, untimed
    ours: dict[str, list[float]] = {"cold": [], "warm": [], "read": [], "script": []}
    theirs: dict[str, list[float]] = {"cold": [], "warm": [], "read": [], "script": []}
    diff = 0.0
    for _ in range(pairs):
        a = _py(_OURS_QUERIES, str(path), str(qfile))
        for k in ours:
            ours[k].append(a[k])
        if have_gum:
            b = _py(_PYAGRUM_QUERIES, str(path), str(qfile))
            for k in theirs:
                theirs[k].append(b[k])
            diff = max(diff, max(max(abs(x - y) for x, y in zip(p, q)) for p, q in zip(a["answers"], b["answers"])))
    if not have_gum:
        print(f"{name}: ours " + "; ".join(f"{k} {_med(v):.3f} s" for k, v in ours.items()) + " (no pyAgrum)")
        return
    _row(f"{name}: read + 20 queries (fresh process)", ours, theirs, "pyAgrum")
    print(f"{'':<44s} largest difference between the answers {diff:.2g}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="import,asia,wide,queries", help="comma-separated: import, asia, wide, queries")
    ap.add_argument("--pairs", type=int, default=5, help="fresh-process pairs per case (default 5)")
    ap.add_argument("--networks", default=",".join(QUERY_NETWORKS), help="the networks of the queries case")
    args = ap.parse_args(argv)
    cases = args.cases.split(",")
    print(f"fresh processes, ours and the reference alternating; medians of {args.pairs} pairs; "
          "ratio = reference / ours (above 1: ours faster)", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if "import" in cases:
            case_import(args.pairs)
        if "asia" in cases:
            case_fit("asia", args.pairs, folder)
        if "wide" in cases:
            case_fit("wide", args.pairs, folder)
        if "queries" in cases:
            for name in args.networks.split(","):
                case_queries(name, args.pairs, folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())

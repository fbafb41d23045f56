"""In-memory fit times of every classifier structure and of a general DAG.

Times ``BNClassifier(structure=...).fit(X, y)`` for naive Bayes, TAN, kDB-2,
selective kDB-3 and a 5-member ESKDB (m-estimates, one thread) on letter recognition
(20000 rows, 16 features in 5 equal-frequency bins, 26 classes) and DNA (3186 rows,
180 features), and ``bs.fit(dag, df, method="bayes")`` of asia's DAG on its 5000 rows
repeated 20 times: the best of ``--repeat`` runs after a warm-up.

The figures serve to compare two versions of the package on one machine (run the
script with each on ``PYTHONPATH``); ``--json`` writes them for a later comparison,
``--compare FILE`` prints the ratios to a recorded run of the same machine.

Run: ``python benchmarks/bench_fit_paths.py [--repeat 5] [--json out.json] [--compare before.json]``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

import pybncsmooth as bs

from _timing import best_time  # benchmarks/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
UCI = ROOT / "vignettes" / "data" / "uci_disc5"


def _load(name: str) -> tuple[pd.DataFrame, pd.Series]:
    df = pd.read_csv(UCI / f"{name}.csv.gz", dtype=str).astype("category")
    target = "lettr" if "lettr" in df.columns else "Class"  # letter recognition names its class lettr
    return df.drop(columns=target), df[target]


CASES = {
    "nb": dict(structure="nb", method="mestimate"),
    "tan": dict(structure="tan", method="mestimate"),
    "kdb2": dict(structure="kdb", k=2, method="mestimate"),
    "skdb3": dict(structure="skdb", k=3, method="mestimate"),
    "eskdb5": dict(structure="eskdb", k=3, n_estimators=5, method="mestimate", random_state=0, n_jobs=1),
}


def run(repeat: int) -> dict[str, float]:
    out: dict[str, float] = {}
    print(f"warm: best of {repeat} after a warm-up call, in one process", flush=True)
    for data in ("letterrecognition", "dna"):
        X, y = _load(data)
        for name, kw in CASES.items():
            t = best_time(lambda kw=kw, X=X, y=y: bs.BNClassifier(**kw).fit(X, y), repeat=repeat, label=f"BNClassifier({kw})")
            out[f"{data}/{name}"] = t
            print(f"{data:18s} {name:7s} {t * 1e3:9.1f} ms", flush=True)
    df = bs.load_dataset("asia")
    ms = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"
    big = pd.concat([df] * 20, ignore_index=True)
    t = best_time(lambda: bs.fit(ms, big, method="bayes", iss=1), repeat=repeat, label="general DAG, bayes")
    out["asia100k/bayes"] = t
    print(f"{'asia x20':18s} {'bayes':7s} {t * 1e3:9.1f} ms", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="write the times to this file")
    ap.add_argument("--compare", help="a JSON file of an earlier run on this machine: print the ratios")
    args = ap.parse_args()
    times = run(args.repeat)
    if args.json:
        Path(args.json).write_text(json.dumps(times, indent=1))
    if args.compare:
        before = json.loads(Path(args.compare).read_text())
        print("\ncase                     before ms   now ms   now/before")
        for key, t in times.items():
            if key in before:
                print(f"{key:24s} {before[key] * 1e3:9.1f} {t * 1e3:8.1f} {t / before[key]:9.2f}")


if __name__ == "__main__":
    main()

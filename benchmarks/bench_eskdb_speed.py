"""ESKDB-HDP's fit time against a 100-tree random forest's, cold and warm.

On the ten UCI sets of vignette 06 (``vignettes/data/uci_disc5``: numeric columns cut
into 5 equal-frequency bins), each model is fitted on the training halves of the 5 x 2
cross-validation (stratified, seed 1), one thread each:

* **ESKDB-HDP**: ``BNClassifier(structure="eskdb", method="hdp", random_state=0,
  n_jobs=1)`` (the defaults: 10 members, k = 5, 100 sweeps a member);
* **RF**: scikit-learn's ``RandomForestClassifier(n_estimators=100, n_jobs=1)`` on the
  codes as ordinal integers (an ``OrdinalEncoder`` in a pipeline, as in vignette 06).

Every measurement runs in a fresh process that imports its package (``import
pybncsmooth`` and the classifier; scikit-learn's modules), reads the data, then times
the fits of the folds in turn: **cold** is the first (for ESKDB-HDP numba's import and
the compiled kernels' load from the cache are part of it), **warm** the median of the
others, **cv** the mean of all of them, the first counted (what a cross-validation's
mean fit time reports).  The two models' processes alternate, ``--pairs`` pairs per
set, and the figures are the medians over pairs: run it on a quiet machine, or read the
ratios, not the seconds, on a loaded one.  The kernels' cache must be warm (run once
before: a first run compiles them).

Run: ``python benchmarks/bench_eskdb_speed.py`` (``--sets dna zoo`` for some sets).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "vignettes" / "data" / "uci_disc5"
SETS = ["zoo", "glass", "sonar", "ionosphere", "housevotes84", "breastcancer", "pimaindiansdiabetes", "dna",
        "letterrecognition", "shuttle"]


def _worker(name: str, model: str, folds: int) -> None:
    """One fresh process: import, read, then the fits of the first ``folds`` folds (seconds as JSON)."""
    import numpy as np
    import pandas as pd

    if model == "rf":
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import OrdinalEncoder
    else:
        import pybncsmooth as bs

        bs.BNClassifier  # the classifiers' module (and scikit-learn's base) imported, as a user's script does
    from sklearn.model_selection import RepeatedStratifiedKFold

    df = pd.read_csv(DATA / f"{name}.csv.gz", dtype=str, keep_default_na=False, na_values=["", "NA"])
    target = df.columns[0]
    y = df[target]
    X = df.drop(columns=target)
    cv = RepeatedStratifiedKFold(n_splits=2, n_repeats=5, random_state=1)

    def make():
        if model == "rf":
            enc = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1, encoded_missing_value=-1)
            return make_pipeline(enc, RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=1))
        return bs.BNClassifier(structure="eskdb", method="hdp", random_state=0, n_jobs=1)

    times = []
    for f, (tr, _) in enumerate(cv.split(np.zeros(len(y)), y.astype("category").cat.codes)):
        if f >= folds:
            break
        m = make()
        Xtr, ytr = X.iloc[tr], y.iloc[tr]
        t0 = time.perf_counter()
        m.fit(Xtr, ytr)
        times.append(time.perf_counter() - t0)
    print(json.dumps(times))


def _run(name: str, model: str, folds: int) -> list[float]:
    out = subprocess.run([sys.executable, __file__, "--worker", name, model, str(folds)], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="*", default=SETS)
    ap.add_argument("--pairs", type=int, default=2, help="alternating fresh-process pairs per set")
    ap.add_argument("--folds", type=int, default=10, help="folds of the 5 x 2 CV fitted in each process (2 to 10)")
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker(args.worker[0], args.worker[1], int(args.worker[2]))
        return 0
    if not 2 <= args.folds <= 10:
        ap.error("--folds must be between 2 and 10")
    print(f"seconds per fit, medians of {args.pairs} alternating fresh-process pairs; ratio: ESKDB-HDP / RF")
    print(f"{'set':20s} {'cold':>7s} {'RF':>7s} {'ratio':>6s}  {'warm':>7s} {'RF':>7s} {'ratio':>6s}  "
          f"{'cv':>7s} {'RF':>7s} {'ratio':>6s}")
    worst = {"cold": 0.0, "warm": 0.0, "cv": 0.0}
    for name in args.sets:
        runs: dict[str, list[list[float]]] = {"eskdb": [], "rf": []}
        for _ in range(args.pairs):
            for model in ("eskdb", "rf"):
                runs[model].append(_run(name, model, args.folds))
        line = f"{name:20s}"
        for what, pick in (("cold", lambda r: r[0]), ("warm", lambda r: statistics.median(r[1:])),
                           ("cv", statistics.fmean)):
            a, b = (statistics.median(pick(r) for r in runs[m]) for m in ("eskdb", "rf"))
            worst[what] = max(worst[what], a / b)
            line += f" {a:7.3f} {b:7.3f} {a / b:6.2f} "
        print(line, flush=True)
    print("largest ratio: " + ", ".join(f"{k} {v:.2f}" for k, v in worst.items()) + " (goal: at most 3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

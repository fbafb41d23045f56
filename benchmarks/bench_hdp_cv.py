"""HDP inside cross-validation: kDB-3 with ``hdp`` against scikit-learn's random forest.

5 x 2 cross-validation (stratified, seed 1) on letter recognition with its numeric
columns cut into 5 equal-frequency bins (``data/letterrecognition_disc5.csv.gz``, 20000
rows, 16 attributes, 26 classes): a kDB-3 classifier smoothed by ``hdp`` (the default
2000 sweeps; ``--sweeps`` adds fixed numbers of sweeps, ``--auto`` ``iterations="auto"``)
and a 100-tree random forest on the same codes (ordinal integers), each fitted on one
thread.  Prints, per method, the mean fit and predict times per fold and the RMSE over
the folds, in two normalisations: ours (``sqrt(sum_ik (p_ik - [y_i = k])^2 / N)``,
Zhang 2020, eq. 29) and per class (``... / (N K)``, the figure the HDP papers report);
and the ratio of the HDP fit time to the forest's.

Run: ``python benchmarks/bench_hdp_cv.py`` (``--folds N`` to run only the first N folds).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import RepeatedStratifiedKFold

import pybncsmooth as bs
from pybncsmooth.classifiers.metrics import rmse

DATA = Path(__file__).resolve().parent / "data" / "letterrecognition_disc5.csv.gz"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--auto", action="store_true", help="also run iterations='auto' (tol 5e-3; slow)")
    ap.add_argument("--sweeps", type=int, nargs="*", default=[], help="also run these fixed numbers of sweeps")
    args = ap.parse_args(argv)
    df = pd.read_csv(DATA, dtype=str)
    target = df.columns[0]
    df = df.astype("category")
    y = df[target].cat.codes.to_numpy()
    X = df.drop(columns=target)
    Xcodes = np.column_stack([X[c].cat.codes.to_numpy() for c in X.columns])
    K = len(df[target].cat.categories)
    methods = {
        "kDB-3 hdp (default, 2000 sweeps)": lambda: bs.BNClassifier(
            structure="kdb", k=3, method="hdp", random_state=0, n_jobs=1, progress=False
        ),
    }
    for sw in args.sweeps:
        methods[f"kDB-3 hdp ({sw} sweeps)"] = lambda sw=sw: bs.BNClassifier(
            structure="kdb", k=3, method="hdp", iterations=sw, random_state=0, n_jobs=1, progress=False
        )
    if args.auto:
        methods["kDB-3 hdp (auto, tol 5e-3)"] = lambda: bs.BNClassifier(
            structure="kdb", k=3, method="hdp", iterations="auto", tol=5e-3, random_state=0, n_jobs=1, progress=False
        )
    methods["random forest (100 trees)"] = lambda: RandomForestClassifier(n_estimators=100, n_jobs=1, random_state=0)
    # warm-up: load the compiled kernels once (not part of any fold's time)
    bs.BNClassifier(structure="kdb", k=3, method="hdp", iterations=20, random_state=0, n_jobs=1).fit(
        df.iloc[:500].drop(columns=target), df[target].iloc[:500]
    )
    cv = RepeatedStratifiedKFold(n_splits=2, n_repeats=5, random_state=1)
    rows = []
    for f, (tr, te) in enumerate(cv.split(Xcodes, y)):
        if f >= args.folds:
            break
        for name, make in methods.items():
            model = make()
            forest = isinstance(model, RandomForestClassifier)
            Xtr = Xcodes[tr] if forest else X.iloc[tr]
            Xte = Xcodes[te] if forest else X.iloc[te]
            ytr = y[tr] if forest else df[target].iloc[tr]
            t0 = time.perf_counter()
            model.fit(Xtr, ytr)
            t_fit = time.perf_counter() - t0
            t0 = time.perf_counter()
            proba = model.predict_proba(Xte)
            t_pred = time.perf_counter() - t0
            e = rmse(proba, y[te])
            rows.append(
                {"method": name, "fold": f, "fit": t_fit, "predict": t_pred, "rmse": e, "rmse_k": e / np.sqrt(K)}
            )
        print(f"fold {f}: " + ", ".join(f"{r['method']} {r['fit']:.2f} s" for r in rows[-len(methods) :]), flush=True)
    res = pd.DataFrame(rows).groupby("method", sort=False)[["fit", "predict", "rmse", "rmse_k"]].mean()
    pd.set_option("display.width", 160)
    print(f"\nletter recognition (disc5), {min(args.folds, 10)} folds of 5 x 2 CV, one thread each "
          "(warm: the compiled kernels loaded before the first fold):")
    print(res.round(4).to_string())
    rf = res.loc["random forest (100 trees)", "fit"]
    for name in methods:
        if name.startswith("kDB"):
            print(f"{name}: fit time {res.loc[name, 'fit'] / rf:.2f}x the forest's")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""ESKDB-HDP against a random forest and gradient boosting: win-draw-loss on the ten UCI sets.

The default ``BNClassifier(structure="eskdb", method="hdp")`` (10 members, k = 5,
members' posteriors tempered by the exponent of lowest leave-one-out log loss) against
scikit-learn's ``RandomForestClassifier`` (100 trees) on the codes as ordinal integers
and ``HistGradientBoostingClassifier`` (100 rounds, every code declared categorical,
no early stopping), on the codes of ``vignettes/data/uci_disc5`` (numeric columns in
five equal-frequency bins; every model sees the same codes): 5 x 2 stratified
cross-validation, the same folds for every model, one thread each (OpenMP included).
Prints the per-set means of log loss, RMSE (over all classes) and 0-1 loss, each
model's fit time over the forest's, and the win-draw-loss of ESKDB-HDP against each,
with the one-tailed sign test (as Zhang 2020 reports it) and the Wilcoxon signed-rank
test over data sets.

Fit times are per fold, in one process, measured by ``evaluate``: the process's first
fit of each model (cold: its imports, the numba kernels loaded from the cache) is the
first fold of the first data set, counted in that set's mean; the cold and the median
warm fit are printed apart.  ``--ablation`` adds ESKDB-HDP with ``tempering=False``
(the plain mean of the members, Zhang 2020, Algorithm 15) and ESKDB-HDP with
``sum_out_missing=False`` (a missing cell read as its level, by the selection, the
tempering and at prediction: the sets with missing cells, house votes and breast
cancer, are the only ones it changes).

Run: ``python benchmarks/bench_eskdb.py [--datasets zoo ...] [--cv 5x2] [--seed 0]
[--ablation] [--data DIR] [--csv results.csv]`` (``--data``: a folder of
``<name>.csv.gz`` or ``<name>_disc5.csv`` files, the class in the first column).
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import pandas as pd

import pybncsmooth as bs

from _uci import DATASETS, UCI, load  # benchmarks/ is on sys.path when a script runs

METRICS = ("log_loss", "rmse", "zero_one")


def models(n_features: int, ablation: bool) -> dict:
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder

    def ordinal():
        return OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1, encoded_missing_value=-1)

    out = {"ESKDB-HDP": bs.BNClassifier(structure="eskdb", method="hdp", random_state=0, n_jobs=1)}
    if ablation:
        out["ESKDB-HDP-plain"] = bs.BNClassifier(structure="eskdb", method="hdp", random_state=0, n_jobs=1,
                                                 tempering=False)
        out["ESKDB-HDP-level"] = bs.BNClassifier(structure="eskdb", method="hdp", random_state=0, n_jobs=1,
                                                 sum_out_missing=False)
    out["RF"] = make_pipeline(ordinal(), RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=1))
    out["HGB"] = make_pipeline(
        ordinal(),
        HistGradientBoostingClassifier(categorical_features=[True] * n_features, max_iter=100, random_state=0,
                                       early_stopping=False),
    )
    return out


def report(res: pd.DataFrame, names: list[str], order: list[str]) -> None:
    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 30)
    for metric in METRICS:
        print(f"\n{metric} (mean over folds; lower is better)")
        print(res.pivot_table(index="dataset", columns="model", values=metric)[order].loc[names].round(4).to_string())
    t = res.pivot_table(index="dataset", columns="model", values="fit_seconds")[order].loc[names]
    print("\nfit seconds per fold (mean; the first set's holds each model's cold first fit) and / RF's")
    print(pd.concat([t.round(3), t.div(t["RF"], axis=0).round(2).add_suffix(" / RF")], axis=1).to_string())
    first = res[res["dataset"] == names[0]]
    print(f"\n{names[0]}: each model's cold fit (the process's first: fold 1) and its warm fits (folds 2 on, mean)")
    for m in order:
        secs = first.loc[first["model"] == m, "fit_seconds"].to_numpy()
        print(f"  {m:16s} cold {secs[0]:.3f} s, warm {secs[1:].mean():.3f} s")
    print("\nwin-draw-loss over data sets of ESKDB-HDP (a win: the lower mean loss; p1: one-tailed sign test, "
          "pW: Wilcoxon)")
    rows = []
    for b in [m for m in order if m != "ESKDB-HDP"]:
        row = {"against": b}
        for metric in METRICS:
            w = bs.win_draw_loss(res, "ESKDB-HDP", b, metric)
            wdl = f"{w['wins']}-{w['draws']}-{w['losses']}"
            row[metric] = f"{wdl} (p1={w['p_one_sided']:.3f}, pW={w['p_wilcoxon']:.3f})"
        ratio = t["ESKDB-HDP"] / t[b]
        row["fit time ratio"] = f"median {ratio.median():.2f}, max {ratio.max():.2f} ({ratio.idxmax()})"
        rows.append(row)
    print(pd.DataFrame(rows).to_string(index=False))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=DATASETS, choices=DATASETS)
    ap.add_argument("--cv", default="5x2")
    ap.add_argument("--seed", type=int, default=0, help="the folds' random_state (every model sees the same folds)")
    ap.add_argument("--ablation", action="store_true",
                    help="also ESKDB-HDP with tempering=False, and with sum_out_missing=False")
    ap.add_argument("--data", type=Path, default=UCI, help="a folder of <name>.csv.gz or <name>_disc5.csv files")
    ap.add_argument("--csv", help="write the per-fold results here")
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    warnings.filterwarnings("ignore", category=bs.errors.ClassRelabellingWarning)
    parts = []
    for name in args.datasets:
        df, target = load(name, args.data)
        mods = models(df.shape[1] - 1, args.ablation)
        with threadpool_limits(1):
            res = bs.evaluate(mods, df, target, cv=args.cv, metrics=METRICS, dataset=name, random_state=args.seed,
                              progress=False)
        print(f"{name}: done ({res['fit_seconds'].sum():.1f} s of fitting)", flush=True)
        parts.append(res)
        if args.csv:  # written after every set: a long run interrupted keeps what it measured
            pd.concat(parts, ignore_index=True).to_csv(args.csv, index=False)
    res = pd.concat(parts, ignore_index=True)
    report(res, args.datasets, list(mods))


if __name__ == "__main__":
    main()

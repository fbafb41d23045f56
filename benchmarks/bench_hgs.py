"""HGS and M-branch against m-estimates, HDP and HLS on the ten UCI data sets.

Bayesian network classifiers (TAN, kDB-1..3 by default) on the codes of
``vignettes/data/uci_disc5`` (numeric columns in five equal-frequency bins), 5 x 2
stratified cross-validation, the same folds for every model, one thread each: RMSE
(over all classes), log loss, 0-1 loss and fit seconds per data set, then win-draw-loss
of HGS against every other estimator per structure, with the one-tailed sign test (as
Zhang 2020 reports it) and the Wilcoxon signed-rank test over data sets.  ``hgs`` is HGS
with its default one weight per tree depth, ``hgs-node`` the thesis's one per internal
node.  ``--eskdb`` adds ESKDB with HGS (its members' selective kDB choosing by
leave-one-out log loss, the default for HGS members), HDP (the thesis's 1000 sweeps) and
m-estimate members and a 100-tree random forest on the same codes.

Run: ``python benchmarks/bench_hgs.py [--structures kdb2 ...] [--methods hgs hdp ...]
[--datasets zoo ...] [--cv 5x2] [--eskdb] [--csv results.csv]``.
"""

from __future__ import annotations

import argparse
import warnings

import pandas as pd

import pybncsmooth as bs

from _uci import DATASETS, load  # benchmarks/ is on sys.path when a script runs

STRUCTURES = {"tan": dict(structure="tan"), **{f"kdb{k}": dict(structure="kdb", k=k) for k in (1, 2, 3)}}
METHODS = {
    "hgs": dict(method="hgs", n_jobs=1),  # one weight per depth (the default)
    "hgs-node": dict(method="hgs", tying="node", n_jobs=1),  # one per internal node (the thesis's)
    "mbranch": dict(method="mbranch"),
    "mestimate": dict(method="mestimate"),
    "hdp": dict(method="hdp", n_jobs=1, random_state=0),  # its default 2000 sweeps
    "hls": dict(method="hls", n_jobs=1),
}


def models(structures: list[str], methods: list[str], eskdb: bool) -> dict:
    out = {}
    for s in structures:
        for m in methods:
            out[f"{s}-{m}"] = bs.BNClassifier(**STRUCTURES[s], **METHODS[m])
    if eskdb:
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import OrdinalEncoder

        def member(method: str, **kw):
            return bs.BNClassifier(structure="eskdb", method=method, random_state=0, n_jobs=1, **kw)

        out["ESKDB-HGS"] = member("hgs")  # one weight per depth; members selected by log loss
        out["ESKDB-HDP"] = member("hdp", iterations=1000)  # the thesis's sweeps a member, as recorded
        out["ESKDB-m"] = member("mestimate")
        enc = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1, encoded_missing_value=-1)
        out["RF"] = make_pipeline(enc, RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=1))
    return out


def report(res: pd.DataFrame, pairs: list[tuple[str, str]]) -> None:
    means = res.groupby(["dataset", "model"])[["rmse", "log_loss", "zero_one", "fit_seconds"]].mean()
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    for metric in ("rmse", "log_loss", "zero_one", "fit_seconds"):
        print(f"\n{metric} (mean over folds" + ("; the first fold of each model in this process is cold, loading"
              " its kernels, the others warm)" if metric == "fit_seconds" else ")"))
        print(means[metric].unstack("model").round(4 if metric != "fit_seconds" else 3).to_string())
    print("\nwin-draw-loss over data sets (first model's wins; p1: one-tailed sign test, pw: Wilcoxon)")
    for a, b in pairs:
        cells = []
        for metric in ("rmse", "log_loss", "zero_one"):
            w = bs.win_draw_loss(res, a, b, metric)
            wdl = f"{w['wins']}-{w['draws']}-{w['losses']}"
            cells.append(f"{metric} {wdl} p1={w['p_one_sided']:.3f} pw={w['p_wilcoxon']:.3f}")
        t = means["fit_seconds"].unstack("model")
        ratio = (t[a] / t[b]).median()
        print(f"{a:>16s} vs {b:<16s} " + "; ".join(cells) + f"; median fit time ratio {ratio:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--structures", nargs="+", default=list(STRUCTURES), choices=list(STRUCTURES))
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    ap.add_argument("--datasets", nargs="+", default=DATASETS, choices=DATASETS)
    ap.add_argument("--cv", default="5x2")
    ap.add_argument("--eskdb", action="store_true", help="also ESKDB with HGS / HDP / m-estimate members and a forest")
    ap.add_argument("--csv", help="write the per-fold results here")
    args = ap.parse_args()
    warnings.filterwarnings("ignore", category=bs.errors.ClassRelabellingWarning)
    warnings.filterwarnings("ignore", category=bs.errors.ZeroProbabilityWarning)
    parts = []
    for name in args.datasets:
        df, target = load(name)
        mods = models(args.structures, args.methods, args.eskdb)
        res = bs.evaluate(mods, df, target, cv=args.cv, metrics=("zero_one", "rmse", "log_loss"), dataset=name)
        print(f"{name}: done ({res['fit_seconds'].sum():.1f} s of fitting)", flush=True)
        parts.append(res)
    res = pd.concat(parts, ignore_index=True)
    if args.csv:
        res.to_csv(args.csv, index=False)
    pairs = []
    for h in ("hgs", "hgs-node"):
        if h in args.methods:
            pairs += [(f"{s}-{h}", f"{s}-{m}") for s in args.structures for m in args.methods if m != h]
    if args.eskdb:
        pairs += [("ESKDB-HGS", "RF"), ("ESKDB-HGS", "ESKDB-HDP"), ("ESKDB-HGS", "ESKDB-m")]
    report(res, pairs)


if __name__ == "__main__":
    main()

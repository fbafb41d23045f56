"""Missing values: available-case counting, soft EM and hard EM against the complete-data
fit, and bnlearn's hard EM side by side.

The insurance network (bnlearn's ``insurance.bif``, in ``tests/data/bnlearn``) samples
``--rows`` training rows and 5000 complete test rows; ``--rate`` of the training cells are
masked completely at random.  Each estimator is fitted on the complete rows, on the masked
rows with ``na="available"``, ``"em"`` (soft; data augmentation for hdp) and ``"hard-em"``; printed: held-out
log-likelihood per row, the share of the complete-data fit's advantage over available-case
counting that EM recovers, and fit seconds: the first call of each EM fit in the process
(after the complete-data and available-case fits, which load the counting kernels) and the
best of two warm calls after it.  With R and bnlearn installed, bnlearn's
``bn.fit(method = "hard-em", fit = "bayes", iss = 1)`` runs on the same masked rows
(timed inside R, a fresh ``Rscript`` with bnlearn loaded: its first call) and is scored
by us.

Run: ``python benchmarks/bench_em.py [--rows 2000] [--rate 0.2] [--methods bayes hmd hdp]``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import pybncsmooth as bs

from _timing import cold_warm_label, first_and_warm  # benchmarks/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
BIF = ROOT / "tests" / "data" / "bnlearn" / "insurance.bif"
SETTINGS = {
    "bayes": dict(method="bayes", iss=1.0),
    "hmd": dict(method="hmd"),
    "mestimate": dict(method="mestimate"),
    "hdp": dict(method="hdp", iterations=1000, random_state=0),
    "hls-bayes": dict(method="hls-bayes", random_state=0),
}


def mask(df: pd.DataFrame, rate: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    out = df.copy()
    for c in out.columns:
        out.loc[rng.random(len(out)) < rate, c] = np.nan
    return out


def timed_fit(*args, **kw):
    """``bs.fit(*args, **kw)``, the seconds of its first call and of its warm repeats."""
    return first_and_warm(lambda: bs.fit(*args, **kw))


def bnlearn_hard_em(truth: bs.FittedNetwork, holes: pd.DataFrame, test: pd.DataFrame) -> tuple[float, float] | None:
    """bnlearn's hard EM on the masked rows: (held-out log-likelihood per row, seconds)."""
    if shutil.which("Rscript") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        data, out = Path(tmp) / "holes.csv", Path(tmp) / "fit.bif"
        holes.to_csv(data, index=False)
        levels = {c: list(truth.levels(c)) for c in truth.nodes}
        lev_r = ", ".join(f"`{c}` = c({', '.join(repr(str(v)) for v in lv)})" for c, lv in levels.items())
        code = f"""
suppressMessages(library(bnlearn))
d <- read.csv("{data}", colClasses = "character", na.strings = "")
lev <- list({lev_r})
for (c in names(lev)) d[[c]] <- factor(d[[c]], levels = lev[[c]])
dag <- model2network("{truth.modelstring()}")
t0 <- proc.time()[["elapsed"]]
fit <- bn.fit(dag, d[, nodes(dag)], method = "hard-em", fit = "bayes", iss = 1)
cat("SECONDS", proc.time()[["elapsed"]] - t0, "\\n")
write.bif("{out}", fit)
"""
        res = subprocess.run(["Rscript", "-e", code], capture_output=True, text=True, timeout=3600)
        if res.returncode != 0:
            print("bnlearn hard-em failed:", res.stderr.strip().splitlines()[-1:])
            return None
        secs = float([l for l in res.stdout.splitlines() if l.startswith("SECONDS")][0].split()[1])
        fitted = bs.read_network(out)
        return float(fitted.logpdf(test.astype(str)).mean()), secs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--rate", type=float, default=0.2)
    ap.add_argument("--methods", nargs="+", default=["bayes", "hmd", "hdp"], choices=list(SETTINGS))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    truth = bs.read_network(BIF)
    train = truth.sample(args.rows, random_state=args.seed + 1)
    test = truth.sample(5000, random_state=args.seed + 2)
    holes = mask(train, args.rate, args.seed)
    print(f"insurance: {args.rows} training rows, {holes.isna().to_numpy().mean():.1%} of cells missing, "
          f"{int(holes.isna().any(axis=1).sum())} incomplete rows; 5000 complete test rows")
    ms = truth.modelstring()
    for name in args.methods:
        kw = SETTINGS[name]
        full = bs.fit(ms, train, **kw).logpdf(test).mean()
        avail, *t_av = timed_fit(ms, holes, na="available", **kw)
        row = {"complete": full, "available": avail.logpdf(test).mean()}
        secs = {"available": t_av}
        for na in ("em", "hard-em"):
            net, *t = timed_fit(ms, holes, na=na, **kw)
            row[na] = net.logpdf(test).mean()
            secs[na] = t
            row[na + " iterations"] = net.info["em"]["iterations"]
        gap = row["complete"] - row["available"]
        rec = (row["em"] - row["available"]) / gap if "em" in row and gap > 0 else float("nan")
        print(f"{name:9s} complete {row['complete']:.4f}  available {row['available']:.4f}  "
              + (f"em {row['em']:.4f} ({row['em iterations']} it., {cold_warm_label(*secs['em'])}, recovers {rec:.0%})  "
                 if "em" in row else "")
              + f"hard-em {row['hard-em']:.4f} ({row['hard-em iterations']} it., {cold_warm_label(*secs['hard-em'])})", flush=True)
    bn = bnlearn_hard_em(truth, holes, test)
    if bn is not None:
        print(f"bnlearn hard-em (fit = bayes, iss = 1): {bn[0]:.4f}, {bn[1]:.2f} s inside R (its first call in a fresh Rscript, this machine)")


if __name__ == "__main__":
    main()

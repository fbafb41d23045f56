# %% [markdown]
# # Missing values: available cases, EM, and prediction with holes
#
# Real categorical data have holes. This vignette masks cells of data sampled from known
# networks, completely at random (MCAR) and at random given an observed column (MAR), and
# compares what the fit recovers:
#
# * `na="available"`: each node counted on the rows where it and its parents are observed
#   (bnlearn's locally complete counting);
# * `na="hard-em"`: impute each incomplete row's most probable completion, refit, repeat
#   (bnlearn's `method = "hard-em"`);
# * `na="em"`: soft EM, each completion weighted by its posterior (expected counts), the
#   estimator as M-step; for `hdp` and `hls-bayes`, whose samplers take whole counts, data
#   augmentation instead: blocks that each draw the missing cells from their posterior
#   and run the sampler on the completed counts, the blocks' posterior means averaged.
#
# Scores: held-out log-likelihood per row on complete test rows, and the mean absolute
# error of the CPT entries against the true network. Then prediction with missing
# features: `predict_proba` sums the missing cells out.
#
# Run by hand: `python vignettes/run.py vignettes/09_missing.py` (the full run takes about
# 15 seconds on one core); `--quick` runs the reduced version the test suite runs.

# %%
import os
import time
import warnings

import numpy as np
import pandas as pd

import pybncsmooth as bs

warnings.simplefilter("ignore")
QUICK = os.environ.get("PYBNCSMOOTH_VIGNETTE_QUICK") == "1"
pd.set_option("display.width", 200)

ASIA = bs.datasets.structure("asia").modelstring()
truth = bs.fit(ASIA, bs.load_dataset("asia"), method="bayes", iss=1)
print(truth.modelstring())


def mcar(df, rate, seed):
    rng = np.random.default_rng(seed)
    out = df.copy()
    for c in out.columns:
        out.loc[rng.random(len(out)) < rate, c] = np.nan
    return out


def mar(df, rate, seed, driver="S"):
    """Cells of every other column go missing more often where ``driver`` is 'yes'
    (missingness depends on an observed value only)."""
    rng = np.random.default_rng(seed)
    out = df.copy()
    p = np.where(df[driver] == "yes", 1.6 * rate, 0.4 * rate)
    for c in out.columns:
        if c != driver:
            out.loc[rng.random(len(out)) < p, c] = np.nan
    return out


def cpt_error(net, ref):
    return float(np.mean([np.abs(net.cpt(v) - ref.cpt(v)).mean() for v in ref.nodes]))


# %% [markdown]
# ## Asia, 20% of cells missing
#
# 1000 training rows sampled from the network above (the bnlearn asia data fitted with
# BDeu), 5000 complete test rows, three masks each.

# %%
rows = []
test = truth.sample(5000, random_state=100)
for kind, masker in (("MCAR", mcar), ("MAR", mar)):
    for seed in range(1 if QUICK else 3):
        train = truth.sample(1000, random_state=seed)
        holes = masker(train, 0.2, seed)
        for method, kw in (("bayes", {"iss": 1.0}), ("hmd", {}), ("mestimate", {}),
                           ("hdp", {"iterations": 100 if QUICK else 500, "random_state": seed})):
            fits = {"complete": bs.fit(ASIA, train, method=method, **kw)}
            for na in ("available", "hard-em", "em"):
                t0 = time.perf_counter()
                fits[na] = bs.fit(ASIA, holes, method=method, na=na, **kw)
                fits[na].info["seconds"] = time.perf_counter() - t0
            for na, net in fits.items():
                rows.append({"mask": kind, "seed": seed, "method": method, "fit": na,
                             "loglik": net.logpdf(test).mean(), "cpt_mae": cpt_error(net, truth),
                             "seconds": net.info.get("seconds", np.nan)})
res = pd.DataFrame(rows)
table = res.groupby(["mask", "method", "fit"], sort=False)[["loglik", "cpt_mae", "seconds"]].mean()
print(table.to_string(float_format=lambda v: f"{v:.4f}"))
wide = res.pivot_table(index=["mask", "method", "seed"], columns="fit", values="loglik")
recovered = ((wide["em"] - wide["available"]) / (wide["complete"] - wide["available"])).groupby(level=[0, 1]).mean()
print("\nshare of the available-case loss that soft EM recovers:")
print(recovered.round(2).to_string())
by_fit = table.unstack("fit")
hard_worse = [(m, e) for (m, e) in by_fit.index if by_fit.loc[(m, e), ("loglik", "hard-em")]
              < by_fit.loc[(m, e), ("loglik", "available")]]
worst_hard = [(m, e) for (m, e) in by_fit.index if by_fit.loc[(m, e), "loglik"].idxmin() == "hard-em"]
rec = recovered.unstack(0)  # methods x masks
cpt_move = (by_fit[("cpt_mae", "em")] - by_fit[("cpt_mae", "available")]).groupby(level=1, sort=False).mean()


def methods_where(cond):
    return ", ".join(f"`{m}`" for m in cond.index[cond]) or "none"

# %% [markdown]
# Soft EM sits between available-case counting and the complete data: it uses what an
# incomplete row's observed cells say about its missing ones. Hard EM, which commits to
# one completion per row, does worse than counting the available cases in
# {{len(hard_worse)}} of the {{len(by_fit)}} (mask, estimator) pairs, and is the worst of all
# fits in {{len(worst_hard)}}: imputing the most probable value over-represents it. Soft EM
# recovers {{rec.drop(index="hdp").min().min():.2f}} to {{rec.drop(index="hdp").max().max():.2f}} of
# what available-case counting loses on held-out rows for `bayes`, `hmd` and `mestimate`,
# under MCAR and under MAR (where the chance that a cell is missing depends on smoking, an
# observed column, so EM stays valid); data augmentation recovers
# {{rec.loc["hdp", "MCAR"]:.2f}} (MCAR) and {{rec.loc["hdp", "MAR"]:.2f}} (MAR) for `hdp`. The CPT
# errors fall with EM for {{methods_where(cpt_move < 0)}} and rise for
# {{methods_where(cpt_move >= 0)}}: EM moves mass toward the completions the network finds
# likely, which the m-estimate's uniform pseudo-counts do not temper.
#
# ## Insurance: 27 nodes, rows with up to 11 missing cells
#
# `python benchmarks/bench_em.py` runs the same comparison on insurance (2000 rows, 20%
# MCAR, 5000 complete test rows), with bnlearn's hard EM run and timed beside ours; the
# [benchmarks page](../benchmarks.md#missing-values-and-em) has its recorded table. The
# E-step runs a junction tree per incomplete row over that row's missing cells, compiled:
# its cliques link only missing variables that share a family, so a row's work follows
# its holes, not the network's treewidth.
#
# ## Prediction with missing features
#
# A network not fitted with `na="level"` answers a row with holes with the probability of
# what was observed (`logpdf`) and the exact posterior given every observed column
# (`predict_proba`), the missing cells summed out by variable elimination. Below, the
# posterior of lung cancer: with `E` (tuberculosis or cancer) missing, a positive X-ray
# raises it, and more so for a smoker.

# %%
net = bs.fit(ASIA, truth.sample(2000, random_state=7), method="bayes")
rows = test.iloc[:4].copy()
rows.loc[rows.index[0], "X"] = np.nan  # the X-ray not taken
rows.loc[rows.index[1], "S"] = np.nan
rows.loc[rows.index[1], "B"] = np.nan
for i in (2, 3):  # a positive X-ray, tuberculosis-or-cancer unknown
    rows.loc[rows.index[i], "E"] = np.nan
    rows.loc[rows.index[i], "X"] = "yes"
rows.loc[rows.index[2], "S"] = "no"
rows.loc[rows.index[3], "S"] = "yes"
print(rows)
print(net.logpdf(rows).round(4))
print(net.predict_proba(rows, "L").round(4))

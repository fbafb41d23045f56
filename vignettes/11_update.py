# %% [markdown]
# # Updating a network: monthly batches, forgetting, and an expert corrected by data
#
# A fitted network keeps every count its estimator needs (one context tree per node), so
# `net.update(rows)` adds new rows without reading the old ones again: for the
# closed-form estimators the result *is* the refit on all the rows. `decay=` multiplies
# the old counts first, so that the network follows a process that drifts. And
# `fit(..., prior=P, prior_weight=w)` starts from what an expert network says, with the
# weight of `w` rows.
#
# 1. A stream of monthly batches from a network whose tables drift: updating without
#    forgetting (the refit on everything), with `decay`, and refitting on the last
#    month alone, scored on the next month's rows; update against refit times.
# 2. An expert network wrong about one table, corrected by data: the error of each CPT
#    against the truth as rows come, by the expert's weight; the expert as a BIF file
#    (tables only) updated with its tables as the prior.
#
# Run by hand: `python vignettes/run.py vignettes/11_update.py` (the full run takes about
# 10 seconds on one core); `--quick` runs the reduced version the test suite runs.

# %%
import os
import time
import warnings

import numpy as np
import pandas as pd

import pybncsmooth as bs
from pybncsmooth.model import TableCPD

warnings.simplefilter("ignore")
QUICK = os.environ.get("PYBNCSMOOTH_VIGNETTE_QUICK") == "1"
pd.set_option("display.width", 200)

ASIA = bs.datasets.structure("asia").modelstring()
start = bs.fit(ASIA, bs.load_dataset("asia"), method="bayes", iss=1)
dag = start.dag


def network(tables):
    """A network of the given tables (axes: node, parents), asia's structure and levels."""
    return bs.FittedNetwork(dag, start.schema, {n: TableCPD(n, dag.parents(n), t) for n, t in tables.items()})


# where the process drifts to within the year: fewer smokers, and dyspnoea less likely
# from bronchitis alone
end = {n: start.cpt(n) for n in dag.nodes}
end["S"] = np.array([0.8, 0.2])
d = end["D"].copy()  # axes D, then D's parents in their order
d[:, 1, 0] = [0.6, 0.4]  # bronchitis without either: dyspnoea 0.4 instead of about 0.8
end["D"] = d
print(start.parents("D"), start.levels("D"))
print("D | B=yes, E=no at the start:", start.cpt("D")[:, 1, 0].round(3), " at the end:", end["D"][:, 1, 0])

# %% [markdown]
# ## 1. Monthly batches from a drifting network
#
# Month `m` of 12 samples 1,000 rows from the tables `(1 - m/11) start + (m/11) end`.
# After each month we predict the next one (held-out log-likelihood per row) with three
# networks, each brought up to date by the rows seen so far:
#
# * **no forgetting**: `net.update(month)`: every row counts the same, as a refit on
#   all months (checked equal below);
# * **decay**: `net.update(month, decay=d)`: a row of age `a` months weighs `d ** a`;
# * **last month**: a fit on the newest month alone.

# %%
MONTHS = 6 if QUICK else 12
ROWS = 400 if QUICK else 1000
truths = [network({n: (1 - m / (MONTHS - 1)) * start.cpt(n) + m / (MONTHS - 1) * end[n] for n in dag.nodes})
          for m in range(MONTHS)]
batches = [t.sample(ROWS, random_state=100 + m) for m, t in enumerate(truths)]


def cpt_error(net, truth):
    """Mean absolute error of every CPT entry against the truth."""
    return float(np.mean(np.concatenate([np.abs(net.cpt(n) - truth.cpt(n)).ravel() for n in dag.nodes])))


kept = bs.fit(ASIA, batches[0], "bayes")
decayed = {d: kept for d in (0.5, 0.8)}
rows = []
t_update = t_refit = 0.0
for m in range(1, MONTHS):
    nxt = batches[m]
    scores = {"month": m, "no forgetting": kept.logpdf(nxt).mean()}
    for dd, net in decayed.items():
        scores[f"decay {dd}"] = net.logpdf(nxt).mean()
    scores["last month"] = bs.fit(ASIA, batches[m - 1], "bayes").logpdf(nxt).mean()
    rows.append(scores)
    t0 = time.perf_counter()
    kept = kept.update(nxt)
    t_update += time.perf_counter() - t0
    t0 = time.perf_counter()
    refit = bs.fit(ASIA, pd.concat(batches[: m + 1]), "bayes")
    t_refit += time.perf_counter() - t0
    assert kept.max_abs_diff(refit) < 1e-9  # no forgetting is the refit on every month
    decayed = {dd: net.update(nxt, decay=dd) for dd, net in decayed.items()}
table = pd.DataFrame(rows).set_index("month")
print("held-out log-likelihood per row of the next month's rows (higher is better)")
print(table.round(4).to_string())
print("\nmean over the months:")
print(table.mean().round(4).to_string())
print(f"\nupdates {t_update:.3f} s against refits {t_refit:.3f} s over {MONTHS - 1} months "
      f"({t_update / t_refit:.2f} of the refits' time; both tiny here: asia has 8 small tables)")

# %%
final = {"no forgetting": kept, **{f"decay {dd}": net for dd, net in decayed.items()},
         "last month": bs.fit(ASIA, batches[-1], "bayes")}
errs = {name: cpt_error(net, truths[-1]) for name, net in final.items()}
print("error of the CPT entries against the last month's truth")
for name, err in errs.items():
    print(f"  {name:>14}: {err:.4f}")
closest = min(errs, key=errs.get)
lag = table.iloc[-1]["decay 0.5"] - table.iloc[-1]["no forgetting"]
print("P(S = yes): truth at the end", truths[-1].cpt("S")[1].round(3), "| no forgetting",
      kept.cpt("S")[1].round(3), "| decay 0.5", decayed[0.5].cpt("S")[1].round(3))

# %% [markdown]
# Without forgetting, the network estimates the *average* of the year's tables: on a
# drifting process it lags, the more so the longer the stream (by {{lag:.2f}} nats a row on
# the last month against a decay of `0.5`). A decay of `0.5` (rows two months old weigh a
# quarter) follows the drift about as closely as a fit on the last month alone (mean
# held-out log-likelihood {{table.mean()["decay 0.5"]:.3f}} against
# {{table.mean()["last month"]:.3f}}), which asia's eight small tables can afford with
# {{ROWS:,}} rows a month. On the tables themselves the network closest to the final truth
# is {{closest}}: the balance between lagging (no forgetting) and noise (one month of
# rows). Forgetting is exactly a weighted fit: the decayed network equals
# the fit with row weights `decay ** age`.

# %%
w = np.concatenate([np.full(ROWS, 0.8 ** (MONTHS - 1 - m)) for m in range(MONTHS)])
weighted = bs.fit(ASIA, pd.concat(batches), "bayes", weights=w)
print("decay 0.8 against the weighted fit:", f"{decayed[0.8].max_abs_diff(weighted):.1e}")

# %% [markdown]
# ## 2. An expert network corrected by data
#
# The expert knows asia's tables except one: they believe dyspnoea (`D`) does not depend
# on bronchitis (`B`). With `prior=expert, prior_weight=w`, `bayes` takes the expert's
# tables as Dirichlet pseudo-counts `w P(x, parents)` (pyAgrum's `useDirichletPrior`): the
# expert weighs as `w` rows. We fit `n` rows from the true network and report the error
# of the CPT entries of `D` (the table the expert has wrong) and of the others.

# %%
truth = start
wrong = {n: truth.cpt(n) for n in dag.nodes}
dd = wrong["D"].copy()
dd[:] = dd.mean(axis=1, keepdims=True)  # D no longer depends on B
wrong["D"] = dd
expert = network(wrong)


def errors(net):
    d = float(np.abs(net.cpt("D") - truth.cpt("D")).mean())
    rest = float(np.mean(np.concatenate([np.abs(net.cpt(n) - truth.cpt(n)).ravel() for n in dag.nodes if n != "D"])))
    return d, rest


sizes = [50, 500] if QUICK else [50, 200, 1000, 5000]
weights = [10, 100, 1000]
res = []
for n in sizes:
    data = truth.sample(n, random_state=n)
    row = {"rows": n}
    row["data alone: D"], row["data alone: others"] = errors(bs.fit(ASIA, data, "bayes"))
    for w in weights:
        net = bs.fit(ASIA, data, "bayes", prior=expert, prior_weight=w)
        row[f"w={w}: D"], row[f"w={w}: others"] = errors(net)
    res.append(row)
out = pd.DataFrame(res).set_index("rows")
print("expert alone: D", *[round(v, 4) for v in errors(expert)])
print(out.round(4).to_string())


def caught_up(w):
    """The fewest rows from which, at every larger size too, the error of D with the expert of
    weight w is within 10% of the data's alone."""
    close = out[f"w={w}: D"] <= 1.1 * out["data alone: D"]
    after = [n for i, n in enumerate(out.index) if close.iloc[i:].all()]
    return f"from {after[0]:,} rows on" if after else "at none of these sizes"

# %% [markdown]
# The expert's right tables make the other CPTs better than the data alone at every
# size, the more so the heavier the expert (at {{sizes[0]}} rows:
# {{out.iloc[0]["data alone: others"]:.2f}} alone, {{out.iloc[0]["w=1000: others"]:.3f}} with
# `w = 1000`). Its wrong table of `D` is corrected as the rows come, as fast as they
# outnumber the expert's weight: its error is within a tenth of the data's with `w = 10`
# {{caught_up(10)}}, with `w = 100` {{caught_up(100)}}, while `w = 1000` still
# carries {{out.iloc[-1]["w=1000: D"] / out.iloc[-1]["data alone: D"]:.1f}} times the data's
# error at {{sizes[-1]:,}} rows. The weight is how many rows the expert is worth: state
# what the expert's knowledge rests on.
#
# An expert network that lives in a file (tables only, as bnlearn's `write.bif` or
# pyAgrum write them) is updated the same way, with its weight stated:

# %%
import tempfile

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "expert.bif")
    expert.write(path)
    from_file = bs.read_network(path)
    data = truth.sample(sizes[-1], random_state=7)
    corrected = from_file.update(data, prior_weight=100)
print(corrected)
print("error of D: expert", round(errors(expert)[0], 4), "| corrected by", sizes[-1], "rows",
      round(errors(corrected)[0], 4))
print("the corrected network keeps its counts and its prior: updated again with 500 more rows ->",
      corrected.update(truth.sample(500, random_state=8)).info["n_rows"], "rows")

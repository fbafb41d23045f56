# %% [markdown]
# # Multi-domain transfer: survey years and regions
#
# Many related data sets with one structure: hospitals, users, survey waves. Each domain
# should get its own CPTs, shrunk toward the others as much as the data say. This
# vignette tells the story on two real surveys bundled with the package (R package
# carData, complete cases):
#
# * `gssvocab`: the US General Social Survey's vocabulary test, 27,360 respondents in 20
#   survey years (1978-2016), the years as domains;
# * `chile`: the 1988 Chilean plebiscite survey, 2,439 respondents in 5 regions.
#
# Questions: (a) does a `domain=` fit ever lose to ignoring the domains, and how many rows
# per domain before separate fits win? (b) what does adapting a new year from 20 rows buy
# over pooled and separate fits? (c) which years differ, and where? (d) how much should a
# new domain borrow, and what if it is unlike the others?
#
# Run by hand: `python vignettes/run.py vignettes/08_domains.py` (the full run takes about
# 2 minutes on one core); `--quick` runs the reduced version the test suite runs. The
# figures need matplotlib (`pip install ".[plot]"`).

# %%
import os
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import pybncsmooth as bs

warnings.simplefilter("ignore")
QUICK = os.environ.get("PYBNCSMOOTH_VIGNETTE_QUICK") == "1"
FIG = Path("figures")
FIG.mkdir(exist_ok=True)
pd.set_option("display.width", 200)

gss = bs.load_dataset("gssvocab")
if QUICK:  # the reduced run: 300 rows a year
    gss = gss.groupby("year", observed=True).sample(n=300, random_state=0).reset_index(drop=True)
chile = bs.load_dataset("chile")
GSS = bs.datasets.structure("gssvocab").modelstring()
CHILE = bs.datasets.structure("chile").modelstring()
print(GSS)
print(CHILE)
print(gss.groupby("year", observed=True).size().describe().round(0).to_dict())
print(chile.groupby("region", observed=True).size().to_dict())

# %% [markdown]
# ## How `domain=` works
#
# With `domain="year"` every node's context tree splits on the year *last*, below the
# node's parents. The levels above are the estimator's own fit with the years pooled; a
# year's distribution for a parent configuration `y` is then the posterior mean of
# `Dirichlet(s_D * pooled(y))`,
# `(n(x, y, year) + s_D pooled(x | y)) / (n(y, year) + s_D)`, averaged over the posterior
# of the node's concentration `s_D` given all years' counts (Dirichlet-multinomial
# likelihood, flat prior on `log s_D`). Alike years put `s_D` in the thousands (the node
# pools); years that differ keep more of their own counts. This domain level is the same
# for every estimator (`hdp`, `hmd`, `bayes`, ...): they differ only in the pooled tables
# above it. Printed: the posterior geometric mean of each node's `s_D`.

# %%
net = bs.fit(GSS, gss, method="hdp", domain="year", random_state=0)
print({n: round(net.cpd(n).estimate.info["s_domain"], 1) for n in net.nodes})
s_dom = pd.Series({n: net.cpd(n).estimate.info["s_domain"] for n in net.nodes}).sort_values(ascending=False)


def listed(s, fmt="{:,.0f}"):
    return ", ".join(f"{k} {fmt.format(v)}" for k, v in s.items())


# %% [markdown]
# The nodes whose tables move least between years have the largest `s_D`:
# {{listed(s_dom.iloc[:2])}}; a year's {{gss.groupby("year", observed=True).size().median():,.0f}}
# rows (the median) weigh little against that many pooled pseudo-rows. Those that move most
# over four decades: {{listed(s_dom.iloc[2:])}}: there a year's own counts dominate.
#
# ## (a) Pooled, separate, hierarchical: how many rows per domain?
#
# For each number of training rows per domain, draw that many rows of every domain for
# training and score the rest (held-out log-likelihood per row, higher is better). Pooled
# ignores the domain, separate fits each domain alone, hierarchical is `domain=`.

# %%
def split(df, domain, n_per, seed):
    rng = np.random.default_rng(seed)
    groups = df.groupby(domain, observed=True).indices.values()
    idx = [rng.choice(ix, min(n_per, len(ix) - 1), replace=False) for ix in groups]
    mask = np.zeros(len(df), dtype=bool)
    mask[np.concatenate(idx)] = True
    return df[mask], df[~mask].reset_index(drop=True)


def three_ways(df, ms, domain, n_per, method, seed):
    tr, te = split(df, domain, n_per, seed)
    nodes = [c for c in df if c != domain]
    out = {"pooled": bs.fit(ms, tr[nodes], method=method, random_state=seed).logpdf(te[nodes]),
           "hierarchical": bs.fit(ms, tr, method=method, domain=domain, random_state=seed).logpdf(te)}
    sep = np.empty(len(te))
    for d, ix in te.groupby(domain, observed=True).indices.items():
        alone = bs.fit(ms, tr.loc[tr[domain] == d, nodes], method=method, random_state=seed)
        sep[ix] = alone.logpdf(te.iloc[ix][nodes])
    out["separate"] = sep
    per_dom = {k: pd.Series(v).groupby(te[domain].to_numpy()).mean() for k, v in out.items()}
    wins = int((per_dom["hierarchical"] > per_dom["separate"]).sum())
    return {k: v.mean() for k, v in out.items()} | {"beats separate": f"{wins}/{len(per_dom['separate'])}"}


rows = []
for name, df, ms, domain, sizes in (
    ("gssvocab", gss, GSS, "year", [10, 30, 100, 300] if not QUICK else [30]),
    ("chile", chile, CHILE, "region", [10, 30, 60] if not QUICK else [30]),
):
    for n_per in sizes:
        for method in ("hmd", "hdp"):
            reps = [three_ways(df, ms, domain, n_per, method, seed) for seed in range(1 if QUICK else 3)]
            r = pd.DataFrame(reps)
            rows.append({"data": name, "rows/domain": n_per, "method": method,
                         **r[["pooled", "hierarchical", "separate"]].mean().to_dict(),
                         "beats separate (last draw)": reps[-1]["beats separate"]})
curve = pd.DataFrame(rows)
curve["hier. - pooled"] = curve["hierarchical"] - curve["pooled"]
print(curve.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
gap = curve.set_index(["data", "rows/domain", "method"])["hier. - pooled"]
sep_gap = curve.set_index(["data", "rows/domain", "method"]).eval("hierarchical - separate")
beaten = [tuple(map(int, s.split("/"))) for s in curve["beats separate (last draw)"]]
GSS_MAX = curve.loc[curve["data"] == "gssvocab", "rows/domain"].max()

# %% [markdown]
# The hierarchical fit against pooling, in nats per row: from {{gap.min():+.4f}} to
# {{gap.max():+.4f}} over these data sets, sizes and estimators; on GSS with {{GSS_MAX}} rows a
# year {{gap["gssvocab", GSS_MAX, "hmd"]:+.4f}} (hmd) and {{gap["gssvocab", GSS_MAX, "hdp"]:+.4f}}
# (hdp); on Chile, whose regions barely differ, {{gap["chile"].min():+.4f}} to
# {{gap["chile"].max():+.4f}}. With few rows a domain the data cannot tell whether domains
# differ, the posterior of `s_D` is wide and the estimates stay near pooling. The
# hierarchical fit beats the separate fits in {{sum(w for w, _ in beaten)}} of
# {{sum(n for _, n in beaten)}} domains (last draw of every row of the table). Separate fits
# lose heavily with tens of rows: a year alone cannot fill a 50-configuration table of
# vocabulary scores; with {{GSS_MAX}} rows a year they are still
# {{sep_gap["gssvocab", GSS_MAX, "hmd"]:.2f}} (hmd) and {{sep_gap["gssvocab", GSS_MAX, "hdp"]:.2f}}
# (hdp) nats behind.
#
# ## (b) A new year from 20 rows
#
# Leave each year out; fit the population on the other years (100 rows each); adapt the
# left-out year from `k` of its rows with `net.adapt(rows, year)` (no refit: the
# population is the prior) and score its other rows. Pooled refits on the other years
# plus the `k` rows; separate fits the `k` rows alone (BDeu, iss 1).
# `bs.evaluate_domains` runs the whole comparison.

# %%
sub = gss.groupby("year", observed=True).sample(n=100 if not QUICK else 40, random_state=7)
years = gss["year"].cat.categories if not QUICK else gss["year"].cat.categories[:4]
sub = sub[sub["year"].isin(years)].assign(year=lambda d: d["year"].cat.remove_unused_categories())
ev = bs.evaluate_domains(GSS, sub, "year", k_grid=(0, 5, 20, 50) if not QUICK else (0, 20), random_state=1)
summ = ev.summary().loc["lodo"]
print(summ["loglik"].unstack("setting").to_string(float_format=lambda v: f"{v:.4f}"))
for k in (20,):
    print(f"k={k}: hierarchical vs pooled", ev.win_draw_loss("hierarchical", "pooled", scheme="lodo", k=k),
          "vs separate", ev.win_draw_loss("hierarchical", "separate", scheme="lodo", k=k))
lodo_ll = summ["loglik"].unstack("setting")
K_MAX = lodo_ll.index.max()
adapt20 = ev.win_draw_loss("hierarchical", "pooled", scheme="lodo", k=20)
ax = ev.plot()
ax.set_ylim(summ["loglik"].min() if QUICK else -7.0, None)
plt.savefig(FIG / "08_lodo.png", dpi=100, bbox_inches="tight")

# %% [markdown]
# ![learning curves](figures/08_lodo.png)
#
# With no rows the new year gets the population (the same as pooling); each adapted row
# moves only the nodes whose `s_D` says years differ. Separate fits from {{K_MAX}} rows are
# {{lodo_ll.loc[K_MAX, "hierarchical"] - lodo_ll.loc[K_MAX, "separate"]:.1f}} nats per row behind.
# Against pooling, 20 rows buy little: most of what a GSS year looks like is what every
# year looks like, and pooling gets the 20 rows too. Here (populations of
# {{len(sub) // len(years)}} rows a year) adapting beats pooling in {{adapt20["wins"]}} years of
# {{len(years)}} at `k = 20`; the mean gain over pooling is
# {{lodo_ll.loc[20, "hierarchical"] - lodo_ll.loc[20, "pooled"]:.4f}} nats per row at 20 rows and
# {{lodo_ll.loc[K_MAX, "hierarchical"] - lodo_ll.loc[K_MAX, "pooled"]:.4f}} at {{K_MAX}}. With the whole
# of the other years as population see section (d) and the benchmarks page
# (`python benchmarks/bench_domains.py --lodo 0 20`).
#
# ## (c) Which years differ, and where?
#
# `net.domain_report()` gives, per year and node, the divergence of the year's CPT from the
# population's (Jensen-Shannon and KL, weighted by the year's own parent configurations),
# an interval from the estimates' uncertainty, the year's rows and the weight its tables
# give the population.

# %%
rep = net.domain_report(random_state=0)
top = rep.sort_values("js", ascending=False).head(8)
print(top.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
print(rep.groupby("node")["js"].mean().sort_values(ascending=False).round(5).to_dict())
ax = net.plot_domains("educGroup")
plt.savefig(FIG / "08_forest.png", dpi=100, bbox_inches="tight")
by_node = rep.groupby("node")["js"].mean().sort_values(ascending=False)
edu_js = rep[rep["node"] == "educGroup"].sort_values("js", ascending=False)
edu = pd.crosstab(gss["year"], gss["educGroup"], normalize="index")
early, late = list(edu_js["domain"].iloc[:2]), list(gss["year"].cat.categories[-2:])
low, high = edu.columns[0], edu.columns[-1]


def share(years, level):
    v = [edu.loc[y, level] for y in years]
    return f"{min(v):.0%}" if round(min(v), 2) == round(max(v), 2) else f"{min(v):.0%}-{max(v):.0%}"

# %% [markdown]
# ![forest plot](figures/08_forest.png)
#
# By mean Jensen-Shannon divergence the nodes order as {{", ".join(by_node.index)}}: the
# years differ most in who answered, least in how vocabulary depends on education, age
# and sex. On education the years that stand out most are {{early[0]}} and {{early[1]}}:
# {{share(early, low)}} had `{{low}}` of school and {{share(early, high)}} `{{high}}`, against
# {{share(late, low)}} and {{share(late, high)}} in {{late[0]}}-{{late[1]}}. The intervals
# come from joint posterior draws of the year's tables and of the population's (the
# draws of `sample_parameters`); two drawn tables differ by their noise even where the
# truths do not, so the divergence of draws is biased upward and the point can sit near
# the interval's lower end.
#
# ## Chile: regions
#
# {{chile["region"].nunique()}} regions, the smallest ({{chile["region"].value_counts().idxmin()}}) with
# {{chile["region"].value_counts().min()}} rows.

# %%
cnet = bs.fit(CHILE, chile, method="hmd", domain="region")
print({n: round(cnet.cpd(n).estimate.info["s_domain"], 1) for n in cnet.nodes})
crep = cnet.domain_report(random_state=0)
print(crep.sort_values("js", ascending=False).head(6).to_string(index=False, float_format=lambda v: f"{v:.4f}"))
c_dom = pd.Series({n: cnet.cpd(n).estimate.info["s_domain"] for n in cnet.nodes}).sort_values()

# %% [markdown]
# The regions differ most in {{listed(c_dom.iloc[:2], "{:,.1f}")}} (`s_D`), least in
# {{listed(c_dom.iloc[2:])}}: with these concentrations the plebiscite vote is explained by
# who the voters are rather than by where they live, in this structure.

# %% [markdown]
# A classifier per region is one call: the structure is learned on the pooled rows and
# every CPT is fitted per region.

# %%
X, y = chile.drop(columns="vote"), chile["vote"]
clf = bs.BNClassifier(structure="tan", method="hmd", domain="region").fit(X, y)
print(clf.dag_.modelstring())
print(clf.predict_proba(X.iloc[:3]).round(3))

# %% [markdown]
# ## (d) Adapting a new domain: how unusual is it?
#
# `net.adapt(rows, domain)` does not hand the newcomer the fitted domains' `s_D`: it
# learns the new domain's own concentration, node by node, from its posterior given the
# population and its rows. The fit keeps each fitted domain's evidence about its own
# `s_D` (its rows against the pooled tables of the others) and learns from them how a
# domain's `s_D` is spread. A new domain is then like one of the fitted domains (in
# every node at once) or of a type of its own (probability `1/(D+1)` a priori, `D`
# fitted domains), and its rows weigh the possibilities: a typical domain borrows as
# much as the typical ones, rows unlike every fitted domain's keep more of their own
# counts.
#
# Leave each domain out; fit the population on all rows of the others; adapt from 20 rows
# of the left-out domain and score its other rows. Beside it: the same estimator pooled
# (the others plus the 20 rows) and the separate fit (BDeu, iss 1, the 20 rows alone).
# `s_D` is what the adapted domain learned (geometric mean over the nodes), `shrinkage`
# the population's weight in its tables (both from `domain_report`).

# %%
def learned(net, d):
    rep = net.domain_report(draws=0)
    rep = rep[rep["domain"] == d]
    return np.exp(np.log(rep["s_domain"]).mean()), rep["shrinkage"].mean()


def leave_one_out(df, ms, domain, k, method, seed=7):
    nodes = [c for c in df if c != domain]
    rng = np.random.default_rng(seed)
    out = []
    for d in df[domain].cat.categories[-2 if QUICK else 0:]:  # quick: the last two
        others = df[df[domain] != d].copy()
        others[domain] = others[domain].cat.remove_unused_categories()
        own = df.loc[df[domain] == d, nodes]
        idx = rng.permutation(len(own))
        ad, te = own.iloc[idx[:k]], own.iloc[idx[k:]]
        new = bs.fit(ms, others, method=method, domain=domain, random_state=0).adapt(ad, d)
        pooled = bs.fit(ms, pd.concat([others[nodes], ad]), method=method, random_state=0)
        alone = bs.fit(ms, ad, method="bayes", iss=1)
        s, w = learned(new, d)
        out.append({domain: d, "adapt": new.for_domain(d).logpdf(te).mean(), "pooled": pooled.logpdf(te).mean(),
                    "separate": alone.logpdf(te).mean(), "s_D": s, "shrinkage": w})
    res = pd.DataFrame(out)
    res["vs pooled"], res["vs separate"] = res["adapt"] - res["pooled"], res["adapt"] - res["separate"]
    return res


def tally(res):
    return (f"beats pooled {(res['vs pooled'] > 0).sum()}/{len(res)}, separate "
            f"{(res['vs separate'] > 0).sum()}/{len(res)}, worst gap to pooled {min(res['vs pooled'].min(), 0):+.4f}")


fmt = lambda v: f"{v:.4f}" if abs(v) < 100 else f"{v:.0f}"
methods = ("hmd", "hdp") if not QUICK else ("hmd",)
lodo = {}
for name, df, domain in (("gssvocab", gss if not QUICK else sub, "year"), ("chile", chile, "region")):
    ms = GSS if name == "gssvocab" else CHILE
    wide = None
    for method in methods:
        res = lodo[name, method] = leave_one_out(df, ms, domain, 20, method)
        print(f"{name}, {method}, adapt from 20 rows: {tally(res)}")
        cols = res[[domain, "adapt", "pooled", "s_D", "shrinkage"]].rename(
            columns=lambda c: c if c == domain else f"{c} {method}")
        wide = cols if wide is None else wide.merge(cols, on=domain)
    print(wide.assign(separate=res["separate"]).to_string(index=False, float_format=fmt))
every = pd.concat(lodo.values())


def geo_range(name):
    s = pd.concat([lodo[name, m]["s_D"] for m in methods])
    return f"{s.min():,.0f} to {s.max():,.0f}"


def pooled_tally(name, method="hmd"):
    r = lodo[name, method]
    return f"{(r['vs pooled'] > 0).sum()} of {len(r)}"


method_gap = {name: max(abs(lodo[name, methods[0]]["adapt"] - lodo[name, m]["adapt"]).max() for m in methods)
              for name in ("gssvocab", "chile")}

# %% [markdown]
# The adapted GSS years learn an `s_D` of {{geo_range("gssvocab")}}, the Chilean regions
# {{geo_range("chile")}}, and take {{every["shrinkage"].min():.0%}} to {{every["shrinkage"].max():.0%}} of
# their tables from the population, with 20 rows of their own. Adapting beats the separate
# fit in {{(every["vs separate"] > 0).sum()}} of {{len(every)}} cases, by
# {{every["vs separate"].min():.1f}} to {{every["vs separate"].max():.1f}} nats per row, and the pooled
# refit (hmd) in {{pooled_tally("gssvocab")}} years and {{pooled_tally("chile")}} regions, from
# {{every["vs pooled"].min():+.4f}} to {{every["vs pooled"].max():+.4f}} nats per row. The estimators
# ({{", ".join(methods)}}) score within {{method_gap["gssvocab"]:.3f}} nats of each other on GSS and
# {{method_gap["chile"]:.3f}} on Chile: the domain level is the same learned pooling for all,
# only the pooled tables above it differ.
#
# What if a domain is unusual? Simulated sites of known spread: six sites of 600 rows,
# every table of `A` and of `Y | A` drawn as `Dir(s * population)`, with `s = 100` for
# five of them (alike) and `s = 1` for the sixth (far from the rest). Eight simulated
# populations; each site left out in turn and adapted from 20 or 50 of its rows.

# %%
def spread_sites(seed, n_sites=6, per=600, near=100.0, far=1.0):
    rng = np.random.default_rng(seed)
    pop_a, pop_y = rng.dirichlet(np.full(4, 2.0)), rng.dirichlet(np.full(5, 2.0), size=4)
    parts = []
    for d in range(n_sites):
        s = far if d == n_sites - 1 else near
        pa, py = rng.dirichlet(s * pop_a), np.array([rng.dirichlet(s * row) for row in pop_y])
        a = rng.choice(4, per, p=pa)
        y = (py[a].cumsum(axis=1) < rng.random(per)[:, None]).sum(axis=1).clip(max=4)
        parts.append(pd.DataFrame({"site": f"s{d}", "A": a, "Y": y}))
    return pd.concat(parts, ignore_index=True).astype(str).astype("category")


sims = []
for seed in range(8 if not QUICK else 1):
    for k in (20, 50) if not QUICK else (20,):
        for method in methods:
            r = leave_one_out(spread_sites(seed), "[A][Y|A]", "site", k, method, seed=seed)
            kind = np.where(r["site"] == "s5", "atypical", "typical")
            sims.append(r.assign(population=seed, k=k, method=method, kind=kind))
sims = pd.concat(sims, ignore_index=True)
first = sims[(sims["population"] == 0) & (sims["k"] == 20) & (sims["method"] == "hmd")]
print(first.drop(columns=["population", "k", "method"]).to_string(index=False, float_format=fmt))
g = sims.groupby(["kind", "k", "method"])
simtab = pd.concat({
    "adapt": g["adapt"].mean(), "pooled": g["pooled"].mean(), "separate": g["separate"].mean(),
    "s_D (geo. mean)": g["s_D"].agg(lambda s: np.exp(np.log(s).mean())), "shrinkage": g["shrinkage"].mean(),
    "beats pooled": g["vs pooled"].agg(lambda v: f"{(v > 0).sum()}/{len(v)}"),
    "beats separate": g["vs separate"].agg(lambda v: f"{(v > 0).sum()}/{len(v)}"),
}, axis=1)
print(simtab.to_string(float_format=fmt))
KS = sorted(sims["k"].unique())
sim = sims[sims["method"] == "hmd"].groupby(["kind", "k"])
far_sep = sim["vs separate"].mean()["atypical"]

# %% [markdown]
# With `hmd` at {{KS[0]}} rows, the typical sites learn `s_D` of
# {{simtab.loc[("typical", KS[0], "hmd"), "s_D (geo. mean)"]:,.0f}} (geometric mean) and take
# {{simtab.loc[("typical", KS[0], "hmd"), "shrinkage"]:.0%}} of their tables from the population; the
# far site learns {{simtab.loc[("atypical", KS[0], "hmd"), "s_D (geo. mean)"]:.1f}} and keeps its own
# counts (population weight {{simtab.loc[("atypical", KS[0], "hmd"), "shrinkage"]:.0%}} at {{KS[0]}} rows,
# {{simtab.loc[("atypical", KS[-1], "hmd"), "shrinkage"]:.0%}} at {{KS[-1]}}). So the far site beats the
# pooled refit by {{sim["vs pooled"].mean()["atypical", KS[0]]:.2f}} nats per row on average, and
# stands {{far_sep[KS[0]]:+.3f}} nats from its separate fit (ahead in
# {{simtab.loc[("atypical", KS[0], "hmd"), "beats separate"]}} runs): its own rows are most of what
# there is to know. The typical sites beat pooling in
# {{simtab.loc[("typical", KS[0], "hmd"), "beats pooled"]}} runs at {{KS[0]}} rows and
# {{simtab.loc[("typical", KS[-1], "hmd"), "beats pooled"]}} at {{KS[-1]}}, and their separate fits in
# {{simtab.loc[("typical", KS[0], "hmd"), "beats separate"]}} and {{simtab.loc[("typical", KS[-1], "hmd"), "beats separate"]}}.
#
# A classifier takes a new domain the same way: `clf.adapt(X, y, domain)` adapts every
# member network (each of an ESKDB's too), and `predict_proba` answers that domain's rows
# with its tables. Each Chilean region in turn is the new one: a TAN classifier with
# `domain="region"` fitted on the other four, then adapted from 20 labelled rows of the
# new region; held-out log loss of its other rows before (the population's tables, what
# an unseen region gets, with an `UnseenDomainWarning`), after, and of a pooled
# classifier refitted with the 20 rows.

# %%
from pybncsmooth.classifiers.metrics import log_loss

feats = [c for c in chile if c != "vote"]
out = []
for region in chile["region"].cat.categories[-2 if QUICK else 0:]:
    old = chile[chile["region"] != region].copy()
    old["region"] = old["region"].cat.remove_unused_categories()
    new = chile[chile["region"] == region].sample(frac=1, random_state=3)
    rows, test = new.iloc[:20], new.iloc[20:]
    clf = bs.BNClassifier(structure="tan", method="hmd", domain="region").fit(old[feats], old["vote"])
    y = pd.Categorical(test["vote"], categories=clf.classes_).codes
    before = log_loss(clf.predict_proba(test[feats]), y)
    clf.adapt(rows[feats], rows["vote"], region)
    both = pd.concat([old, rows])
    pooled = bs.BNClassifier(structure="tan", method="hmd").fit(both[feats].drop(columns="region"), both["vote"])
    out.append({"region": region, "held out": len(test), "before": before,
                "after adapt": log_loss(clf.predict_proba(test[feats]), y),
                "pooled refit": log_loss(pooled.predict_proba(test[feats].drop(columns="region")), y)})
print(pd.DataFrame(out).to_string(index=False, float_format=fmt))
regions = pd.DataFrame(out).set_index("region")
helped = (regions["before"] - regions["after adapt"]).sort_values(ascending=False)
hurt = ", ".join(f"{r} ({regions.loc[r, 'before']:.3f} to {regions.loc[r, 'after adapt']:.3f})"
                 for r in helped.index[helped < 0]) or "no region"

# %% [markdown]
# Twenty rows help most in {{helped.index[0]}} (log loss {{regions.loc[helped.index[0], "before"]:.3f}} to
# {{regions.loc[helped.index[0], "after adapt"]:.3f}}); they cost a little in {{hurt}}; adapting beats
# the pooled refit in {{(regions["after adapt"] < regions["pooled refit"]).sum()}} regions of
# {{len(regions)}}: the refit gets the same 20 rows but spends them on everyone.

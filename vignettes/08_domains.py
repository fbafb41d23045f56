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
# over pooled and separate fits? (c) which years differ, and where? (d) what should a new
# domain borrow: a fitted domain's tables, the population's, or little? (e) ten thousand
# users.
#
# Run by hand: `python vignettes/run.py vignettes/08_domains.py` (the full run takes about
# 4 minutes on one core); `--quick` runs the reduced version the test suite runs. The
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
# ## (d) Adapting a new domain: a copy of a fitted one, or a type of its own
#
# What should 20 rows of a new domain borrow? If it is typical, the population's tables;
# if it is like one of the unusual fitted domains, *that* domain's tables; if it is unlike
# all of them, mostly its own rows; and real domains depart node by node. `net.adapt(rows,
# domain)` lets each node choose, weighing the choices by how likely that node's rows are
# under each: a priori a node's table is with probability 1/2 a copy of one of the `D`
# fitted domains' (1/(2D) each, as the fit knows them), with 1/4 a type of its own drawn
# around the population as the fitted domains are (their shared `s_D`), with 1/4 unusual
# (one row's weight toward the population); with probability `0.99` all nodes make the same
# choice (a node's 20 rows are few: at 1/2 the nodes parted far too often), otherwise each
# its own. The adapted tables are the posterior means, a mixture of Dirichlets per node.
# `domain_report()` says, per node, what the domain was taken for: `p_new` (a type of its
# own), `like` (the fitted domain it most likely copies) and `p_like`.
#
# Leave each domain out; fit the population on all rows of the others; adapt from 20 rows
# of the left-out domain and score its other rows. Beside it: the same estimator pooled
# (the others plus the 20 rows) and the separate fit (BDeu, iss 1, the 20 rows alone);
# `regret` is how far adapt falls behind the better of the two (negative: ahead of both).

# %%
def learned(net, d):
    """p_new averaged over the nodes, the copy of the node likeliest to copy, the shrinkage."""
    rep = net.domain_report(draws=0)
    rep = rep[rep["domain"] == d]
    best = int(np.argmax(rep["p_like"].fillna(-1.0).to_numpy()))
    return rep["p_new"].mean(), rep["like"].iloc[best], rep["shrinkage"].mean()


def leave_one_out(df, ms, domain, k, method, seed=7, which=None):
    nodes = [c for c in df if c != domain]
    rng = np.random.default_rng(seed)
    out = []
    for d in which if which is not None else df[domain].cat.categories[-2 if QUICK else 0:]:  # quick: the last two
        others = df[df[domain] != d].copy()
        others[domain] = others[domain].cat.remove_unused_categories()
        own = df.loc[df[domain] == d, nodes]
        idx = rng.permutation(len(own))
        ad, te = own.iloc[idx[:k]], own.iloc[idx[k:]]
        new = bs.fit(ms, others, method=method, domain=domain, random_state=0).adapt(ad, d)
        pooled = bs.fit(ms, pd.concat([others[nodes], ad]), method=method, random_state=0)
        alone = bs.fit(ms, ad, method="bayes", iss=1)
        p_new, like, w = learned(new, d)
        out.append({domain: d, "adapt": new.for_domain(d).logpdf(te).mean(), "pooled": pooled.logpdf(te).mean(),
                    "separate": alone.logpdf(te).mean(), "p_new": p_new, "like": like, "shrinkage": w})
    res = pd.DataFrame(out)
    res["regret"] = np.maximum(res["pooled"], res["separate"]) - res["adapt"]
    return res


def tally(res):
    return (f"regret over 0.01 in {(res['regret'] > 0.01).sum()}/{len(res)}, worst {res['regret'].max():+.4f}, "
            f"mean gain over pooled {(res['adapt'] - res['pooled']).mean():+.4f}, over separate "
            f"{(res['adapt'] - res['separate']).mean():+.4f}")


fmt = lambda v: f"{v:.4f}" if abs(v) < 100 else f"{v:.0f}"
methods = ("hmd", "hdp") if not QUICK else ("hmd",)
lodo = {}
for name, df, domain in (("gssvocab", gss if not QUICK else sub, "year"), ("chile", chile, "region")):
    ms = GSS if name == "gssvocab" else CHILE
    for method in methods:
        res = lodo[name, method] = leave_one_out(df, ms, domain, 20, method)
        print(f"{name}, {method}, adapt from 20 rows: {tally(res)}")
    print(res.to_string(index=False, float_format=fmt))
every = pd.concat([r.rename(columns={"year": "domain", "region": "domain"}).assign(data=n, method=m)
                   for (n, m), r in lodo.items()], ignore_index=True)
every["vs pooled"], every["vs separate"] = every["adapt"] - every["pooled"], every["adapt"] - every["separate"]
gss_d, chile_d = (every[every["data"] == n] for n in ("gssvocab", "chile"))
shown = lodo["gssvocab", methods[-1]]  # the GSS table printed above
top_gss = shown.loc[(shown["adapt"] - shown["pooled"]).nlargest(3).index]
method_gap = max((lodo[n, methods[0]]["adapt"] - lodo[n, m]["adapt"]).abs().max() for n, m in lodo)


def described(r):
    """Each domain of ``r``: its gain over pooling, the fitted domain it was taken for, p_new."""
    return ", ".join(f"{x.iloc[0]} ({x['adapt'] - x['pooled']:+.3f}, like {x['like']}, p_new {x['p_new']:.2f})"
                     for _, x in r.iterrows())


def over(name):
    return " and ".join(f"{(lodo[name, m]['regret'] > 0.01).sum()} of {len(lodo[name, m])} ({m})" for m in methods)


# %% [markdown]
# On GSS adapting from 20 rows gains {{gss_d["vs pooled"].mean():+.4f}} nats per row over pooling
# on average and {{gss_d["vs separate"].mean():+.1f}} over the separate fits. The largest gains over
# pooling: {{described(top_gss)}}
# ({{methods[-1]}}; gain over pooling, the fitted year it was most likely taken for, `p_new`): years
# read as copies of another fitted year, not as the population's centre. Its regret is
# over `0.01` in {{over("gssvocab")}} years, at worst {{gss_d["regret"].max():+.4f}}: in
# {{described(shown[shown["regret"] > 0.01]) or "no year"}} the 20 rows are read as a copy of a
# distant year or, about as likely, as a new type, and adapt falls behind pooling.
#
# On Chile the regret is over `0.01` in {{over("chile")}} regions (at worst
# {{chile_d["regret"].max():+.4f}}) and the gain over pooling is {{chile_d["vs pooled"].mean():+.4f}}: the
# regions barely differ (their `s_D` above), so the pooled refit does as well as anything;
# the separate fits are {{chile_d["vs separate"].mean():.1f}} nats behind. {{" and ".join(methods)}}
# adapt within {{method_gap:.4f}} nats per row of each other: the domain level and adapt's
# mixture are the same for every estimator, only the pooled tables above them differ.
#
# ### A domain that departs like a fitted one
#
# Six simulated domains shaped like a real case: a binary outcome `Y` with one parent `P`
# that barely differs between domains, outcome rates `RATES = (0.64, 0.63, 0.35, 0.34, 0.25,
# 0.06)` (domains `d0` to `d5`), 600-900 rows each. Leave the domain at `0.64` out and adapt
# it from 20 of its rows: only the domain at `0.63` looks like it. A typical one (`0.34`) is
# adapted the same way. Four draws of the 20 rows.

# %%
RATES = (0.64, 0.63, 0.35, 0.34, 0.25, 0.06)


def six_domains(seed=0):
    rng = np.random.default_rng(seed)
    parts = []
    for d, p in enumerate(RATES):
        n = int(rng.integers(600, 901))
        share = 0.5 + rng.uniform(-0.02, 0.02)
        par = rng.random(n) < share
        y = rng.random(n) < 1 / (1 + np.exp(-(np.log(p / (1 - p)) + np.where(par, 0.3, -0.3))))
        parts.append(pd.DataFrame({"dom": f"d{d}", "P": np.where(par, "p1", "p0"), "Y": np.where(y, "y1", "y0")}))
    return pd.concat(parts, ignore_index=True).astype("category")


six = six_domains()
print(six.groupby("dom", observed=True)["Y"].apply(lambda y: round((y == "y1").mean(), 3)).to_dict())
res6 = pd.concat([leave_one_out(six, "[P][Y|P]", "dom", 20, "hmd", seed=s, which=["d0", "d3"]).assign(draw=s)
                  for s in (7, 1, 2, 3)], ignore_index=True)
print(res6.to_string(index=False, float_format=fmt))


def adapt_rows(df, domain, d, k, seed):
    """The ``k`` rows ``leave_one_out`` adapts ``d`` from when ``d`` is the first domain it leaves out."""
    own = df.loc[df[domain] == d]
    return own.iloc[np.random.default_rng(seed).permutation(len(own))[:k]]


rate = {f"d{i}": p for i, p in enumerate(RATES)}
d0, d3 = (res6[res6["dom"] == d].set_index("draw") for d in ("d0", "d3"))
d0["positives"] = [int((adapt_rows(six, "dom", "d0", 20, s)["Y"] == "y1").sum()) for s in d0.index]
copies, behind, elsewhere = d0[d0["like"] == "d1"], d0[d0["regret"] > 0.01], d0[d0["like"] != "d1"]


def draws(r):
    """Each draw of ``r``: its positives of 20, the domain it was taken for (with its rate), p_new, regret."""
    return "; ".join(f"draw {s}: {x['positives']} positive, like {x['like']} ({rate[x['like']]}), "
                     f"p_new {x['p_new']:.2f}, regret {x['regret']:+.4f}" for s, x in r.iterrows())


# %% [markdown]
# The domain at `0.64` is taken for a copy of the one at `0.63` (`like` is `d1`) in
# {{len(copies)}} draws of {{len(d0)}}, and adapting beats pooling in {{(d0["adapt"] > d0["pooled"]).sum()}} of the
# {{len(d0)}}, by {{(d0["adapt"] - d0["pooled"]).min():.2f}} to {{(d0["adapt"] - d0["pooled"]).max():.2f}} nats per row:
# the pooled refit averages it with domains at `0.35` and below. It is not always ahead of
# the separate fit: the regret is over `0.01` in {{len(behind)}} of the {{len(d0)}} draws ({{draws(behind)}}).
# Twenty rows with that few positives sit between the domains near `0.63` and those near
# `0.35`; `d1` is still the likeliest single copy, but with `p_new` that high the mixture
# keeps weight on lower rates, and the separate fit, which follows the 20 rows alone, does
# better. Where the rows look like a typical domain instead ({{draws(elsewhere) or "no draw"}}),
# adapt is ahead of both. The typical domain at `0.34` is taken for
# {{", ".join(f"{l} ({rate[l]})" for l in d3["like"].unique())}} and its regret is at most
# {{d3["regret"].max():+.4f}} nats per row in every draw. Twenty rows of one domain can look like
# twenty of another: `python benchmarks/bench_domains.py --bound` finds pairs of draws of
# `d0` and `d3` that no estimate keeps both within `0.01`, and the benchmarks page shows how
# `adapt(new_type=)` trades these cases.
#
# ### A domain that borrows one node and keeps another of its own
#
# Six simulated domains with two nodes, a group `G` and an outcome `Y | G`, the two
# departing independently: group shares `P(G = g1)` of `0.12, 0.04, 0.65, 0.47, 0.67, 0.48`
# and outcome rates of `0.64, 0.63, 0.35, 0.34, 0.25, 0.06` (`d0` to `d5`), 400 rows each.
# `d5` is like `d3` in its group share and like no domain in its outcome. Leave it out and
# adapt it from 20 of its rows.

# %%
SHARES, RATES2 = (0.12, 0.04, 0.65, 0.47, 0.67, 0.48), (0.64, 0.63, 0.35, 0.34, 0.25, 0.06)


def two_nodes(seed=0, per=400):
    rng = np.random.default_rng(seed)
    parts = []
    for d, (g, p) in enumerate(zip(SHARES, RATES2)):
        grp = rng.random(per) < g
        y = rng.random(per) < 1 / (1 + np.exp(-(np.log(p / (1 - p)) + np.where(grp, 0.2, -0.2))))
        parts.append(pd.DataFrame({"dom": f"d{d}", "G": np.where(grp, "g1", "g0"), "Y": np.where(y, "y1", "y0")}))
    return pd.concat(parts, ignore_index=True).astype("category")


gy = two_nodes()
own5 = gy[gy["dom"] == "d5"].drop(columns="dom")
rows5 = own5.iloc[np.random.default_rng(2).permutation(len(own5))[:20]]
pop5 = bs.fit("[G][Y|G]", gy[gy["dom"] != "d5"], method="hmd", domain="dom", random_state=0)
a5 = pop5.adapt(rows5, "d5")
sep5 = bs.fit("[G][Y|G]", rows5, method="bayes", iss=1)
rep5 = a5.domain_report(draws=0).set_index(["domain", "node"]).loc["d5"]
print(rep5[["n", "p_new", "like", "p_like", "shrinkage"]].to_string(float_format=fmt))
j5 = a5.domains.index("d5")
y5 = pd.DataFrame({"adapted": a5.cpt("Y")[1, :, j5], "separate": sep5.cpt("Y")[1],
                   "population": pop5.for_domain(None).cpt("Y")[1]}, index=["g0", "g1"])
print("P(Y = y1 | G):")
print(y5.to_string(float_format=fmt))
ev5 = bs.evaluate_domains("[G][Y|G]", gy, "dom", k_grid=(20,), n_draws=8 if not QUICK else 2, random_state=1)
by5 = ev5.summary(by_domain=True).loc[("lodo", 20, "hierarchical")]
print(by5[["loglik", "regret", "max_regret", "n_draws"]].to_string(float_format=fmt))

g5 = rep5.loc["G"]
if g5["shrinkage"] > 0.25:
    g_story = (f"it borrows: most like {g5['like']} (`p_like` {g5['p_like']:.2f}), {g5['shrinkage']:.0%} of its "
               "table from its prior")
else:
    g_story = (f"it does not borrow in this draw: the nodes' choices are tied (prior 0.99), and the unusual type "
               f"the outcome asks for is taken in `G` too (`p_new` {g5['p_new']:.2f}, {g5['shrinkage']:.0%} of its "
               "table from its prior); twenty rows do not say a hundred to one that the nodes part")
over5 = by5.index[by5["regret"] > 0.01].tolist()

# %% [markdown]
# Its 20 rows hold {{int((rows5["Y"] == "y1").sum())}} positive outcome(s). In `Y` the domain keeps its
# own rows: a type of its own with probability {{rep5.loc["Y", "p_new"]:.2f}}, its outcome rates
# {{y5["adapted"].iloc[0]:.3f}} and {{y5["adapted"].iloc[1]:.3f}} beside the separate fit's
# {{y5["separate"].iloc[0]:.3f}} and {{y5["separate"].iloc[1]:.3f}}, far from the population's
# {{y5["population"].iloc[0]:.2f}} and {{y5["population"].iloc[1]:.2f}}. In `G` {{g_story}}.
#
# Over {{int(by5["n_draws"].iloc[0])}} draws of 20 rows (`evaluate_domains(..., n_draws=)`, each
# domain left out in turn), `d5`'s regret to the better of pooling and its separate fit
# averages {{by5.loc["d5", "regret"]:+.4f}} nats per row (worst draw {{by5.loc["d5", "max_regret"]:+.4f}}), `d3`'s
# {{by5.loc["d3", "regret"]:+.4f}}; the domains averaging more than `0.01` behind: {{", ".join(over5) or "none"}}.
# This set is the hard case: `d3` sits near the population's centre in both nodes, and
# its draws of 20 rows can look like `d2` or `d4`, whose tables adapt then copies; `d5`
# departs in one node only. Choosing node by node with the choices tied at 1/2 did a
# little better on this set (in the benchmark's draws) but far worse on real data (the
# benchmarks page).
#
# What if a domain is unlike every fitted one? Simulated sites of known spread: six sites
# of 600 rows, every table of `A` and of `Y | A` drawn as `Dir(s * population)`, with
# `s = 100` for five of them (alike) and `s = 1` for the sixth (far from the rest). Eight
# simulated populations; each site left out in turn and adapted from 20 or 50 of its rows.

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
    "p_new": g["p_new"].mean(), "shrinkage": g["shrinkage"].mean(),
    "regret > 0.01": g["regret"].agg(lambda v: f"{(v > 0.01).sum()}/{len(v)}"),
    "worst regret": g["regret"].max(),
}, axis=1)
print(simtab.to_string(float_format=fmt))
KS = sorted(sims["k"].unique())
tab = simtab.xs(methods[0], level="method")  # the first estimator's rows
typ0, typ1, far0, far1 = (tab.loc[(kind, k)] for kind in ("typical", "atypical") for k in (KS[0], KS[-1]))
far = sims[(sims["kind"] == "atypical") & (sims["method"] == methods[0])].set_index(["k", "population"])
far_behind = far.loc[KS[0]][lambda r: r["regret"] > 0.01]


def populations(r):
    return "; ".join(f"population {i}: p_new {x['p_new']:.2f}, population weight {x['shrinkage']:.0%}, "
                     f"regret {x['regret']:+.3f}" for i, x in r.iterrows())

# %% [markdown]
# With `{{methods[0]}}` at {{KS[0]}} rows, the typical sites are taken for a new type with probability
# {{typ0["p_new"]:.2f}} on average and take {{typ0["shrinkage"]:.0%}} of their tables from the population;
# adapt minus pooled is {{typ0["adapt"] - typ0["pooled"]:+.3f}} nats per row on average, adapt minus
# separate {{typ0["adapt"] - typ0["separate"]:+.2f}}; the regret is over `0.01` in {{typ0["regret > 0.01"]}} runs
# (at worst {{typ0["worst regret"]:+.4f}}), and in {{typ1["regret > 0.01"]}} at {{KS[-1]}} rows (at worst
# {{typ1["worst regret"]:+.4f}}). The far site is taken for a new type with probability
# {{far0["p_new"]:.2f}} on average at {{KS[0]}} rows and {{far1["p_new"]:.2f}} at {{KS[-1]}}, and keeps its own
# counts (population weight {{far0["shrinkage"]:.0%}} and {{far1["shrinkage"]:.0%}}): adapt minus pooled is
# {{far0["adapt"] - far0["pooled"]:+.2f}} nats per row on average. Adapt minus its separate fit is
# {{far0["adapt"] - far0["separate"]:+.3f}} on average at {{KS[0]}} rows, and its regret is over `0.01` in
# {{far0["regret > 0.01"]}} populations ({{populations(far_behind)}}): where 20 rows leave `p_new`
# short of 1 the far site keeps a large part of the population's tables and falls
# furthest behind the separate fit, which has only its rows and here needs nothing else.
# At {{KS[-1]}} rows the far site's worst regret is {{far1["worst regret"]:+.4f}}: its own rows are most of
# what there is to know.
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


# %% [markdown]
# ## (e) Many users
#
# The multi-user case: one table set per user, thousands of them, each with a handful of
# rows. Ten thousand users of 20 rows on the asia network (every user's tables drawn
# around asia's), fitted pooled and with `domain="user"`; a new user adapted from 20
# rows; and a frame mixing rows of many users, each answered by its user's tables.

# %%
import time

asia = bs.fit(bs.datasets.structure("asia"), bs.load_dataset("asia"), method="bayes")  # the bundled asia


def users(n_users, rows, seed=0):
    rng = np.random.default_rng(seed)
    user = np.repeat(np.arange(n_users), rows)
    cols = {}
    for v in asia.dag.topological_order():
        t = asia.cpt(v)
        base = np.clip(np.moveaxis(t.reshape(t.shape[0], -1), 0, -1), 1e-3, None)
        base /= base.sum(axis=1, keepdims=True)
        cfg = np.zeros(len(user), dtype=np.int64)
        for p in asia.parents(v):
            cfg = cfg * len(asia.levels(p)) + cols[p]
        g = rng.standard_gamma(np.broadcast_to(50 * base, (n_users,) + base.shape))
        cum = (g / g.sum(axis=2, keepdims=True))[user, cfg].cumsum(axis=1)
        cols[v] = (cum < rng.random(len(user))[:, None]).sum(axis=1).clip(max=t.shape[0] - 1)
    df = pd.DataFrame({v: pd.Categorical.from_codes(c, asia.levels(v)) for v, c in cols.items()})
    return df.assign(user=pd.Categorical.from_codes(user, [f"u{i}" for i in range(n_users)]))


n_users = 10_000 if not QUICK else 500
many = users(n_users, 20)
nodes = [c for c in many if c != "user"]
bs.fit(asia.modelstring(), many.iloc[:2000], method="hmd", domain="user")  # compile once
t0 = time.perf_counter()
pooled = bs.fit(asia.modelstring(), many[nodes], method="hmd")
t1 = time.perf_counter()
per_user = bs.fit(asia.modelstring(), many, method="hmd", domain="user")
t2 = time.perf_counter()
newcomer = users(1, 20, seed=1).drop(columns="user")
per_user.adapt(newcomer, "newcomer")
t3 = time.perf_counter()
grown = per_user.adapt(newcomer, "newcomer")
t4 = time.perf_counter()
print(f"{n_users} users x 20 rows: pooled fit {t1 - t0:.2f} s, per-user fit {t2 - t1:.2f} s, "
      f"adapt a new user {1e3 * (t4 - t3):.1f} ms")
mixed = many.sample(8, random_state=1).assign(user=lambda d: d["user"].astype(str))
mixed.loc[mixed.index[0], "user"] = "newcomer"
scored = mixed.assign(per_user=grown.logpdf(mixed), pooled=pooled.logpdf(mixed[nodes]))
print(scored.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
s_users = pd.Series({n: per_user.cpd(n).estimate.info["s_domain"] for n in nodes})
print("learned s_D:", s_users.round(1).to_dict())
same = scored[scored.duplicated(nodes, keep=False)].sort_values(nodes)

# %% [markdown]
# The users' tables were drawn as `Dir(50 * asia's)`, and the per-user fit learns `s_D` of
# {{s_users.min():.0f}} to {{s_users.max():.0f}} over the nodes (median {{s_users.median():.0f}}) from
# {{n_users:,}} users of 20 rows: it finds how far users spread without being told. That fit
# takes {{~t2 - t1:.2f}} s against {{~t1 - t0:.2f}} s for the pooled fit on the same rows
# (elapsed, on a shared machine), and adapting a new user from 20 rows
# {{~1e3 * (t4 - t3):.0f}} ms, with no refit. In the mixed frame every row is answered by its
# own user's tables (the newcomer's by its adapted ones): the per-user log-likelihoods
# differ from the pooled fit's by {{(scored["per_user"] - scored["pooled"]).abs().min():.3f}} to
# {{(scored["per_user"] - scored["pooled"]).abs().max():.3f}} nats, and the {{len(same)}} rows that share their values
# with another row get {{same["per_user"].nunique()}} different log-likelihoods, one per user, where the
# pooled fit gives {{same["pooled"].nunique()}}.

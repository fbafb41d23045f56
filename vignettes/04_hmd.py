# %% [markdown]
# # Hierarchical Multinomial-Dirichlet estimates
#
# `method="hmd"` implements the hierarchical Multinomial-Dirichlet model of Azzimonti,
# Corani and Zaffalon (2019). The columns of a CPT (one per parent
# configuration) are drawn from a Dirichlet whose parameter is itself learned,
# `alpha ~ s * Dirichlet(alpha0)`, so every column is shrunk toward a pooled
# distribution `kappa` learned from all of them. The posterior is approximated by
# variational inference (Sec. 3.1, Appendix B). With `domain=` related data sets are
# pooled: by default each domain's columns shrink toward the pooled fit's with a learned
# concentration (vignette 08); `domain_model="joint"` is the paper's Sec. 5 model, where
# each domain's joint table of a node and its parents is shrunk toward the other
# domains', which is bnlearn's `bn.fit(method = "hdir")`.
#
# This vignette (a) checks the variational moments against exact integration,
# (b) compares TAN with `hmd` and with BDeu (iss 1 and 10) on small training sets of the
# UCI data, as the paper's Figs. 7-8, (c) runs a multi-user study with simulated
# users, and (d) measures how far bnlearn's `hdir` tables are from the variational fixed
# point and whether that matters for prediction.
#
# Run by hand: `python vignettes/run.py vignettes/04_hmd.py` (the full run takes about 2
# minutes on one core); `--quick` runs the reduced version the test suite runs. The
# figures need matplotlib (`pip install ".[plot]"`).

# %%
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import pybncsmooth as bs
from pybncsmooth.data.discretize import EqualFrequencyDiscretizer
from pybncsmooth.classifiers.metrics import log_loss
from pybncsmooth.estimators.hmd import exact_alpha_moments, fit_hmd_matrix
from pybncsmooth.model.cpd import TableCPD

warnings.filterwarnings("ignore", category=bs.errors.ZeroProbabilityWarning)
QUICK = os.environ.get("PYBNCSMOOTH_VIGNETTE_QUICK") == "1"
HERE = Path(__file__).resolve().parent  # this script's folder, whatever the install
UCI = HERE / "data" / "uci"
BNLEARN = HERE.parent / "tests" / "data" / "bnlearn"  # bnlearn's outputs, kept with the tests
FIG = Path("figures")
FIG.mkdir(exist_ok=True)
pd.set_option("display.width", 200)

# %% [markdown]
# ## (a) Variational against exact posterior moments
#
# Data sampled from the model itself, as in the paper's Sec. 3.2: `alpha = s *
# Dirichlet(1)` with `s = |X|`, one `theta` per column from `Dirichlet(alpha)`, `n` rows
# spread over the columns at random. The exact posterior mean and covariance of `alpha`
# come from integrating its posterior (eq. A.3) over the simplex by adaptive quadrature
# (`exact_alpha_moments`, the integrals of the paper's App. A.3).

# %%
rng = np.random.default_rng(1)
rows = []
for R in (2,) if QUICK else (2, 3):
    for J in (2, 4) if QUICK else (2, 4, 8):
        for n in (20, 80) if QUICK else (20, 40, 80, 160):
            for _ in range(1 if QUICK else 4):
                s = float(R)
                theta = rng.dirichlet(s * rng.dirichlet(np.ones(R)), size=J)
                y = rng.integers(0, J, size=n)
                N = np.stack([rng.multinomial((y == j).sum(), theta[j]) for j in range(J)], axis=1).astype(float)
                Ea, Ca = exact_alpha_moments(N, s)
                fit = fit_hmd_matrix(N, s, 1.0)
                ny = N.sum(axis=0)
                exact = (N + Ea[:, None]) / (ny + s)
                vi = (N + fit.alpha_mean[:, None]) / (ny + s)
                rows.append(
                    {
                        "|X|": R,
                        "|Y|": J,
                        "n": n,
                        "theta MSE": ((exact - vi) ** 2).mean(),
                        "max |E alpha| diff / s": np.abs(Ea - fit.alpha_mean).max() / s,
                        "sd(alpha) VI / exact": np.sqrt(np.diag(fit.alpha_cov) / np.diag(Ca)).mean(),
                    }
                )
exact_tab = pd.DataFrame(rows).groupby(["|X|", "|Y|", "n"]).mean()
print(exact_tab.to_string(float_format=lambda v: f"{v:.2e}" if v < 0.01 else f"{v:.3f}"))
print(f"\nmean theta MSE over all cases: {exact_tab['theta MSE'].mean():.1e}")

# %% [markdown]
# The paper reports a mean squared error of about 1e-5 between the VI and the exact
# estimates of `theta`; ours is {{exact_tab['theta MSE'].mean():.1e}} on average and at most
# {{exact_tab['theta MSE'].max():.1e}}. The VI mean of `alpha` itself is an approximation: the
# factorised `q` and the bound of the paper's Lemma 6 move it by up to
# {{exact_tab['max |E alpha| diff / s'].max():.4f}} of `s` on these small cases, and the
# mean-field `q` understates the posterior spread of `alpha` (the sd ratio is between
# {{exact_tab['sd(alpha) VI / exact'].min():.2f}} and {{exact_tab['sd(alpha) VI / exact'].max():.2f}}),
# as variational approximations do. On `theta` the effect is small because each
# column's own counts dominate its estimate.
#
# ## (b) TAN with `hmd` against BDeu on small training sets
#
# The paper's protocol (Sec. 4.1): numeric columns cut into five equal-frequency bins,
# missing values replaced by the mode, the TAN structure learned once on the whole data
# set; then, for each training size `n`, ten times: sample `n` training rows, estimate the
# parameters, classify up to 1000 of the other rows (sizes above 80% of a data set are
# skipped). `hmd` uses the paper's settings
# (`s = |X|`, i.e. `s="levels"`, `alpha0 = 1`; the package's default learns `s`), BDeu
# `iss = 1` and `iss = 10`.

# %%
NAMES = (
    ["zoo", "housevotes84"]
    if QUICK
    else [
        "zoo",
        "glass",
        "sonar",
        "ionosphere",
        "housevotes84",
        "breastcancer",
        "pimaindiansdiabetes",
        "dna",
        "letterrecognition",
        "shuttle",
    ]
)
SIZES = [20, 80] if QUICK else [20, 40, 80, 160, 320, 640]
REPS = 2 if QUICK else 10
METHODS = {
    "hmd": {"method": "hmd", "s": "levels"},
    "bdeu1": {"method": "bayes", "iss": 1},
    "bdeu10": {"method": "bayes", "iss": 10},
}


def prepare(name):
    df = pd.read_csv(UCI / f"{name}.csv.gz", keep_default_na=False, na_values=["", "NA"])
    target = df.columns[0]
    num = [c for c in df.columns[1:] if pd.api.types.is_numeric_dtype(df[c]) and df[c].nunique() > 5]
    if num:
        df[num] = EqualFrequencyDiscretizer(n_bins=5).fit(df[num]).transform(df[num])
    for c in df.columns:
        s = df[c].astype(str).where(df[c].notna())
        df[c] = s.fillna(s.mode().iloc[0])  # the paper imputes the mode
        df[c] = pd.Categorical(df[c], categories=sorted(df[c].unique()))
    df = df[[c for c in df.columns if c == target or df[c].nunique() > 1]]
    return df, target


curves = []
t0 = time.perf_counter()
for name in NAMES:
    df, target = prepare(name)
    dag = bs.learn_structure(df, target, kind="tan")
    rng = np.random.default_rng(0)
    for n in SIZES:
        if n > 0.8 * len(df):  # too few rows left to test on
            continue
        for _ in range(REPS):
            perm = rng.permutation(len(df))
            train, test = df.iloc[perm[:n]], df.iloc[perm[n : n + 1000]]
            y = test[target].cat.codes.to_numpy()
            for label, kw in METHODS.items():
                proba = bs.fit(dag, train, **kw).predict_proba(test, target).to_numpy()
                acc = float(np.mean(proba.argmax(axis=1) == y))
                ll = log_loss(proba, y)
                curves.append({"dataset": name, "n": n, "method": label, "accuracy": acc, "log_loss": ll})
    print(f"{name:20s} {len(df):6d} rows {df.shape[1] - 1:4d} features  {time.perf_counter() - t0:6.1f} s")
curves = pd.DataFrame(curves)

# %%
mean = curves.groupby(["dataset", "n", "method"])[["accuracy", "log_loss"]].mean().unstack("method")
gain = pd.DataFrame(
    {
        "acc: hmd - bdeu1": mean["accuracy"]["hmd"] - mean["accuracy"]["bdeu1"],
        "acc: hmd - bdeu10": mean["accuracy"]["hmd"] - mean["accuracy"]["bdeu10"],
        "logloss: bdeu1 - hmd": mean["log_loss"]["bdeu1"] - mean["log_loss"]["hmd"],
        "logloss: bdeu10 - hmd": mean["log_loss"]["bdeu10"] - mean["log_loss"]["hmd"],
    }
)
print("mean over data sets of the gain of hmd (positive favours hmd)")
print(gain.groupby("n").mean().round(4).to_string())
wins = (gain > 0).groupby("n").sum().astype(int)
sets = gain.groupby("n").size()
print("\ndata sets where hmd wins / data sets with that many rows to spare")
print(wins.astype(str).add(" / ").add(sets.astype(str), axis=0).to_string())
points = gain.groupby("n").mean() * 100  # accuracy gains in percentage points
big = [n for n in SIZES if n in sets.index][-2:]  # the two largest sizes with data sets left

# %%
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, 2, figsize=(10, 4))
for ax, col, title in [
    (axes[0], "acc: hmd - bdeu1", "accuracy gain of hmd over BDeu iss=1"),
    (axes[1], "acc: hmd - bdeu10", "accuracy gain of hmd over BDeu iss=10"),
]:
    tab = gain[col].unstack("dataset")
    for ds in tab.columns:
        ax.plot(tab.index, tab[ds], marker="o", label=ds)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xscale("log")
    ax.set_xticks(SIZES, [str(v) for v in SIZES])
    ax.minorticks_off()
    ax.set_xlabel("training rows")
    ax.set_title(title, fontsize=10)
axes[1].legend(fontsize=7, ncol=2)
fig.tight_layout()
fig.savefig(FIG / "hmd_tan_gain.png", dpi=110)
plt.close(fig)
print("saved figures/hmd_tan_gain.png")

# %% [markdown]
# ![accuracy gain of hmd](figures/hmd_tan_gain.png)
#
# As in the paper's Figs. 7-8, the hierarchical estimates gain most on the smallest
# training sets: at {{SIZES[0]}} rows `hmd` is more accurate than BDeu iss=1 on
# {{wins.loc[SIZES[0], "acc: hmd - bdeu1"]}} of the {{sets[SIZES[0]]}} data sets
# ({{points.loc[SIZES[0], "acc: hmd - bdeu1"]:.1f}} points on average) and than iss=10 on
# {{wins.loc[SIZES[0], "acc: hmd - bdeu10"]}} ({{points.loc[SIZES[0], "acc: hmd - bdeu10"]:.1f}} points),
# and has the lower log loss on {{wins.loc[SIZES[0], "logloss: bdeu1 - hmd"]}} and
# {{wins.loc[SIZES[0], "logloss: bdeu10 - hmd"]}}. The gain shrinks as the training set
# grows: at {{big[0]}} and {{big[1]}} rows, where only the larger data sets remain
# ({{sets[big[-1]]}} of them at {{big[-1]}}), it is {{points.loc[big[0], "acc: hmd - bdeu1"]:.1f}} and
# {{points.loc[big[1], "acc: hmd - bdeu1"]:.1f}} points against iss=1 and
# {{points.loc[big[0], "acc: hmd - bdeu10"]:.1f}} and {{points.loc[big[1], "acc: hmd - bdeu10"]:.1f}}
# against iss=10. BDeu iss=10 is the stronger baseline, as in the paper.
#
# How a column is shrunk: the CPT of one feature of the TAN on 80 rows of `dna`
# (`zoo` in the reduced run). Each point is one leaf estimate; the pooled `kappa` is
# every leaf's parent in the plot, so the estimates move from the relative frequencies
# toward it, more when the column has fewer rows.

# %%
df, target = prepare("zoo" if QUICK else "dna")
dag = bs.learn_structure(df, target, kind="tan")
small = bs.fit(dag, df.sample(80, random_state=0), method="hmd")
node = max(dag.nodes, key=lambda v: len(dag.parents(v)) * 100 + len(df[v].cat.categories))
ax = small.plot_shrinkage(node)
ax.figure.savefig(FIG / "hmd_shrinkage.png", dpi=110)
plt.close(ax.figure)
print(f"node {node!r}, parents {small.parents(node)}; kappa = {np.round(small.cpd(node).estimate.info['kappa'], 3)}")
print(small.cpt_frame(node, interval=0.9).head(8).round(3).to_string(index=False))

# %% [markdown]
# ![shrinkage of hmd estimates](figures/hmd_shrinkage.png)
#
# `cpt_frame(node, interval=0.9)` adds the posterior standard deviation of each entry and
# a 90% credible interval. With the default (learned) `s` both come from the posterior of
# `(s, u)` and the exact Dirichlet columns given them; with `s="levels"` the sd is the
# paper's eq. 9 with the variational moments. Vignette 10 checks that the intervals cover.
#
# ## (c) Many users with little data each
#
# The paper's Sec. 5 application (GoEco!, 100 users) is not public; here users are
# simulated. A shared network, the TAN of `housevotes84` with its BDeu tables, is
# perturbed per user: every column of every CPT is drawn from `Dirichlet(c * shared
# column)` with `c = 20`. Each user has 100 training rows and 200 test rows. Per-user
# TANs (BDeu iss 1 and 10, fitted on the user's rows only), one pooled TAN (all users'
# rows, ignoring who is who) and `hmd` with the users as domains (the default nested
# model, the paper's joint model and bnlearn's `hdir`) compete on the test rows of every
# user: class accuracy, class log loss and the joint log-likelihood per row.

# %%
USERS = 20 if QUICK else 100
hv, hv_target = prepare("housevotes84")
shared = bs.fit(bs.learn_structure(hv, hv_target, kind="tan"), hv, method="bayes", iss=1)
rng = np.random.default_rng(7)
users, tests = [], []
for u in range(USERS):
    cpds = {}
    for node in shared.nodes:
        t = shared.cpt(node)
        cols = np.moveaxis(t, 0, -1).reshape(-1, t.shape[0])
        pert = np.stack([rng.dirichlet(20 * c + 1e-3) for c in cols])
        cpds[node] = TableCPD(node, shared.parents(node), np.moveaxis(pert.reshape(*t.shape[1:], t.shape[0]), -1, 0))
    truth = bs.FittedNetwork(shared.dag, shared.schema, cpds)
    seed = int(rng.integers(1 << 31))
    users.append(truth.sample(100, random_state=seed).assign(user=f"u{u:03d}"))
    tests.append(truth.sample(200, random_state=seed + 1).assign(user=f"u{u:03d}"))
train_all = pd.concat(users, ignore_index=True)
test_all = pd.concat(tests, ignore_index=True)
train_all["user"] = pd.Categorical(train_all["user"])
test_all["user"] = pd.Categorical(test_all["user"], categories=train_all["user"].cat.categories)
dag = shared.dag


def scores(proba, rows, loglik):
    y = rows[hv_target].cat.codes.to_numpy()
    return {
        "accuracy": float(np.mean(proba.argmax(axis=1) == y)),
        "class log loss": log_loss(proba, y),
        "joint log-lik / row": float(np.mean(loglik)),
    }


res = {}
for iss in (1, 10):
    parts = []
    for tr_u, te_u in zip(users, tests):
        net = bs.fit(dag, tr_u.drop(columns="user"), method="bayes", iss=iss)
        te = te_u.drop(columns="user")
        parts.append((net.predict_proba(te, hv_target).to_numpy(), te, net.logpdf(te)))
    res[f"per-user BDeu iss={iss}"] = scores(
        np.concatenate([p[0] for p in parts]), pd.concat([p[1] for p in parts]), np.concatenate([p[2] for p in parts])
    )
pooled = bs.fit(dag, train_all.drop(columns="user"), method="bayes", iss=1)
te = test_all.drop(columns="user")
res["pooled BDeu iss=1"] = scores(pooled.predict_proba(te, hv_target).to_numpy(), te, pooled.logpdf(te))
fits = {
    "hmd, users as domains": bs.fit(dag, train_all, method="hmd", domain="user"),
    "hmd, joint model (Sec. 5)": bs.fit(dag, train_all, method="hmd", domain="user", domain_model="joint"),
    "hmd, bnlearn's hdir (iss=1)": bs.fit(dag, train_all, method="hmd", domain="user", compat="bnlearn"),
}
for label, net in fits.items():
    res[label] = scores(net.predict_proba(test_all, hv_target).to_numpy(), test_all, net.logpdf(test_all))
print(pd.DataFrame(res).T.round(4).to_string())
res = pd.DataFrame(res).T
ranked = res["joint log-lik / row"].sort_values(ascending=False)
default_best = int(sum(res[m].idxmax() == "hmd, users as domains" for m in ("accuracy", "joint log-lik / row"))
                   + (res["class log loss"].idxmin() == "hmd, users as domains"))
per_user_pooled = ranked[[k for k in ranked.index if k.startswith(("per-user", "pooled"))]]

# %% [markdown]
# Per-user tables see 100 rows each and overfit; the pooled table ignores that users
# differ. The default `domain=` fit shrinks each user's columns toward the pooled
# configuration with a concentration learned per node: it is the best of the six on
# {{default_best}} of the three measures. By joint log-likelihood per row: {{ranked.index[0]}}
# {{ranked.iloc[0]:.3f}}, then {{ranked.index[1]}} {{ranked.iloc[1]:.3f}}; the per-user and
# pooled tables {{per_user_pooled.min():.3f}} to {{per_user_pooled.max():.3f}}; last
# {{ranked.index[-1]}} ({{ranked.iloc[-1]:.3f}}). The paper's joint model uses
# `s = |X'|` (the number of joint cells of node and parents); bnlearn's default `iss = 1`
# divides the prior strength by the number of groups (`s = 1/{{USERS}}` here), so its
# tables stay close to each user's own frequencies: with many small domains, raise `iss`
# (or leave `s` at the paper's default) rather than keep bnlearn's.
#
# ## (d) How far bnlearn's `hdir` stops from the fixed point, and does it matter?
#
# bnlearn's outer loop stops on a relative change of the bound below 1.5e-8, while its
# tables are still moving. `compat="bnlearn"` reproduces those tables (to 1e-7 on
# bnlearn's own outputs, in the test suite); the default runs the same model to the
# fixed point. Both with bnlearn's `iss = 1`, fitted on half of each group's rows and
# scored on the other half.

# %%
import json


def load_ref(name):
    levels = json.loads((BNLEARN / f"{name}.levels.json").read_text())
    df = pd.read_csv(BNLEARN / f"{name}.csv.gz", dtype=str, keep_default_na=False, na_values=[""])
    for c in levels["columns"]:
        df[c] = pd.Categorical(df[c], categories=levels["levels"][c])
    return df, (BNLEARN / f"{name}.modelstring.txt").read_text().strip()


rows = []
for name, data, ms in [
    (n, *load_ref(n)) for n in (["asia_grouped"] if QUICK else ["asia_grouped", "alarm_grouped"])
] + [("simulated users", train_all, dag)]:
    group = "group" if "group" in data else "user"
    half = data.groupby(group, observed=False).cumcount() % 2 == 0
    tr, te = data[half], data[~half]
    a = bs.fit(ms, tr, method="hmd", domain=group, iss=1)
    b = bs.fit(ms, tr, method="hmd", domain=group, compat="bnlearn")
    rows.append(
        {
            "data": name,
            "max |table diff|": a.max_abs_diff(b),
            "bound gain (sum over nodes)": sum(
                a.cpd(n).estimate.info["elbo"] - b.cpd(n).estimate.info["elbo"] for n in a.nodes
            ),
            "test log-lik/row, converged": float(np.mean(a.logpdf(te))),
            "test log-lik/row, bnlearn": float(np.mean(b.logpdf(te))),
            "outer iterations (converged, median)": float(a.node_summary()["iterations"].median()),
        }
    )
print(pd.DataFrame(rows).round(6).to_string(index=False))
hdir = pd.DataFrame(rows).set_index("data")
ll_moves = hdir["test log-lik/row, converged"] - hdir["test log-lik/row, bnlearn"]

# %% [markdown]
# The converged tables differ from bnlearn's by up to {{hdir["max |table diff|"].max():.4f}}, and the
# bound is higher at the fixed point, as it must be (by {{hdir["bound gain (sum over nodes)"].min():.2g}}
# to {{hdir["bound gain (sum over nodes)"].max():.2g}} summed over the nodes). The held-out
# log-likelihood per row moves by at most {{ll_moves.abs().max():.1e}} nats (bnlearn's
# early-stopped tables are ahead on {{", ".join(ll_moves.index[ll_moves < 0]) or "no data set"}}):
# bnlearn's early stop is a numerical detail, not a statistical one. What matters much
# more for prediction is the prior strength `s` (part (c)).
#
# ## Speed
#
# `python benchmarks/bench_hmd.py` times the bnlearn-compatible fit of `alarm_grouped`
# (37 nodes, 10 groups): the documentation's benchmarks page has the figures against bnlearn's recorded CPU time.

# %% [markdown]
# # From bnlearn to pybncsmooth and back
#
# This vignette walks through the core pipeline on bnlearn's *asia* data: a structure
# from a bnlearn model string, counts in context trees, three classical estimators, the
# fitted network's queries, and the files bnlearn reads and writes.
#
# Run by hand: `python vignettes/run.py vignettes/01_bnlearn_workflow.py` (the full run
# takes about 5 seconds); `--quick` runs the reduced version the test suite runs. The
# figure needs matplotlib (`pip install ".[plot]"`).

# %%
import os
from pathlib import Path

import numpy as np

import pybncsmooth as bs

QUICK = os.environ.get("PYBNCSMOOTH_VIGNETTE_QUICK") == "1"
FIG = Path("figures")
FIG.mkdir(exist_ok=True)
df = bs.load_dataset("asia")
print(df.shape)
print(df.head())

# %% [markdown]
# ## A structure from a model string
#
# `DAG.from_modelstring` builds what bnlearn's `model2network()` builds: nodes sorted as
# R sorts them, each node's parents in that node order. `modelstring()` writes the string
# back as bnlearn's `modelstring()` does (by depth, then node order).

# %%
dag = bs.DAG.from_modelstring("[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]")
print(dag.nodes)
print(dag.parents("E"))
print(dag.modelstring())

# %% [markdown]
# ## Counting: one context tree per node
#
# The tree of `D | B, E` splits on `B` first, then on `E`; internal nodes hold the sums of
# their children, and only observed branches are stored.

# %%
net = bs.fit(dag, df, method="bayes", iss=1)
tree = net.tree("D")
print(tree)
for i, lev in enumerate(tree.levels):
    print(f"level {i}: values {lev.value.tolist()}, parents {lev.parent.tolist()}, counts {lev.counts.tolist()}")

# %% [markdown]
# ## Estimators
#
# `bayes` is BDeu with `iss / (r q)` pseudo-counts per cell and equals bnlearn's
# `bn.fit(method = "bayes")`; `mle` is relative frequencies; `mestimate` adds `m / r` per
# cell at every tree node and backs off to the deepest ancestor with data. With 5000 rows
# the three barely differ on asia; on 100 rows they do.

# %%
small = df.sample(100, random_state=1)
for method, hyper in [("mle", {}), ("bayes", {"iss": 1}), ("mestimate", {"m": 1})]:
    m = bs.fit(dag, small, method=method, **hyper)
    print(f"{method:10s} P(T = yes | A = no, yes) = {np.round(m.cpt('T')[1], 4)}")

# %% [markdown]
# ## Queries
#
# `predict_proba` is the exact posterior of one variable given the others observed in the
# row; only the Markov blanket is used.

# %%
print(dag.markov_blanket("L"))
print(net.predict_proba(df.head(), "L").round(4))
print("log-likelihood per row:", round(net.loglik(df) / len(df), 4))

# %% [markdown]
# Forward sampling is reproducible with `random_state`; refitting on a large sample
# recovers the tables.

# %%
sample = net.sample(20000 if QUICK else 200000, random_state=3)
refit = bs.fit(dag, sample, method="mle")
print("largest CPT difference after refitting a sample:", round(refit.max_abs_diff(net), 4))

# %% [markdown]
# ## Files bnlearn reads and writes
#
# `write` reproduces `write.bif` / `write.dsc` / `write.net` byte for byte, and
# `read_network` reads them back (7 significant digits).

# %%
net.write("asia_bayes.bif")
back = bs.read_network("asia_bayes.bif")
print(Path("asia_bayes.bif").read_text().splitlines()[28:33])
print("max difference after a BIF round trip:", back.max_abs_diff(net))
net.write("asia_bayes.pbn")
print("max difference after a native round trip:", bs.read_network("asia_bayes.pbn").max_abs_diff(net))
for f in ["asia_bayes.bif", "asia_bayes.pbn"]:
    os.remove(f)

# %% [markdown]
# ## Out-of-core counting
#
# Counting chunk by chunk gives exactly the trees of counting everything at once.

# %%
chunks = (df.iloc[i : i + 700] for i in range(0, len(df), 700))
chunked = bs.fit(dag, chunks, method="bayes", iss=1)
print(all(chunked.tree(n) == net.tree(n) for n in net.nodes))

# %% [markdown]
# ## A picture of a CPT

# %%
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ax = net.plot_cpt("E")
plt.tight_layout()
plt.savefig(FIG / "asia_cpt_E.png", dpi=90)
plt.close("all")
print("saved figures/asia_cpt_E.png")

# %% [markdown]
# ![CPT of E](figures/asia_cpt_E.png)

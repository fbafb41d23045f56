"""Plots of fitted networks (matplotlib is an optional dependency)."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np

from ..errors import UnknownNodeError

__all__ = ["plot_cpt", "plot_shrinkage", "plot_domains"]


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("plotting needs matplotlib: pip install 'pybncsmooth[plot]'") from e
    return plt


def plot_cpt(net: Any, node: str, ax: Any = None, *, cmap: str = "viridis", annotate: bool | None = None) -> Any:
    """Heatmap of ``P(node | parents)``: rows are the node's levels, columns the
    parent configurations (first parent varying slowest), colour the probability.

    ``annotate`` writes the probabilities in the cells (default: when there are at
    most 120 cells).  Returns the Axes.
    """
    plt = _pyplot()
    wide = net.cpt_frame(node, wide=True)
    m = wide.to_numpy().T
    if ax is None:
        width = min(2.0 + 0.45 * m.shape[1], 16.0)
        _, ax = plt.subplots(figsize=(width, 1.2 + 0.4 * m.shape[0]))
    im = ax.imshow(m, aspect="auto", cmap=cmap, vmin=0.0, vmax=1.0, interpolation="nearest")
    ax.set_yticks(range(m.shape[0]))
    ax.set_yticklabels([str(l) for l in wide.columns])
    ax.set_ylabel(node)
    pa = [n for n in wide.index.names if n is not None]
    if pa:
        labels = [", ".join(str(v) for v in (k if isinstance(k, tuple) else (k,))) for k in wide.index]
        step = max(1, len(labels) // 40)
        ax.set_xticks(range(0, len(labels), step))
        ax.set_xticklabels(labels[::step], rotation=90, fontsize=8)
        ax.set_xlabel(" : ".join(pa))
    else:
        ax.set_xticks([])
    if annotate is None:
        annotate = m.size <= 120
    if annotate:
        for (i, j), v in np.ndenumerate(m):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7, color="white" if v < 0.5 else "black")
    title = f"P({node} | {', '.join(pa)})" if pa else f"P({node})"
    ax.set_title(title)
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.02)
    return ax


def plot_shrinkage(net: Any, node: str, value: Any = None, ax: Any = None, *, max_leaves: int = 400) -> Any:
    """How far the estimate of each context-tree leaf moved from its relative frequency.

    For one level ``value`` of ``node`` (default: its first level), each leaf is drawn
    at its number of rows (x, log scale): a hollow marker at the relative frequency,
    a filled one at the estimate, a line between them, and a cross at the estimate of
    its parent node, the vector it is shrunk toward.  Small leaves move most.
    """
    plt = _pyplot()
    tree = net.tree(node)
    cpd = net.cpd(node)
    k = 0 if value is None else net.levels(node).index(value)
    leaves = tree.levels[-1]
    counts = leaves.counts
    n = counts.sum(axis=1)
    mle = counts[:, k] / np.maximum(n, 1)
    est = cpd.estimate.probs[-1][:, k]
    parent_est = cpd.estimate.probs[-2][leaves.parent, k] if tree.depth >= 1 else np.full(len(n), np.nan)
    order = np.argsort(-n, kind="stable")[:max_leaves]
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    jitter = np.exp(np.random.default_rng(0).uniform(-0.05, 0.05, len(order)))
    x = n[order] * jitter
    for xi, a, b in zip(x, mle[order], est[order]):
        ax.plot([xi, xi], [a, b], color="0.7", lw=0.8, zorder=1)
    ax.scatter(x, mle[order], facecolors="none", edgecolors="C0", s=18, label="relative frequency", zorder=2)
    ax.scatter(x, est[order], color="C1", s=14, label=f"{net.method or 'estimate'}", zorder=3)
    if tree.depth >= 1:
        ax.scatter(x, parent_est[order], marker="x", color="C2", s=14, label="parent node's estimate", zorder=2)
    ax.set_xscale("log")
    ax.set_xlabel("rows in the leaf")
    ax.set_ylabel(f"P({node} = {net.levels(node)[k]} | leaf)")
    ax.set_title(f"shrinkage of the leaves of P({node} | {', '.join(tree.parents) or '-'})")
    ax.legend(fontsize=8)
    return ax


def plot_domains(report: Any, node: str, ax: Any = None) -> Any:
    """Forest plot of how each domain's CPT of ``node`` deviates from the population's:
    per domain (rows of :meth:`FittedNetwork.domain_report`) the Jensen-Shannon
    divergence's posterior median with its interval where the estimator gives one (else
    the divergence of the fitted tables), domains sorted by it and labelled with their
    rows.  A domain without rows for the node is not drawn (the x label names it).  A
    figure made here is laid out so that its labels fit when saved.  Returns the Axes."""
    if node not in set(report["node"]):
        raise UnknownNodeError(node, f"(the report has rows for {', '.join(map(repr, dict.fromkeys(report['node'])))})")
    plt = _pyplot()
    rows = report[report["node"] == node]
    empty = [str(d) for d in rows.loc[rows["n"] <= 0, "domain"]]
    point = "js_median" if "js_median" in rows else "js"
    r = rows[rows["n"] > 0].sort_values(point)
    what = "posterior median and interval" if point == "js_median" else "the fitted tables"
    lines = [f"JS divergence of P({node} | parents) from the population", f"({what})"]
    if empty:
        lines += textwrap.wrap(f"not drawn, no rows: {', '.join(empty)}", 60)
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 0.8 + 0.28 * len(r) + 0.2 * len(lines)), layout="constrained")
    y = np.arange(len(r))
    js = r[point].to_numpy()
    nan = np.full(len(r), np.nan)  # estimators without sds: no interval columns
    lo = r["js_lower"].to_numpy() if "js_lower" in r else nan
    hi = r["js_upper"].to_numpy() if "js_upper" in r else nan
    has = ~np.isnan(lo)
    if has.any():
        ax.errorbar(js[has], y[has], xerr=[np.maximum(js[has] - lo[has], 0), np.maximum(hi[has] - js[has], 0)],
                    fmt="none", ecolor="0.6", capsize=2)
    ax.plot(js, y, "o", color="C0")
    ax.set_yticks(y)
    ax.set_yticklabels([f"{d} (n={n})" for d, n in zip(r["domain"], r["n"])])
    ax.set_xlabel("\n".join(lines))
    ax.axvline(0.0, color="0.8", lw=0.8)
    return ax

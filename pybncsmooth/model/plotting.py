"""Plots of fitted networks (matplotlib is an optional dependency)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["plot_cpt"]


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

"""A fitted network's summary in the form statisticians know from statsmodels: a
:class:`statsmodels.iolib.summary.Summary` (``as_text``, ``as_html``, ``as_latex``,
``as_csv``; a notebook shows its HTML).

A header (the data, how its missing cells were treated, the estimator, its
hyperparameters and options, the diagnostics of its inference), a table of the nodes
(:meth:`~pybncsmooth.FittedNetwork.node_summary`), then per node the estimate of every
entry with its standard deviation, its ``1 - alpha`` interval and the rows of its parent
configuration, and notes saying what the intervals are.
"""

from __future__ import annotations

import warnings
from itertools import zip_longest
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..errors import ConvergenceWarning, StatisticUnavailableError, UnknownNodeError
from .cpd import DomainLastCPD, TreeCPD
from .draws import interval_kind, posterior_of
from .query.evidence import node_name

__all__ = ["network_summary", "effective_draws", "config_rows", "summary_class", "KIND_TEXT", "MIN_EFFECTIVE_DRAWS"]

#: fewer effective draws than this in a sampler's recorded states gets a warning: Vehtari
#: et al. 2021 (Sec. 4) ask for at least 100 per chain before trusting R-hat and the
#: posterior's quantiles (the intervals are drawn from the recorded states)
MIN_EFFECTIVE_DRAWS = 100

_NA_TEXT = {
    "error": "none allowed",
    "available": "counted where the node and its parents are observed",
    "drop": "rows with a missing value dropped",
    "level": "a level of their own",
    "em": "expectation-maximisation",
    "hard-em": "hard EM (most probable completion)",
}

KIND_TEXT = {
    "credible": "equal-tailed credible intervals of the posterior",
    "confidence": "Wilson score intervals of the proportions (statsmodels)",
    "bootstrap": "percentile intervals of a bootstrap over rows",
}


def effective_draws(x: np.ndarray) -> float:
    """Effective number of independent draws in the chain ``x`` (1-d): ``n`` over the
    integrated autocorrelation time, its sum cut at the first pair of lags whose sum is
    negative (Geyer 1992's initial positive sequence)."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    if n < 4 or np.ptp(x) == 0:
        return float(n)
    y = x - x.mean()
    f = np.fft.rfft(y, 2 * n)
    acf = np.fft.irfft(f * np.conj(f))[:n]
    acf /= acf[0]
    tau = -1.0
    for k in range(0, n - 1, 2):
        pair = acf[k] + acf[k + 1]
        if pair < 0:
            break
        tau += 2.0 * pair
    return float(n / max(tau, 1.0 / n))


def _trace(post: Any) -> np.ndarray | None:
    """The recorded hyperparameters of a sampler's states, ``(states, k)``: ``hdp``'s
    concentrations, ``hls-bayes``'s variances."""
    trace = getattr(post, "state_c", None)
    if trace is None and hasattr(post, "var") and np.ndim(post.var) == 1:
        trace = np.asarray(post.var)[:, None]
    return trace


def _node_draws(post: Any) -> list[float]:
    """Effective draws of each varying recorded hyperparameter of one node's posterior
    (a data-augmentation mixture: summed over its blocks, independent chains)."""
    if hasattr(post, "parts"):
        per = [_node_draws(p) for p in post.parts]
        return [float(sum(x)) for x in zip(*per)] if per and all(len(x) == len(per[0]) for x in per) else []
    trace = _trace(post)
    if trace is None or len(trace) < 4:
        return []
    return [effective_draws(trace[:, g]) for g in range(trace.shape[1]) if np.ptp(trace[:, g]) > 0]


def _chains_draws(net: Any) -> float | None:
    """The smallest effective number of draws among the recorded hyperparameters of the
    sampler's states (``hdp``'s concentrations, ``hls-bayes``'s variances), or ``None``."""
    low = _fewest_draws(net)
    return None if low is None else low[1]


def _fewest_draws(net: Any) -> tuple[str, float] | None:
    """``(node, draws)``: the node whose recorded hyperparameters have the fewest effective
    draws, and that number; ``None`` when no node records any."""
    out = [(node, x) for node in net.nodes for x in _node_draws(posterior_of(net.cpd(node)))]
    if not out:
        return None
    node, x = min(out, key=lambda t: t[1])
    return node, float(x)


def _warn_few_draws(net: Any) -> str | None:
    """Warn (:class:`~pybncsmooth.errors.ConvergenceWarning`) when the sampler's recorded
    states hold fewer than :data:`MIN_EFFECTIVE_DRAWS` effective draws; returns the
    summary's note saying so, or ``None``."""
    low = _fewest_draws(net)
    if low is None or low[1] >= MIN_EFFECTIVE_DRAWS:
        return None
    node, ess = low
    states = _recorded_states(posterior_of(net.cpd(node)))
    text = (f"the sampler's {states} recorded states hold {ess:.0f} effective draws at node {node!r} (of "
            f"its hyperparameters), fewer than {MIN_EFFECTIVE_DRAWS} (Vehtari et al. 2021's "
            "minimum per chain): the intervals and R-hat rest on few independent draws; fit with more "
            "iterations (and record_states) or more chains (n_chains)")
    warnings.warn(text[0].upper() + text[1:], ConvergenceWarning, stacklevel=4)
    return text


def _recorded_states(post: Any) -> int:
    """The recorded states of a node's posterior (summed over a mixture's blocks)."""
    if hasattr(post, "parts"):
        return sum(_recorded_states(p) for p in post.parts)
    trace = _trace(post)
    return 0 if trace is None else len(trace)


def _estimator_info(net: Any) -> dict[str, list]:
    """Per diagnostic, its value at every node that reports it."""
    found: dict[str, list] = {}
    for node in net.nodes:
        cpd = net.cpd(node)
        est = getattr(cpd, "estimate", None)
        for key in ("rhat", "iterations", "converged", "mcse"):
            if est is not None and key in est.info:
                found.setdefault(key, []).append(est.info[key])
    return found


def _diagnostics(net: Any) -> list[tuple[str, str]]:
    """The inference's diagnostics, as far as the estimator has them."""
    info, out = _estimator_info(net), []
    if "rhat" in info:
        vals = np.asarray(info["rhat"], dtype=float)
        out.append(("Largest R-hat:", f"{np.nanmax(vals):.4g}" if np.isfinite(vals).any() else "n/a"))
    ess = _chains_draws(net)
    if ess is not None:
        out.append(("Effective draws (min):", f"{ess:.0f}"))
    if "mcse" in info:
        out.append(("Largest MCSE:", f"{max(info['mcse']):.3g}"))
    if "iterations" in info:
        conv = info.get("converged", [])
        out.append(("Iterations (max):", f"{max(info['iterations'])}"))
        if conv:
            out.append(("Converged:", f"{sum(map(bool, conv))} of {len(conv)} nodes"))
    em = net.info.get("em")
    if em:
        what = "Augmentation blocks:" if em.get("augmentation") else "EM iterations:"
        out.append((what, f"{em['iterations']}" + ("" if em.get("converged", True) else " (not converged)")))
    return out


def rows_text(info: Any) -> str:
    """The rows a fit counted, as its report states them: after an update with
    ``decay`` the effective count the nodes' tables hold (each row weighed
    ``decay ** age``), beside the rows read."""
    n = info.get("n_rows", "n/a")
    eff = info.get("n_effective")
    if eff is None:
        return f"{n}"
    return f"{eff:.6g} (rows weighed decay**age; {n} read)"


def _missing(net: Any) -> str:
    cells = net.info.get("n_missing")
    if cells is None:
        return "n/a"
    return f"{sum(cells.values())} cells" + (f" in {len(cells)} columns" if cells else "")


def _header(net: Any, alpha: float) -> Any:
    """The two-column table at the top (as statsmodels' results summaries)."""
    from statsmodels.iolib.table import SimpleTable
    from statsmodels.iolib.tableformatting import fmt_2cols

    info = net.info
    hyper = info.get("hyperparameters") or {}
    shown = ", ".join(f"{k}={v}" for k, v in hyper.items() if v is not None) or "defaults"
    na = info.get("na")
    left = [
        ("Estimator:", net.method or "tables read from a file"),
        ("Rows used:", rows_text(info)),
        ("Rows dropped:", f"{info.get('n_dropped', 0)}"),
        ("Missing cells:", _missing(net)),
        ("Missing treated:", f"{na} ({_NA_TEXT.get(na, '')})" if na else "n/a"),
        ("Domains:", f"{len(net.domains)} ({net.domain})" if net.domain is not None else "none"),
    ]
    right = [
        ("Nodes:", f"{len(net.nodes)}"),
        ("Arcs:", f"{len(net.dag.arcs)}"),
        ("Free parameters:", f"{net.n_params}"),
        ("Intervals:", f"{1 - alpha:.0%} {_kind(net)}" if net.method else "none"),
        *_diagnostics(net),
    ]
    if len(right) < len(left):
        right += [(" ", " ")] * (len(left) - len(right))
    left += [(" ", " ")] * (len(right) - len(left))
    stubs_l, data_l = zip_longest(*[(k, [v]) for k, v in left])
    stubs_r, data_r = zip_longest(*[(f"  {k:<21}", [v]) for k, v in right])
    table = SimpleTable(list(data_l), None, list(stubs_l), title="Bayesian network fit", txt_fmt=fmt_2cols)
    table.extend_right(SimpleTable(list(data_r), None, list(stubs_r), txt_fmt=fmt_2cols))
    lines = [("Hyperparameters:", part) for part in _wrap(shown)] + [("Options:", part) for part in _wrap(_options(net))]
    stubs = [k if i == 0 or lines[i - 1][0] != k else "" for i, (k, _) in enumerate(lines)]
    extra = SimpleTable([[v] for _, v in lines], None, stubs, txt_fmt=dict(fmt_2cols, data_aligns="l"))
    return table, extra


def _wrap(text: str, width: int = 70) -> list[str]:
    """``text`` cut at its commas into lines of at most about ``width`` characters."""
    out, line = [], ""
    for part in text.split(", "):
        if line and len(line) + len(part) + 2 > width:
            out.append(line + ",")
            line = part
        else:
            line = f"{line}, {part}" if line else part
    return out + [line]


def _options(net: Any) -> str:
    if not net.method:
        return "n/a"
    given = net.options.explicit()
    return ", ".join(f"{k}={_short(v)}" for k, v in given.items()) or "defaults"


def _short(v: Any) -> str:
    """An option's value for the header (an array of weights by its length)."""
    if isinstance(v, (np.ndarray, pd.Series)):
        return f"<{len(v)} values>"
    return repr(v)


def _kind(net: Any) -> str:
    try:
        return interval_kind(net)
    except (UnknownNodeError, IndexError):  # pragma: no cover - a network has nodes
        return "credible"


def config_rows(net: Any, node: str) -> np.ndarray | None:
    """Training rows of every parent configuration of ``node``, shaped like
    ``net.cpt(node)[0]`` (summed weights for a weighted fit); ``None`` for a table read
    from a file."""
    cpd = net.cpd(node)
    inner = cpd.inner if isinstance(cpd, DomainLastCPD) else cpd
    if not isinstance(inner, TreeCPD):
        return None
    from ..estimators.posterior import backoff_index

    tree = inner.tree
    lvl, idx = backoff_index(tree)
    rows = np.zeros(len(lvl))
    seen = lvl == tree.depth
    rows[seen] = tree.levels[-1].counts.sum(axis=1)[idx[seen]]
    rows = rows.reshape(tree.parent_cards) if tree.depth else rows.reshape(())
    order = [tree.parents.index(v) for v in net.table_dims(node)[1:]]
    return np.transpose(rows, order) if order else rows


def _node_frame(net: Any, node: str, alpha: float, draws: int, random_state: Any) -> tuple[pd.DataFrame, bool]:
    """The node's tidy frame with its intervals (``False``: none to give) and rows."""
    try:
        f, has = net.cpt_frame(node, interval=1 - alpha, draws=draws, random_state=random_state), True
    except StatisticUnavailableError:
        f, has = net.cpt_frame(node), False
    rows = config_rows(net, node)
    if rows is not None:
        f["rows"] = np.broadcast_to(rows[None], net.cpt(node).shape).reshape(-1, order="F")
    return f, has


def _node_table(net: Any, node: str, alpha: float, draws: int, random_state: Any) -> Any:
    """One node's table: a row per entry (its level, then its parent configuration)."""
    from statsmodels.iolib.table import SimpleTable
    from statsmodels.iolib.tableformatting import fmt_params

    f, has = _node_frame(net, node, alpha, draws, random_state)
    dims = net.table_dims(node)
    conds = [", ".join(f"{d}={f[d].iloc[i]}" for d in dims[1:]) for i in range(len(f))]
    stubs = [f"{f[node].iloc[i]}" + (f" | {c}" if c else "") for i, c in enumerate(conds)]
    cols = ["prob"] + (["sd", "lower", "upper"] if has else [])
    heads = ["prob"] + (["std err", f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"] if has else [])
    data = [[f"{v:.4f}" for v in f[cols].iloc[i]] for i in range(len(f))]
    if "rows" in f:
        heads.append("rows")
        for row, n in zip(data, f["rows"]):
            row.append(f"{n:g}")
    title = f"P({node}" + (f" | {', '.join(dims[1:])})" if len(dims) > 1 else ")")
    return SimpleTable(data, heads, stubs, title=title, txt_fmt=fmt_params)


def _nodes_table(net: Any) -> Any:
    from statsmodels.iolib.table import SimpleTable
    from statsmodels.iolib.tableformatting import fmt_params

    frame = net.node_summary()
    cells = [["" if pd.isna(v) else (f"{v:.4g}" if isinstance(v, float) else str(v)) for v in row]
             for row in frame.itertuples(index=False)]
    return SimpleTable(cells, list(frame.columns), [str(i) for i in frame.index], title="Nodes",
                       txt_fmt=fmt_params)


def _notes(net: Any, alpha: float, few_draws: str | None = None) -> list[str]:
    if not net.method:
        return ["Notes:", "[1] Tables read from a file: no intervals (their data and posterior are not in the file); "
                "fit the network from data, or read a .pbn file, for them."]
    post = posterior_of(net.cpd(net.nodes[0]))  # the estimator's, as _kind reads it (no other node is built)
    if post is not None and not getattr(post, "calibrated", True):
        # bayes with its BDeu prior, and the bootstrap of hgs, mbranch and hls: no intervals, and why
        return ["Notes:", f"[1] No sds or intervals: {post.refusal('interval')}; rows: the training rows of the "
                "entry's parent configuration."]
    kind = _kind(net)
    notes = [
        "Notes:",
        f"[1] Intervals: {KIND_TEXT.get(kind, kind)}, at level {1 - alpha:g}; rows: the training rows of "
        "the entry's parent configuration.",
    ]
    if kind == "credible":
        notes.append("[2] A configuration without rows: the hierarchy's predictive spread around the node of its "
                     "context tree it backs off to.")
    else:
        notes.append("[2] A configuration without rows: [0, 1], the data say nothing about it.")
    if few_draws:
        notes.append(f"[3] Warning: {few_draws}.")
    return notes


def summary_class() -> type:
    """statsmodels' ``Summary`` whose LaTeX is one tabular per table: its own
    ``as_latex`` stacks the tables into one and fails on tables of different widths
    (as its docstring warns), which a network's node tables are."""
    from statsmodels.iolib.summary import Summary

    class NetworkSummary(Summary):
        """A fitted network's summary (statsmodels' ``Summary``)."""

        def as_latex(self) -> str:
            latex = "\n\n".join(t.as_latex_tabular() for t in self.tables)
            if self.extra_txt is not None:
                latex += "\n\n" + self.extra_txt.replace("\n", " \\newline\n ")
            return latex

    return NetworkSummary


def network_summary(net: Any, *, alpha: float = 0.1, nodes: str | Sequence[str] | None = None, draws: int = 500,
                    random_state: Any = 0) -> Any:
    """See :meth:`pybncsmooth.FittedNetwork.summary`."""
    if nodes is not None:  # one node by its name, or a list of them (never a name's letters)
        nodes = [node_name(nodes)] if isinstance(nodes, (str, int, np.integer)) else [node_name(v) for v in nodes]
    for v in nodes or ():
        net.cpd(v)  # an unknown node raises, naming it
    out = summary_class()()
    few_draws = _warn_few_draws(net)
    head, extra = _header(net, alpha)
    out.tables += [head, extra, _nodes_table(net)]
    for v in nodes if nodes is not None else net.nodes:
        out.tables.append(_node_table(net, v, alpha, draws, random_state))
    out.add_extra_txt(_notes(net, alpha, few_draws))
    return out


"""A query's summary as a statsmodels :class:`~statsmodels.iolib.summary.Summary`: its
answer with the interval, the shares of its posterior variance by node
(:mod:`pybncsmooth.model.query.variance`), and the parent configurations of the node
with the largest share, by the query's weight on them, with their training rows."""

from __future__ import annotations

from itertools import zip_longest
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ...data.levels import is_missing, level_code, scalar_value
from ...errors import DataError
from ...validation import check_probability
from .evidence import check_no_domain, check_targets, dict_codes, domain_network
from .variance import DEFAULT_DRAWS
from ..summary import KIND_TEXT, config_rows, summary_class

__all__ = ["query_summary"]


def _query_text(net: Any, targets: Sequence[str], codes: dict[str, int]) -> str:
    """``P(targets | evidence)``, each observed variable with the level the evidence names."""
    given = ", ".join(f"{k}={net.levels(k)[c]}" for k, c in codes.items())
    return f"P({', '.join(targets)}" + (f" | {given})" if given else ")")


def _training_rows(fit: Any, node: str, domain: Any) -> np.ndarray | None:
    """Training rows of every parent configuration of ``node`` (:func:`config_rows`) for
    the network that answers: a multi-domain fit's rows of the domain ``domain``, or
    all its domains' rows for the population's tables (no domain, or one unseen)."""
    rows = config_rows(fit, node)
    if rows is None or fit.domain is None:
        return rows
    axis = fit.table_dims(node)[1:].index(fit.domain)
    code = -1 if domain is None or is_missing(domain) else level_code(tuple(fit.schema[fit.domain]),
                                                                       scalar_value(domain, "domain="))
    return rows.take(code, axis=axis) if 0 <= code < rows.shape[axis] else rows.sum(axis=axis)


def _configurations(net: Any, node: str, codes: dict[str, int], rows: np.ndarray | None, k: int = 10) -> Any:
    """The ``k`` parent configurations of ``node`` the query weighs most (their
    posterior probability given the evidence, ``codes`` its observed levels) with their
    training ``rows``, or ``None``."""
    from statsmodels.iolib.table import SimpleTable
    from statsmodels.iolib.tableformatting import fmt_params

    pa = net.parents(node)
    free = [p for p in pa if p not in codes]
    if not pa:
        return None
    ev = {v: net.levels(v)[c] for v, c in codes.items()}
    weights = net.query(free, ev) if free else pd.Series([1.0])
    order = np.argsort(-weights.to_numpy(), kind="stable")[:k]
    data, stubs = [], []
    for i in order:
        state = weights.index[i] if free else ()
        state = state if isinstance(state, tuple) else (state,)
        idx = dict(zip(free, (net.levels(p).index(x) for p, x in zip(free, state))),
                   **{p: codes[p] for p in pa if p in codes})
        cell = tuple(idx[p] for p in pa)
        stubs.append(", ".join(f"{p}={net.levels(p)[idx[p]]}" for p in pa))
        data.append([f"{weights.iloc[i]:.4f}", f"{rows[cell]:g}" if rows is not None else ""])
    return SimpleTable(data, ["weight", "rows"], stubs, title=f"Parent configurations of {node}, by the query's weight",
                       txt_fmt=fmt_params)


def _shares_table(shares: pd.DataFrame) -> Any:
    from statsmodels.iolib.table import SimpleTable
    from statsmodels.iolib.tableformatting import fmt_params

    se = shares.attrs["se"]
    same = np.allclose(shares.to_numpy(), shares.to_numpy()[:, :1], atol=1e-12)
    cols = list(shares.columns[:1]) if same else list(shares.columns)
    order = shares[cols].max(axis=1).sort_values(ascending=False).index
    data = [[x for c in cols for x in (f"{shares.loc[v, c]:.3f}", f"{se.loc[v, c]:.3f}")] for v in order]
    heads = [x for c in cols for x in ((f"share ({c})" if not same else "share"), "mc se")]
    return SimpleTable(data, heads, [str(v) for v in order], title="Shares of the variance (first-order, by node)",
                       txt_fmt=fmt_params)


def _unexplained(shares: pd.DataFrame) -> str:
    """The share owed to interactions (``1 -`` the shares' sum) of the state where it is
    largest, with its Monte Carlo error; an estimate below 0 (Monte Carlo error: the
    true value is at least 0) shown as 0 beside the estimate."""
    u, se = shares.attrs["unexplained"], shares.attrs["unexplained_se"]
    k = int(np.argmax(u.to_numpy()))
    value, err = float(u.iloc[k]), float(se.iloc[k])
    if value >= 0:
        return f"{value:.3f} (mc se {err:.3f}; interactions)"
    return f"0.000 (estimate {value:.3f}, mc se {err:.3f}: below 0 by Monte Carlo error)"


def query_summary(net: Any, targets: Any, evidence: Any = None, *, alpha: float = 0.1, draws: int = DEFAULT_DRAWS,
                  random_state: Any = None, domain: Any = None) -> Any:
    """See :meth:`pybncsmooth.FittedNetwork.query_summary`."""
    from statsmodels.iolib.table import SimpleTable
    from statsmodels.iolib.tableformatting import fmt_2cols, fmt_params

    check_probability("alpha", alpha)
    if isinstance(evidence, (pd.DataFrame, pd.Series)):
        raise DataError("query_summary answers one query: give the evidence as a mapping {variable: level}")
    tt = list(check_targets(net, targets))
    check_no_domain(net, evidence)
    # the network that answers (a multi-domain fit without domain=: the population's, with
    # query's warning, or its error under on_unseen_domain="error"), for all three parts
    qnet = domain_network(net, domain)
    codes = dict_codes(qnet, evidence, tt)  # query's reading of the evidence: None unobserved, 1 names '1'
    q = qnet.query(tt, evidence, interval=1 - alpha, draws=draws, random_state=random_state)
    shares = qnet.variance_shares(tt, evidence, draws=draws, random_state=random_state)
    kind = q.attrs["interval"]
    head = [("Query:", _query_text(qnet, tt, codes)), ("Estimator:", net.method or "n/a"),
            ("Intervals:", f"{1 - alpha:.0%} {kind}"), ("Draws:", f"{draws}"),
            ("Unexplained share:", _unexplained(shares))]
    stubs, data = zip_longest(*[(k, [v]) for k, v in head])
    out = summary_class()()
    out.tables.append(SimpleTable(list(data), None, list(stubs), title="Query", txt_fmt=dict(fmt_2cols,
                                                                                             data_aligns="l")))
    labels = [str(i) for i in q.index]
    out.tables.append(SimpleTable([[f"{q[c].iloc[i]:.4f}" for c in ("prob", "lower", "upper")] for i in range(len(q))],
                                  ["prob", f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"], labels, title="Answer",
                                  txt_fmt=fmt_params))
    out.tables.append(_shares_table(shares))
    top = shares.max(axis=1).idxmax() if len(shares) else None
    conf = _configurations(qnet, top, codes, _training_rows(net, top, domain)) if top is not None else None
    if conf is not None:
        out.tables.append(conf)
    out.add_extra_txt([
        "Notes:",
        f"[1] Intervals: {KIND_TEXT.get(kind, kind)}, from {draws} draws of every table.",
        "[2] Share of a node: Var(E[q | its table]) / Var(q), the first-order Sobol index (Saltelli et al. 2010's "
        "pick-freeze estimator); the shares sum to at most 1, the rest owed to interactions between tables. "
        "mc se: the Monte Carlo standard error of an estimate (jackknife over groups of the draws).",
        "[3] Weight of a parent configuration: its probability given the evidence; rows: its training rows.",
    ])
    return out

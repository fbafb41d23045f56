r"""A new domain from a few rows, with a fitted population as its prior.

For every node the population's context tree (the domain split last, or no domain
at all) keeps its estimates; the domain gets a leaf below every parent configuration
of the population (and of its rows), each the posterior of the population's model
for a new domain given the domain's rows, the population held fixed
(:mod:`pybncsmooth.estimators.domains.prior`): in each node a copy of one of the fitted
domains' tables or a type of its own (drawn around the population with the node's
shared concentration, or unusual), the nodes' choices tied with prior probability
:data:`~pybncsmooth.estimators.domains.prior.TIED_SHARE`,

.. math:: \hat\theta_{x \mid y, d} = w_{new} \sum_k \pi_k
          \frac{n_{yxd} + s'_k\, \hat\theta_{x \mid y}}{n_{yd} + s'_k}
          + \sum_{e} w_e \frac{n_{yxd} + M_{ye}\, \hat\theta_{x \mid y, e}}{n_{yd} + M_{ye}},
          \qquad s' = \frac{s A_y}{s + A_y + 1},

with :math:`\hat\theta_{x \mid y}` what the population answers for configuration ``y``,
:math:`A_y` how well it knows it (the nested model's mass), :math:`\pi_k` the posterior
of the shared concentration given the domain's rows, :math:`\hat\theta_{x|y,e}` and
:math:`M_{ye}` fitted domain ``e``'s table and the Dirichlet mass its sd implies, and
the weights :math:`w` (per node) the posterior probabilities of the node's choices
given every row of the domain
(:func:`~pybncsmooth.estimators.domains.prior.node_choice_weights`).  A domain whose rows look like an unusual fitted domain's takes
that domain's tables, a typical one borrows from the population.  Maximum likelihood
keeps the domain's own frequencies; an estimator that fixes the concentration
(``hmd``'s ``s_domain``) and ``adapt``'s own ``s_domain=`` fix it (the new type
alone).  No estimator runs again: the cost is counting the new rows and the evidence
of the types.  Rows for a domain that already exists add to its counts and its
posterior is learned again from all of them, the population's own knowledge
unchanged: adapting twice equals adapting once with all the rows.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ...counting.network import count_specs
from ...data.encode import encode, text_columns
from ...data.levels import is_missing, level_code, level_codes, new_level, scalar_value
from ...data.sources import as_source
from ...data.weights import check_weights
from ...errors import DataError, HyperparameterError, UnknownNodeError
from ...options import Options
from ...validation import check_number
from ._node import node_context, node_result
from ._urn import adapt_posteriors
from ..cpd import DomainLastCPD, TreeCPD
from ..fit_state import FitState

__all__ = ["adapt_network"]

#: the domain column of a network fitted without ``domain=`` once it is adapted
DEFAULT_DOMAIN_NAME = "domain"


def _rows_frame(rows: Any, options: Options) -> tuple[pd.DataFrame, np.ndarray | None]:
    """The new rows as one frame (index reset) and their weights (``options.weights``: a
    column of the rows, or one number per row; ``None``: every row counts once)."""
    if isinstance(rows, pd.DataFrame):
        df = rows
    else:
        parts = list(as_source(rows, chunksize=options.chunksize).chunks())
        if not parts:
            raise DataError("adapt: the new rows are empty")
        df = pd.concat(parts, ignore_index=True)
    w = options.weights
    if w is None:
        return df.reset_index(drop=True), None
    if isinstance(w, str):
        if w not in df.columns:
            raise DataError(f"weights={w!r} is not a column of the new rows (columns: {list(df.columns)[:10]})")
        weights = check_weights(pd.to_numeric(df[w], errors="coerce").to_numpy(), df.index, f"weights {w!r}")
        return df.drop(columns=w).reset_index(drop=True), weights
    return df.reset_index(drop=True), check_weights(w, df.index, "weights")


def _domain_label(label: Any, levels: list, column: str) -> Any:
    """``label`` as a level of the domain column: one scalar, not missing, naming a level
    as values name levels everywhere (:mod:`pybncsmooth.data.levels`: 1978 is '1978').
    A new label is text, a whole number or a boolean; it joins the levels as any new
    value does (:func:`~pybncsmooth.data.levels.new_level`: text levels as text, a whole
    float as its integer, integer levels the text of an integer as that integer); a label
    that cannot join them (``'zz'`` beside integers) is refused rather than added beside
    them."""
    if is_missing(label):
        raise DataError(f"adapt needs a domain label (domain=...), not a missing value ({label!r})")
    label = scalar_value(label, f"adapt's domain label for {column!r}")
    code = level_code(tuple(levels), label)
    if code >= 0:
        return levels[code]
    if isinstance(label, float) and label.is_integer():
        label = int(label)
    if not isinstance(label, (str, int, bool)):
        raise DataError(
            f"adapt: the domain label {label!r} of {column!r} is of type {type(label).__name__}; a domain label is "
            "text, a whole number or a boolean"
        )
    joined = new_level(tuple(levels), label)  # the one rule: '2019' joins integer domains as 2019
    kinds = sorted({type(v).__name__ for v in levels})
    if joined is None:
        shown = ", ".join(repr(v) for v in levels[:5]) + (", ..." if len(levels) > 5 else "")
        raise DataError(
            f"adapt: the domain label {label!r} is a {type(label).__name__}, and the domain levels of {column!r} are "
            f"{'/'.join(kinds)} ({shown}); pass the label as a {kinds[0]}"
        )
    return joined


def _check_label_column(df: pd.DataFrame, column: str, label: Any) -> pd.DataFrame:
    """Rows may carry the domain column: every value must then name ``label`` (as values
    name levels everywhere: the value 1978 names the label '1978')."""
    if column not in df.columns:
        return df
    col = df[column]
    same = level_codes(col.to_numpy(dtype=object), (label,)) == 0
    bad = col.isna().to_numpy() | ~same
    if bad.any():
        first = df.index[int(np.argmax(bad))]
        raise DataError(
            f"adapt(domain={label!r}): row {first!r} has {column}={col[first]!r}; the rows of one call "
            f"belong to one domain (drop the column or split the rows by {column!r})"
        )
    return df.drop(columns=column)


def _check_new_type(new_type: Any, s_domain: Any) -> float | None:
    """``new_type``: a probability in (0, 1] (``None``: the default); not with ``s_domain``,
    which fixes the concentration toward the population and never copies."""
    if new_type is None:
        return None
    v = check_number("new_type", new_type, strict=True)
    if v > 1:
        raise HyperparameterError(f"new_type is a probability in (0, 1], not {new_type!r}")
    if s_domain is not None:
        raise HyperparameterError(
            "new_type= weighs copying a fitted domain, and s_domain= fixes the concentration toward the "
            "population without copying: give one of them"
        )
    return v


def _check_adaptable(net: Any, has_domain: bool) -> None:
    """Every node's CPD holds a context tree with its estimate, the domain split last."""
    for n in net.nodes:
        cpd = net.cpd(n)
        ok = isinstance(cpd, DomainLastCPD) if has_domain else isinstance(cpd, TreeCPD)
        if not ok:
            why = (
                "a multi-domain fit with the domain split last (hmd's domain_model='joint' and compat='bnlearn' "
                "split it first: refit with the default domain model)"
                if has_domain
                else "a fitted network with context trees (tables read from a file have none)"
            )
            raise DataError(f"adapt needs {why}; node {n!r} has a {type(cpd).__name__}")
    if net.estimator is None:
        raise DataError("adapt needs the estimator the network was fitted with (this network does not name one)")


def adapt_network(
    net: Any,
    rows: Any,
    label: Any,
    *,
    column: str | None = None,
    s_domain: float | Mapping[str, float] | None = None,
    new_type: float | None = None,
    options: Options | None = None,
) -> Any:
    """See :meth:`FittedNetwork.adapt` (``options``: the call's, built at the ``adapt``
    entry point: ``weights``, ``chunksize``, ``on_unseen``)."""
    options = options if options is not None else Options.build("adapt")
    has_domain = net.domain is not None
    if has_domain and column is not None and column != net.domain:
        raise DataError(f"the network's domain column is {net.domain!r}, not {column!r}")
    dom = net.domain if has_domain else (column or DEFAULT_DOMAIN_NAME)
    if not has_domain and dom in net.schema:
        raise DataError(f"{dom!r} is a node of the network: name the domain column with column=")
    _check_adaptable(net, has_domain)
    if isinstance(s_domain, Mapping):
        unknown = [k for k in s_domain if k not in net.dag]
        if unknown:
            raise UnknownNodeError(unknown[0], f"(s_domain gives a value for it; the nodes are {net.nodes})")
    new_type = _check_new_type(new_type, s_domain)
    levels = list(net.schema[dom]) if has_domain else []
    label = _domain_label(label, levels, dom)
    df, weights = _rows_frame(rows, options)
    df = _check_label_column(text_columns(df), dom, label)
    if net.transformer is not None:  # numbers cut into the fitted bins, as the network's queries cut them
        from ...data.discretize import apply_transformer  # scikit-learn, imported when first used

        df = apply_transformer(net.transformer, df, options.on_unseen)
    policy = net.options.missing
    na = policy.counting
    # as the network's queries: under na="level" a node without that level in training
    # takes its missing values as unobserved (counted on the available cases); a level
    # unseen in training is an error, or unobserved with on_unseen="backoff"
    enc = encode(df, net.schema, variables=net.nodes, na=na, on_unseen=options.on_unseen, empty_ok=True,
                 na_label=policy.label, missing_unobserved=True)
    if enc.n_rows == 0:
        raise DataError(f"adapt(domain={label!r}): no row is left after missing values are handled (na={na!r})")
    if label in levels:
        code = levels.index(label)
    else:
        code, levels = len(levels), levels + [label]
    schema = net.schema.with_levels(dom, levels)
    kept = None if weights is None else weights[np.asarray(enc.index, dtype=np.int64)]
    trees = dict(zip(net.nodes, count_specs(enc, [(n, tuple(net.parents(n))) for n in net.nodes], weights=kept)))
    ctxs = {n: node_context(net.cpd(n), trees[n], code, len(levels), has_domain) for n in net.nodes}
    posts = adapt_posteriors(net, ctxs, s_domain, has_domain, code, new_type)
    cpds = {n: node_result(ctxs[n], posts[n], code, len(levels), dom) for n in net.nodes}
    info = dict(net.info)
    adapted = dict(info.get("adapted", {}))
    adapted[label] = adapted.get(label, 0) + enc.n_rows
    info["adapted"] = adapted
    out = type(net)(net.dag, schema, cpds, domain=dom, estimator=net.estimator, info=info,
                    options=net.options.replace(domain=dom) if net.options.domain != dom else net.options)
    out.transformer = net.transformer
    if net.fit_state is not None:  # the levels a file fixed (an EM fit's rows do not cover the new domain's)
        out.fit_state = FitState(given=net.fit_state.given)
    return out

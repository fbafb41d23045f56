"""The arguments of a query, checked and encoded: targets, evidence, domain.

Evidence values name a variable's levels by the one rule of every entry point
(:mod:`pybncsmooth.data.levels`): equal as dictionary keys (``1`` and ``1.0`` are the
same level), or else by their text (``1978`` names the level ``'1978'``, ``'3'`` the
level ``3``).  A missing value (``None``, NaN, ``pd.NA``) leaves the variable
unobserved; a value that is not a level raises
:class:`~pybncsmooth.errors.UnseenLevelError` naming the variable and the value.  Nodes
are named as the fit named them: integer names (a frame's integer column labels) as
their text.  Evidence of probability zero is found by
:mod:`pybncsmooth.model.query.zeros` for every entry point.
"""

from __future__ import annotations

import warnings
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...data.encode import encode, text_columns
from ...data.levels import is_missing, level_code, scalar_value
from ...errors import DataError, DenseTableTooLargeError, DuplicateNodeError, UnknownNodeError, UnseenDomainError
from ...errors import UnseenDomainWarning, UnseenLevelError

__all__ = [
    "check_targets",
    "check_no_domain",
    "dict_codes",
    "frame_codes",
    "domain_network",
    "domain_network_by_code",
    "never_observed",
    "node_name",
]

_HINT = "evidence must be a level of the variable; leave a variable out, or give None, when it is unobserved"


def node_name(name: Any) -> Any:
    """A node named as a fit names its variables: an integer (a frame's integer column
    label) as its text."""
    if isinstance(name, (int, np.integer)) and not isinstance(name, (bool, np.bool_)):
        return str(name)
    return name


def check_targets(net: Any, targets: Any) -> tuple[str, ...]:
    """``targets`` (a node name or a list of them) as a tuple of distinct nodes."""
    if type(targets) is str and targets in net.dag:  # one node by its name: the common case
        return (targets,)
    one = isinstance(targets, (str, int, np.integer)) and not isinstance(targets, (bool, np.bool_))
    tt = [targets] if one else list(targets) if isinstance(targets, (list, tuple)) else None
    if not tt:
        raise DataError(f"targets must be a node name or a non-empty list of node names, not {targets!r}")
    tt = [node_name(t) for t in tt]
    for t in tt:
        if not isinstance(t, str) or t not in net.dag:
            raise UnknownNodeError(str(t), "(a query target must be a node of the network)")
    if len(set(tt)) < len(tt):
        dup = next(t for t in tt if tt.count(t) > 1)
        raise DuplicateNodeError(dup, "in the query targets")
    return tuple(tt)


def _level_code(levels: tuple, var: str, value: Any) -> int:
    """The code of the level ``value`` names among ``levels`` (see the module docstring)."""
    code = level_code(levels, value if type(value) is str else scalar_value(value, f"the evidence on {var!r}"))
    if code < 0:
        raise UnseenLevelError(var, [value], levels, hint=_HINT)
    return code


def check_no_domain(net: Any, evidence: Any) -> None:
    """The domain of a multi-domain fit is chosen with ``domain=``, never as evidence."""
    if net.domain is None:
        return
    names = evidence.columns if isinstance(evidence, pd.DataFrame) else evidence.index if isinstance(
        evidence, pd.Series) else evidence if isinstance(evidence, Mapping) else ()
    if net.domain in names:
        raise DataError(
            f"{net.domain!r} is the domain of this multi-domain fit: choose it with domain=, not as evidence"
        )


def never_observed(net: Any, codes: Mapping[str, np.ndarray]) -> np.ndarray | None:
    """Rows whose evidence gives a variable a level of probability zero under every
    configuration of its parents (so the evidence is impossible, wherever it lies in
    the network); ``None`` when there is none.  The zero levels are cached per node."""
    cache = net.__dict__.setdefault("_query_zero_levels", {})
    bad = None
    for v, c in codes.items():
        if v not in net.dag:  # the domain of a multi-domain fit
            continue
        zero = cache.get(v)
        if zero is None:
            try:
                t = net.cpt(v)
                zero = np.flatnonzero(t.reshape(t.shape[0], -1).max(axis=1) <= 0)
            except DenseTableTooLargeError:  # a table too large to build: its zeros are left to the query
                zero = np.zeros(0, dtype=np.int64)
            cache[v] = zero
        if zero.size:
            hit = np.isin(c, zero)
            bad = hit if bad is None else bad | hit
    return bad


def _check_evidence_vars(net: Any, names: Sequence[Any], targets: Sequence[str]) -> None:
    for v in names:
        if not isinstance(v, str) or v not in net.dag:
            raise UnknownNodeError(str(v), "(evidence must name nodes of the network)")


def dict_codes(net: Any, evidence: Mapping[str, Any] | pd.Series | None, targets: Sequence[str]) -> dict[str, int]:
    """The observed evidence of a mapping ``{variable: level}`` as ``{variable: code}``
    (missing values dropped), in node order."""
    if evidence is None:
        return {}
    if type(evidence) is dict and net.transformer is None:
        quick = _text_codes(net, evidence, targets)
        if quick is not None:
            return quick
    if isinstance(evidence, pd.Series):
        evidence = evidence.to_dict()
    if not isinstance(evidence, Mapping):
        raise DataError(f"evidence must be a dict {{variable: level}} or a data frame, not a {type(evidence).__name__}")
    named = {node_name(v): val for v, val in evidence.items()}
    if len(named) < len(evidence):
        raise DataError(f"the evidence names a node twice (as a number and as text): {list(evidence)}")
    _check_evidence_vars(net, list(named), targets)
    seen = {v: val for v, val in named.items() if type(val) is str or not is_missing(val)}
    if net.transformer is not None and seen:  # e.g. numbers to cut into the fitted bins
        codes, _ = frame_codes(net, pd.DataFrame({v: [val] for v, val in seen.items()}), targets)
        return {v: int(c[0]) for v, c in codes.items() if c[0] >= 0}
    for t in targets:
        if t in seen:
            raise DataError(f"{t!r} is both a query target and evidence ({seen[t]!r})")
    out = {v: _level_code(tuple(net.schema[v]), v, seen[v]) for v in net.nodes if v in seen}
    return out


def _text_codes(net: Any, evidence: dict, targets: Sequence[str]) -> dict[str, int] | None:
    """:func:`dict_codes` of the common evidence, text nodes naming text levels of theirs
    exactly (never a target): one lookup a value in each node's ``{level: code}``,
    built once per network (for its schema); ``None`` for any other evidence, which
    the general rule reads (and reports)."""
    store = net.__dict__.get("_query_level_keys")
    if store is None or store[0] is not net.schema:
        levels = net.schema.levels
        keys = {v: {lev: i for i, lev in enumerate(levels[v])} for v in net.nodes}
        store = net.__dict__["_query_level_keys"] = (net.schema, keys, {v: i for i, v in enumerate(net.nodes)})
    _, keys, position = store
    found = []
    for v, val in evidence.items():
        lut = keys.get(v) if type(v) is str and type(val) is str else None
        code = lut.get(val) if lut is not None else None
        if code is None or v in targets:
            return None
        found.append((position[v], v, code))
    found.sort()
    return {v: code for _, v, code in found}


def frame_codes(net: Any, frame: pd.DataFrame, targets: Sequence[str]) -> tuple[dict[str, np.ndarray], pd.Index]:
    """The codes of every column of ``frame`` (``-1``: unobserved in that row) and its index."""
    if len(set(frame.columns)) == len(frame.columns):
        frame = text_columns(frame)  # integer column labels name the nodes the fit named by their text
    names = list(frame.columns)
    _check_evidence_vars(net, names, targets)
    if len(set(names)) < len(names):
        raise DataError("the evidence frame has two columns with the same name")
    for t in targets:
        if t in frame.columns and frame[t].notna().any():
            raise DataError(f"{t!r} is both a query target and a column of the evidence frame: drop that column")
    if net.transformer is not None:
        frame = net.transformer.transform(frame)
    cols = [v for v in net.nodes if v in frame.columns and v not in targets]
    if not cols:
        return {}, frame.index
    try:
        enc = encode(frame, net.schema, variables=cols, na="available", on_unseen="error")
    except UnseenLevelError as e:
        raise UnseenLevelError(e.column, e.levels, net.schema[e.column], hint=_HINT) from None
    return {v: enc[v].astype(np.int64) for v in cols}, enc.index


def domain_network(net: Any, domain: Any, on_unseen_domain: str | None = None) -> Any:
    """The network that answers queries: ``net`` itself, or for a multi-domain fit the
    network of the domain ``domain`` (cached).  No domain (``None``) and a label unseen
    in training get the population-level tables with an :class:`UnseenDomainWarning`,
    or an error under ``on_unseen_domain="error"`` (default: the fit's option)."""
    if net.domain is None:
        if domain is not None:
            raise DataError("domain= applies to networks fitted with domain= (this one has no domain variable)")
        return net
    rule = net._on_unseen_domain(on_unseen_domain)
    if domain is None or is_missing(domain):
        if rule == "error":
            what = f"no domain given for a network fitted with domain={net.domain!r}: pass domain="
            raise UnseenDomainError(net.domain, [], net.domains, what=what)
        warnings.warn(f"no domain given for a network fitted with domain={net.domain!r}: the query is answered by the "
                      "population-level (pooled) tables", UnseenDomainWarning, stacklevel=4)
        return domain_network_by_code(net, -1)
    code = level_code(tuple(net.schema[net.domain]), scalar_value(domain, "domain="))
    if code < 0:
        if rule == "error":
            raise UnseenDomainError(net.domain, [domain], net.domains)
        warnings.warn(
            f"domain {domain!r} of {net.domain!r} was not seen in training: the query is answered by the "
            "population-level (pooled) tables",
            UnseenDomainWarning,
            stacklevel=4,
        )
    return domain_network_by_code(net, code)


def domain_network_by_code(net: Any, code: int) -> Any:
    """The network of the domain with code ``code`` (``-1``: the population-level
    tables), cached on ``net``; no warning (the caller gives it)."""
    cache = net.__dict__.setdefault("_query_domains", {})
    if code not in cache:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnseenDomainWarning)
            cache[code] = net.for_domain(net.schema[net.domain][code] if code >= 0 else None)
    return cache[code]

"""Multi-domain fits: the domain column's place in the structure and its checks."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data.schema import Schema
from ..errors import DataError, StructureError
from ..structure.dag import DAG

__all__ = ["strip_domain", "check_domain", "domain_from_hyper"]


def domain_from_hyper(domain: str | None, hyper: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """``domain`` and the hyperparameters without ``group``: bnlearn's name for the domain
    (``bn.fit(method = "hdir", group = )``) is accepted; two different columns are an error."""
    if "group" not in hyper:
        return domain, hyper
    hyper = dict(hyper)
    group = hyper.pop("group")
    if domain is not None and group != domain:
        raise StructureError(f"domain={domain!r} and group={group!r} name different columns; give one")
    return group, hyper


def strip_domain(dag: DAG, domain: str) -> DAG:
    """Remove a bnlearn-style group node (a root that is a parent of every other node)."""
    if domain not in dag:
        return dag
    others = [n for n in dag.nodes if n != domain]
    if dag.parents(domain):
        raise StructureError(
            f"the domain {domain!r} is a node of the structure with parents {dag.parents(domain)}; in "
            "bnlearn's layout for grouped fits it is a root parent of every other node"
        )
    lacking = [n for n in others if domain not in dag.parents(n)]
    if lacking:
        raise StructureError(
            f"the domain {domain!r} is a parent of some nodes but not of {lacking[0]!r}"
            + (f" (and {len(lacking) - 1} more)" if len(lacking) > 1 else "")
            + "; in bnlearn's layout for grouped fits it is a root parent of every other node, "
            "otherwise leave it out of the structure"
        )
    return DAG({n: [p for p in dag.parents(n) if p != domain] for n in others}, nodes=others)


def check_domain(domain: str, schema: Schema, trees: dict, raw_rows: dict, na: str) -> None:
    """A multi-domain fit needs two domains or more, each with data after NA handling.

    A level of a categorical domain column with no rows at all is allowed (bnlearn
    keeps such a group: it gets the population-level tables); a domain whose rows
    were all removed by missing values is an error.
    """
    levels = list(schema[domain])
    if len(levels) < 2:
        raise DataError(
            f"the domain column {domain!r} has {len(levels)} level ({levels[0]!r}); a multi-domain "
            "fit needs two domains or more"
            if levels
            else f"the domain column {domain!r} has no levels"
        )
    kept = np.zeros(len(levels))
    for t in trees.values():
        if not t.depth:
            continue
        lev = t.levels[1] if t.parents[0] == domain else t.levels[-1]  # the domain first or last
        if len(lev.value):
            np.add.at(kept, lev.value, lev.counts.sum(axis=1))
    for code, level in enumerate(levels):
        if kept[code] == 0 and raw_rows.get(level, 0) > 0:
            raise DataError(
                f"domain {level!r} of {domain!r} has {raw_rows[level]} row(s) but none is left after "
                f"missing values are handled (na={na!r}) for any node"
            )

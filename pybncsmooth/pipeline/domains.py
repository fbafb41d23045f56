"""Multi-domain fits: the domain column's role in a fit, decided in one place
(:class:`DomainRole`), and its checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..data.schema import Schema
from ..errors import DataError, MissingColumnError, StructureError
from ..options import Options
from ..structure.dag import DAG

__all__ = ["DomainRole", "strip_domain", "check_domain"]


@dataclass(frozen=True)
class DomainRole:
    """Where the domain column of a fit goes, decided here once for every front end.

    * It is never a feature: a learned structure is learned on the rows pooled over the
      domains (:meth:`features`), and a classifier's frames carry it beside the features
      (:meth:`split_frame`).
    * It is not a node of the structure: bnlearn's grouped layout (the domain a root
      parent of every node) is recognised and taken out (:meth:`structure`).
    * It splits every context tree, last (below the node's parents: a domain's table of a
      configuration shrinks toward that configuration pooled over the domains) or first
      where the estimator's ``domain_split`` says so (bnlearn's ``hdir``):
      :meth:`counter_splits`.
    """

    column: str | None = None
    split: str | None = None

    @classmethod
    def of(cls, options: Options, estimator: Any = None) -> "DomainRole":
        """The role of ``options.domain`` for ``estimator`` (its ``domain_split``)."""
        if options.domain is None:
            return cls()
        return cls(options.domain, getattr(estimator, "domain_split", "last"))

    def __bool__(self) -> bool:
        return self.column is not None

    def features(self, columns: Sequence[str], *exclude: str | None) -> list[str]:
        """``columns`` without the domain (and without ``exclude``: the class, the weights)."""
        drop = {self.column, *exclude}
        return [str(c) for c in columns if c not in drop]

    def structure(self, dag: DAG, schema: Schema | None) -> tuple[DAG, Schema | None]:
        """The structure without the domain (bnlearn's grouped layout recognised) and
        the levels a file declares without it."""
        if self.column is None:
            return dag, schema
        dag = strip_domain(dag, self.column)
        if schema is not None and self.column in schema:
            schema = schema.subset([v for v in schema if v != self.column])
        return dag, schema

    def counter_splits(self) -> dict[str, tuple[str, ...]]:
        """The counter's ``prefix`` and ``suffix``: the domain split first or last."""
        one = (self.column,) if self.column is not None else ()
        return {"prefix": one if self.split == "first" else (), "suffix": one if self.split == "last" else ()}

    def split_frame(self, X: pd.DataFrame) -> tuple[pd.Series | None, pd.DataFrame]:
        """The domain column of ``X`` (index reset) and the features without it;
        :class:`MissingColumnError` when ``X`` lacks it."""
        if self.column is None:
            return None, X
        if self.column not in X.columns:
            raise MissingColumnError(self.column, "domain", [str(c) for c in X.columns])
        return X[self.column].reset_index(drop=True), X.drop(columns=self.column)


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

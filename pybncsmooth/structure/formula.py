"""Per-node formulas: ``"D ~ A + C"`` (D has parents A then C), ``"A ~ 1"`` (a root).

A name holding characters other than letters, digits, ``.`` and ``_`` is written
between backticks, as in R: ``"`blood pressure` ~ age"``.  On the right-hand side
``.`` stands for every other variable (the caller supplies the variable list).
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from ..errors import DuplicateNodeError, FormulaError
from .dag import DAG

__all__ = ["parse_formula", "dag_from_formulas"]

_NAME = re.compile(r"^[A-Za-z0-9._]+$")


def _parse_name(token: str, formula: str, side: str) -> str:
    t = token.strip()
    if not t:
        raise FormulaError(f"empty term on the {side}-hand side", formula)
    if t.startswith("`"):
        if len(t) < 3 or not t.endswith("`") or "`" in t[1:-1]:
            raise FormulaError(f"unbalanced backticks in {t!r}", formula)
        return t[1:-1]
    if not _NAME.match(t):
        raise FormulaError(f"{t!r} is not a plain name; quote names with other characters in backticks", formula)
    return t


def _split_terms(rhs: str, formula: str) -> list[str]:
    terms, buf, quoted = [], [], False
    for ch in rhs:
        if ch == "`":
            quoted = not quoted
        if ch == "+" and not quoted:
            terms.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    if quoted:
        raise FormulaError("unbalanced backticks", formula)
    terms.append("".join(buf))
    return terms


def parse_formula(formula: str, variables: Sequence[str] | None = None) -> tuple[str, list[str]]:
    """Split ``"Y ~ A + B"`` into ``("Y", ["A", "B"])``.

    ``"Y ~ 1"`` gives no parents; ``"Y ~ ."`` gives every variable of ``variables``
    other than ``Y`` (in their order), and ``"Y ~ . - A"`` is not supported (write
    the parents out instead).
    """
    if not isinstance(formula, str):
        raise FormulaError(f"expected a string, got {type(formula).__name__}", str(formula))
    if formula.count("~") != 1:
        raise FormulaError("a node formula needs exactly one '~'", formula)
    lhs, rhs = formula.split("~")
    node = _parse_name(lhs, formula, "left")
    rhs = rhs.strip()
    if rhs in ("1", ""):
        if rhs == "":
            raise FormulaError("nothing on the right-hand side (write '~ 1' for no parents)", formula)
        return node, []
    parents: list[str] = []
    for term in _split_terms(rhs, formula):
        t = term.strip()
        if t == ".":
            if variables is None:
                raise FormulaError("'.' needs the list of variables (the data's columns)", formula)
            for v in variables:
                if v != node and v not in parents:
                    parents.append(v)
            continue
        if t == "1":
            raise FormulaError("'1' can only stand alone on the right-hand side", formula)
        if "-" in t and not t.startswith("`"):
            raise FormulaError("'-' is not supported; list the parents explicitly", formula)
        name = _parse_name(t, formula, "right")
        if name == node:
            raise FormulaError(f"node {node!r} cannot be its own parent", formula)
        if name in parents:
            raise DuplicateNodeError(name, f"(listed twice among the parents of {node!r})")
        parents.append(name)
    return node, parents


def dag_from_formulas(formulas: str | Iterable[str], variables: Sequence[str] | None = None) -> DAG:
    """A :class:`DAG` from per-node formulas.

    Nodes come in the order of the formulas; a parent without a formula of its own
    becomes a root, appended after them.  Parents keep the order written.
    """
    if isinstance(formulas, str):
        formulas = [formulas]
    parents: dict[str, list[str]] = {}
    for f in formulas:
        node, pa = parse_formula(f, variables)
        if node in parents:
            raise DuplicateNodeError(node, f"(a second formula {f!r} for it)")
        parents[node] = pa
    if not parents:
        raise FormulaError("no formula given", "")
    return DAG(parents)

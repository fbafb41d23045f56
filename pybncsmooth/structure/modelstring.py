"""bnlearn model strings: ``[A][C][B|A][D|A:C]``.

Grammar (bnlearn's ``model2network``): one ``[...]`` block per node; inside, the
node name, optionally followed by ``|`` and its parents separated by ``:``.  Every
parent must have a block of its own.  Names may hold any character but
``[ ] | :`` (dots, underscores, digits, spaces inside the name).  Whitespace
between blocks and around names is ignored.

Node order.  bnlearn sorts the nodes of a network built from a model string with
R's ``sort()``, which follows the collation of R's locale (``en_US.UTF-8`` for the
reference files: case-insensitive, ``Antilock`` before ``AntiTheft``), and it
stores every node's parents in that node order.  :func:`r_collation_key`
emulates that collation (letters and digits compared case-insensitively, then
lower case before upper case, punctuation last), which reproduces the node order
of every network in bnlearn's reference files; pass ``node_order`` to impose one.
"""

from __future__ import annotations

from typing import Sequence

from ..errors import DuplicateNodeError, ModelStringError, UnknownNodeError
from .dag import DAG

__all__ = ["parse_modelstring", "write_modelstring", "r_collation_key", "r_sorted"]


def r_collation_key(name: str) -> tuple:
    """Sort key emulating R's ``sort()`` of character vectors in an ``en_US.UTF-8`` locale.

    glibc's locale collation compares strings in passes: first the letters and
    digits only, ignoring case and punctuation (digits before letters); then case,
    lower case first; then the punctuation.
    """
    alnum = [c for c in name if c.isalnum()]
    primary = "".join(c.lower() for c in alnum)
    tertiary = tuple(0 if c.islower() or not c.isalpha() else 1 for c in alnum)
    return (primary, tertiary, name)


def r_sorted(names: Sequence[str]) -> list[str]:
    """``names`` sorted as R's ``sort()`` sorts them in an ``en_US.UTF-8`` locale."""
    return sorted(names, key=r_collation_key)


def _parse_block(s: str, pos: int) -> tuple[str, list[str], int]:
    """The node and parents of the block that opens at ``s[pos] == "["``, and the
    position after its ``]``."""
    end = s.find("]", pos + 1)
    if end < 0:
        raise ModelStringError("'[' is never closed by ']'", s, pos)
    body = s[pos + 1 : end]
    nested = body.find("[")
    if nested >= 0:
        raise ModelStringError("'[' inside a node block (a ']' is missing)", s, pos + 1 + nested)
    node_txt, bar, pa_txt = body.partition("|")
    node = node_txt.strip()
    if not node:
        raise ModelStringError("a block has an empty node name", s, pos)
    if ":" in node:
        raise ModelStringError(f"node name {node!r} contains ':' (parents go after '|')", s, pos + 1)
    if "|" in pa_txt:
        raise ModelStringError(f"block of node {node!r} has more than one '|'", s, pos)
    pa: list[str] = []
    if bar:
        if not pa_txt.strip():
            raise ModelStringError(f"node {node!r} has '|' but no parents", s, pos)
        for p in pa_txt.split(":"):
            p = p.strip()
            if not p:
                raise ModelStringError(f"node {node!r} has an empty parent name", s, pos)
            if p in pa:
                raise DuplicateNodeError(p, f"(listed twice among the parents of {node!r})")
            pa.append(p)
    return node, pa, end + 1


def _blocks(s: str) -> dict[str, list[str]]:
    """Every block's node and parents, in written order; every parent has a block."""
    n, pos = len(s), 0
    parents: dict[str, list[str]] = {}
    while True:
        while pos < n and s[pos].isspace():
            pos += 1
        if pos >= n:
            break
        if s[pos] != "[":
            raise ModelStringError(f"expected '[' but found {s[pos]!r}", s, pos)
        node, pa, pos = _parse_block(s, pos)
        if node in parents:
            raise DuplicateNodeError(node, "in the model string")
        parents[node] = pa
    if not parents:
        raise ModelStringError("the model string declares no node", s, None)
    for node, pa in parents.items():
        for p in pa:
            if p not in parents:
                raise UnknownNodeError(p, f"(parent of {node!r} has no block [{p}] of its own in the model string)")
    return parents


def parse_modelstring(modelstring: str, *, order: str = "bnlearn", node_order: Sequence[str] | None = None) -> DAG:
    """Parse a bnlearn model string into a :class:`DAG` (see :meth:`DAG.from_modelstring`)."""
    if not isinstance(modelstring, str):
        raise ModelStringError(f"expected a string, got {type(modelstring).__name__}", str(modelstring))
    if order not in ("bnlearn", "written"):
        raise ValueError(f"order must be 'bnlearn' or 'written', not {order!r}")
    parents = _blocks(modelstring)
    written = list(parents)
    if node_order is not None:
        nodes = [str(x) for x in node_order]
        if sorted(nodes) != sorted(written):
            missing = sorted(set(written) - set(nodes))
            extra = sorted(set(nodes) - set(written))
            raise ModelStringError(
                f"node_order does not list the same nodes (missing {missing}, extra {extra})", modelstring
            )
    elif order == "bnlearn":
        nodes = r_sorted(written)
    else:
        nodes = written
    if order == "bnlearn" or node_order is not None:
        idx = {v: i for i, v in enumerate(nodes)}
        parents = {k: sorted(v, key=idx.__getitem__) for k, v in parents.items()}
    return DAG(parents, nodes=nodes)


def write_modelstring(dag: DAG) -> str:
    """The model string of ``dag`` as bnlearn's ``modelstring()`` writes it."""
    out = []
    for node in dag.topological_order():
        pa = dag.parents(node)
        out.append(f"[{node}|{':'.join(pa)}]" if pa else f"[{node}]")
    return "".join(out)

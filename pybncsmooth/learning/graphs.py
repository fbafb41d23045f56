"""Equivalence classes of DAGs and the distances between structures, as bnlearn's
``cpdag()``, ``shd()`` and ``compare()``.

Markov-equivalent DAGs (the same skeleton and unshielded colliders, Verma & Pearl 1990)
fit every data set equally well under a score-equivalent score, so a learned structure
is judged by its equivalence class: the CPDAG, whose directed arcs are those every
member shares (compelled) and whose undirected arcs those members orient both ways.  It
is built from the DAG's skeleton and unshielded colliders by Meek's (1995) orientation
rules R1-R3 (R4 is never needed when starting from a DAG's colliders).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import StructureError
from ..pipeline.structure import resolve_structure
from ..structure.dag import DAG

__all__ = ["CPDAG", "cpdag", "shd", "compare"]


@dataclass(frozen=True)
class CPDAG:
    """A completed partially directed acyclic graph (an equivalence class of DAGs).

    ``directed`` holds the compelled arcs ``(from, to)``, ``undirected`` the reversible
    ones as pairs in node order; :attr:`arcs` lists them as bnlearn does (an undirected
    arc in both directions)."""

    nodes: tuple[str, ...]
    directed: frozenset[tuple[str, str]]
    undirected: frozenset[tuple[str, str]]

    @property
    def arcs(self) -> list[tuple[str, str]]:
        pos = {v: i for i, v in enumerate(self.nodes)}
        both = [(a, b) for a, b in self.undirected] + [(b, a) for a, b in self.undirected]
        return sorted([*self.directed, *both], key=lambda e: (pos[e[0]], pos[e[1]]))

    def __repr__(self) -> str:
        return (f"CPDAG({len(self.nodes)} nodes, {len(self.directed)} directed and {len(self.undirected)} "
                "undirected arcs)")


def _as_dag(x: Any) -> DAG:
    if isinstance(x, CPDAG):
        raise StructureError("a CPDAG has no single DAG: pass the DAG")
    dag, _ = resolve_structure(x)
    return dag


def cpdag(dag: Any) -> CPDAG:
    """The CPDAG (essential graph) of a DAG, as bnlearn's ``cpdag()``: the DAG's
    unshielded colliders ``a -> c <- b`` (``a``, ``b`` not adjacent) are compelled, and
    Meek's rules orient the other arcs that no equivalent DAG reverses:

    * R1: ``a -> b - c``, ``a``, ``c`` not adjacent: ``b -> c``;
    * R2: ``a -> b -> c`` and ``a - c``: ``a -> c``;
    * R3: ``a - b``, ``c -> b <- d`` with ``a - c``, ``a - d``, ``c``, ``d`` not
      adjacent: ``a -> b``.

    ``dag``: a :class:`~pybncsmooth.DAG` or any structure :func:`pybncsmooth.fit` takes.
    """
    g = _as_dag(dag)
    nodes = g.nodes
    parents = {v: set(g.parents(v)) for v in nodes}
    adj = {v: set(parents[v]) | set(g.children(v)) for v in nodes}
    directed: set[tuple[str, str]] = set()
    for c in nodes:
        pa = sorted(parents[c])
        for i, a in enumerate(pa):
            for b in pa[i + 1:]:
                if b not in adj[a]:
                    directed |= {(a, c), (b, c)}
    undirected = {(a, b) for b in nodes for a in parents[b] if (a, b) not in directed}
    _meek(nodes, adj, directed, undirected)
    pos = {v: i for i, v in enumerate(nodes)}
    und = frozenset((a, b) if pos[a] < pos[b] else (b, a) for a, b in undirected)
    return CPDAG(tuple(nodes), frozenset(directed), und)


def _meek(nodes: list[str], adj: dict[str, set[str]], directed: set, undirected: set) -> None:
    """Orient the undirected arcs (kept as the DAG's own direction ``(a, b)``) by Meek's
    R1-R3 until none applies; every arc oriented keeps the DAG's direction."""
    changed = True
    while changed:
        changed = False
        for a, b in sorted(undirected):
            if _compelled(a, b, adj, directed):
                undirected.discard((a, b))
                directed.add((a, b))
                changed = True


def _compelled(a: str, b: str, adj: dict[str, set[str]], directed: set) -> bool:
    """Whether a rule orients the undirected arc ``a - b`` as ``a -> b``."""
    into_a = {x for x in adj[a] if (x, a) in directed}
    if any(b not in adj[x] and x != b for x in into_a):  # R1
        return True
    if any((a, x) in directed and (x, b) in directed for x in adj[a] & adj[b]):  # R2
        return True
    into_b = [x for x in adj[b] & adj[a] if (x, b) in directed and (x, a) not in directed and (a, x) not in directed]
    return any(d not in adj[c] for i, c in enumerate(into_b) for d in into_b[i + 1:])  # R3


def _as_cpdag(x: Any) -> CPDAG:
    return x if isinstance(x, CPDAG) else cpdag(x)


def _check_nodes(a: CPDAG, b: CPDAG) -> None:
    if set(a.nodes) != set(b.nodes):
        diff = sorted(set(a.nodes) ^ set(b.nodes))
        raise StructureError(f"the two structures have different nodes: {diff[0]!r} is in only one")


def shd(learned: Any, true: Any) -> int:
    """The structural Hamming distance of two structures, as bnlearn's ``shd()``: the
    pairs of nodes whose arc differs (absent, ``->``, ``<-`` or undirected) between
    the two CPDAGs (Tsamardinos, Brown & Aliferis 2006).  DAGs are replaced by their
    :func:`cpdag`."""
    a, b = _as_cpdag(learned), _as_cpdag(true)
    _check_nodes(a, b)
    return sum(1 for pair in _pairs(a) | _pairs(b) if _state(a, *pair) != _state(b, *pair))


def _pairs(g: CPDAG) -> set[tuple[str, str]]:
    return {tuple(sorted(e)) for e in (*g.directed, *g.undirected)}  # type: ignore[misc]


def _state(g: CPDAG, a: str, b: str) -> int:
    if (a, b) in g.directed:
        return 1
    if (b, a) in g.directed:
        return 2
    return 3 if (a, b) in g.undirected or (b, a) in g.undirected else 0


def compare(target: Any, current: Any, *, cpdag: bool = True, arcs: bool = False) -> dict[str, Any]:
    """True positive, false positive and false negative arcs of ``current`` against
    ``target``, as bnlearn's ``compare()``: a directed arc counts when present with the
    same direction, an undirected arc when present undirected.

    Parameters
    ----------
    target, current:
        Structures (DAGs, model strings, :class:`CPDAG`\\ s).
    cpdag:
        Compare the equivalence classes (default): a DAG is replaced by its
        :func:`cpdag` first, as ``compare(cpdag(target), cpdag(current))``; with
        ``False``, two DAGs are compared arc by arc as given, bnlearn's
        ``compare(target, current)``.
    arcs:
        Return the arcs of each kind (lists of ``(from, to)``; an undirected arc as its
        pair in node order) instead of their numbers.

    Returns
    -------
    dict
        ``{"tp": ..., "fp": ..., "fn": ...}``.
    """
    if cpdag:
        a, b = _as_cpdag(target), _as_cpdag(current)
    else:
        a, b = (_plain(x) for x in (target, current))
    _check_nodes(a, b)
    tp = sorted(a.directed & b.directed) + sorted(a.undirected & b.undirected)
    fn = sorted(a.directed - b.directed) + sorted(a.undirected - b.undirected)
    fp = sorted(b.directed - a.directed) + sorted(b.undirected - a.undirected)
    if arcs:
        return {"tp": tp, "fp": fp, "fn": fn}
    return {"tp": len(tp), "fp": len(fp), "fn": len(fn)}


def _plain(x: Any) -> CPDAG:
    """A DAG as a CPDAG of directed arcs only (compared as given); a CPDAG unchanged."""
    if isinstance(x, CPDAG):
        return x
    g = _as_dag(x)
    return CPDAG(tuple(g.nodes), frozenset(g.arcs), frozenset())

"""Directed acyclic graphs with *ordered* parent lists.

The order of a node's parents is the branching order of its context tree
(:mod:`pybncsmooth.counting`): the first parent splits the root, the second the
nodes below it, and so on.  It is also the axis order of the node's dense CPT,
``(node, parent_1, ..., parent_d)``, which is bnlearn's layout.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping, Sequence

from ..errors import CycleError, DuplicateNodeError, StructureError, UnknownNodeError

__all__ = ["DAG"]


class DAG:
    """A DAG over named nodes, each with an ordered tuple of parents.

    Parameters
    ----------
    parents:
        Mapping node -> sequence of its parents, in branching order.  Nodes that
        appear only as parents are added as root nodes.
    nodes:
        The node order (default: the mapping's order, then parent-only nodes in
        order of appearance).  It must contain every node.

    Raises
    ------
    DuplicateNodeError
        A parent listed twice for one node, or ``nodes`` with a repeated name.
    UnknownNodeError
        ``nodes`` given but missing a node named in ``parents``.
    CycleError
        The graph has a directed cycle (the message lists it); self-loops included.

    Examples
    --------
    >>> dag = DAG({"B": ["A"], "C": ["A", "B"]})
    >>> dag.modelstring()
    '[A][B|A][C|A:B]'
    """

    __slots__ = ("_nodes", "_parents", "_children", "_index")

    def __init__(
        self,
        parents: Mapping[str, Sequence[str]] | None = None,
        nodes: Sequence[str] | None = None,
    ) -> None:
        if parents is not None and not isinstance(parents, (dict, Mapping)):
            raise StructureError(f"parents must be a mapping of node -> parent names, not a {type(parents).__name__}")
        parents = dict(parents or {})
        for n, pa in parents.items():
            if not isinstance(pa, (list, tuple)) and (isinstance(pa, (str, bytes)) or not isinstance(pa, Iterable)):
                raise StructureError(f"the parents of {n!r} must be a list of names, not {pa!r}")
        parents = {str(n): [str(p) for p in pa] for n, pa in parents.items()}
        if nodes is None:
            order: list[str] = []
            seen: set[str] = set()
            for n in parents:
                if n not in seen:
                    seen.add(n)
                    order.append(n)
            for pa in parents.values():
                for p in pa:
                    if p not in seen:
                        seen.add(p)
                        order.append(p)
        else:
            order = [str(n) for n in nodes]
            seen = set()
            for n in order:
                if n in seen:
                    raise DuplicateNodeError(n, "in the node list")
                seen.add(n)
            for n, pa in parents.items():
                if n not in seen:
                    raise UnknownNodeError(n, "(it has parents but is not in the node list)")
                for p in pa:
                    if p not in seen:
                        raise UnknownNodeError(p, f"(parent of {n!r}, not in the node list)")
        pmap: dict[str, tuple[str, ...]] = {}
        for n in order:
            pa = tuple(str(p) for p in parents.get(n, ()))
            if len(set(pa)) != len(pa):
                dup = next(p for i, p in enumerate(pa) if p in pa[:i])
                raise DuplicateNodeError(dup, f"(listed twice among the parents of {n!r})")
            if n in pa:
                raise CycleError([n])
            pmap[n] = pa
        self._link(pmap)

    @classmethod
    def _from_checked(cls, parents: dict[str, tuple[str, ...]]) -> "DAG":
        """The DAG of ``parents`` (node -> its parents' names, nodes in node order) whose
        maker checked what the constructor checks of its input (names are text, nodes
        distinct, every parent a node, none listed twice): a file's reader.  A node its
        own parent, and a cycle, raise :class:`CycleError` as the constructor does."""
        for n, pa in parents.items():
            if n in pa:
                raise CycleError([n])
        dag = cls.__new__(cls)
        dag._link(parents)
        return dag

    def _link(self, pmap: dict[str, tuple[str, ...]]) -> None:
        """Nodes, parents, children and the node index from ``pmap``; a cycle raises."""
        order = list(pmap)
        self._nodes = tuple(order)
        self._parents = pmap
        self._index = {n: i for i, n in enumerate(order)}
        ch: dict[str, list[str]] = {n: [] for n in order}
        for n in order:
            for p in pmap[n]:
                ch[p].append(n)
        self._children = {n: tuple(sorted(c, key=self._index.__getitem__)) for n, c in ch.items()}
        cycle = self._find_cycle()
        if cycle:
            raise CycleError(cycle)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_modelstring(
        cls, modelstring: str, *, order: str = "bnlearn", node_order: Sequence[str] | None = None
    ) -> "DAG":
        """Parse a bnlearn model string such as ``"[A][C][B|A][D|A:C]"``.

        With ``order="bnlearn"`` (default) the result is what bnlearn's
        ``model2network()`` builds: nodes sorted as R sorts them, and each node's
        parents stored in that node order (``[E|T:L]`` gives parents ``L, T``).
        ``order="written"`` keeps the nodes and parents in the order of the string.
        ``node_order`` imposes an explicit node order (as ``model2network(node.order=)``);
        parents are then stored in that order.
        """
        from .modelstring import parse_modelstring

        return parse_modelstring(modelstring, order=order, node_order=node_order)

    @classmethod
    def from_formulas(cls, formulas: str | Iterable[str], variables: Sequence[str] | None = None) -> "DAG":
        """Build a DAG from per-node formulas: ``["B ~ A", "C ~ A + B", "A ~ 1"]``.

        Parents keep the order they are written in.  ``.`` on the right-hand side
        stands for every variable of ``variables`` other than the node.
        """
        from .formula import dag_from_formulas

        return dag_from_formulas(formulas, variables)

    @classmethod
    def from_edges(cls, edges: Iterable[tuple[str, str]], nodes: Sequence[str] | None = None) -> "DAG":
        """Build a DAG from ``(parent, child)`` pairs; each child's parents keep edge order.

        ``nodes`` fixes the node order and may add isolated nodes.
        """
        parents: dict[str, list[str]] = {}
        order: list[str] = list(nodes) if nodes is not None else []
        seen = set(order)
        for e in edges:
            try:
                a, b = e
            except (TypeError, ValueError):
                raise StructureError(f"an edge must be a (parent, child) pair, not {e!r}") from None
            a, b = str(a), str(b)
            for x in (a, b):
                if x not in seen:
                    if nodes is not None:
                        raise UnknownNodeError(x, "(in an edge but not in the node list)")
                    seen.add(x)
                    order.append(x)
            parents.setdefault(b, []).append(a)
        return cls(parents, nodes=order)

    @classmethod
    def from_networkx(cls, graph: Any) -> "DAG":
        """Build a DAG from a ``networkx.DiGraph``.

        Parents are ordered by the edge attribute ``"order"`` when present (as
        written by :meth:`to_networkx`), otherwise by edge insertion order.
        """
        if not graph.is_directed():
            raise StructureError("a Bayesian network needs a directed graph (networkx.DiGraph)")
        parents: dict[str, list[tuple[float, int, str]]] = {}
        for k, (a, b, attrs) in enumerate(graph.edges(data=True)):
            parents.setdefault(str(b), []).append((attrs.get("order", k), k, str(a)))
        pa = {n: [p for _, _, p in sorted(v)] for n, v in parents.items()}
        return cls(pa, nodes=[str(n) for n in graph.nodes])

    # ------------------------------------------------------------------ access
    @property
    def nodes(self) -> list[str]:
        """Node names in the DAG's node order."""
        return list(self._nodes)

    def __contains__(self, node: object) -> bool:
        return node in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._nodes)

    def __len__(self) -> int:
        return len(self._nodes)

    def _check(self, node: str) -> None:
        if node not in self._index:
            raise UnknownNodeError(node, "in the network")

    def parents(self, node: str) -> list[str]:
        """The parents of ``node``, in branching (CPT axis) order."""
        self._check(node)
        return list(self._parents[node])

    def children(self, node: str) -> list[str]:
        """The children of ``node``, in node order."""
        self._check(node)
        return list(self._children[node])

    def markov_blanket(self, node: str) -> list[str]:
        """Parents, children and the children's other parents, in node order."""
        self._check(node)
        mb = set(self._parents[node]) | set(self._children[node])
        for c in self._children[node]:
            mb |= set(self._parents[c])
        mb.discard(node)
        return sorted(mb, key=self._index.__getitem__)

    @property
    def arcs(self) -> list[tuple[str, str]]:
        """All arcs ``(parent, child)``: children in node order, parents in branching order."""
        return [(p, n) for n in self._nodes for p in self._parents[n]]

    def roots(self) -> list[str]:
        return [n for n in self._nodes if not self._parents[n]]

    def leaves(self) -> list[str]:
        return [n for n in self._nodes if not self._children[n]]

    def depths(self) -> dict[str, int]:
        """Depth of every node: 1 for roots, else 1 + the longest path from a root."""
        depth: dict[str, int] = {}
        for n in self._kahn_order():
            pa = self._parents[n]
            depth[n] = 1 + max((depth[p] for p in pa), default=0)
        return depth

    def topological_order(self) -> list[str]:
        """Nodes sorted by depth, ties kept in node order (bnlearn's ``topological.ordering``)."""
        depth = self.depths()
        return sorted(self._nodes, key=lambda n: (depth[n], self._index[n]))

    def modelstring(self) -> str:
        """The bnlearn model string, written exactly as bnlearn's ``modelstring()`` does:
        nodes in topological order (by depth, then node order), parents in stored order."""
        from .modelstring import write_modelstring

        return write_modelstring(self)

    def to_edges(self) -> list[tuple[str, str]]:
        """Arcs as ``(parent, child)`` pairs (see :attr:`arcs`)."""
        return self.arcs

    def to_networkx(self) -> Any:
        """A ``networkx.DiGraph``; each edge carries ``order``, its position among the child's parents."""
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(self._nodes)
        for n in self._nodes:
            for k, p in enumerate(self._parents[n]):
                g.add_edge(p, n, order=k)
        return g

    def with_parents(self, node: str, parents: Sequence[str]) -> "DAG":
        """A copy with ``node``'s parent list replaced (e.g. reordered)."""
        self._check(node)
        pa = dict(self._parents)
        pa[node] = tuple(parents)
        return DAG(pa, nodes=self._nodes)

    def parents_sorted_by_node_order(self) -> "DAG":
        """A copy whose parent lists follow the node order (bnlearn's storage)."""
        return DAG(
            {n: sorted(self._parents[n], key=self._index.__getitem__) for n in self._nodes},
            nodes=self._nodes,
        )

    def subgraph(self, nodes: Iterable[str]) -> "DAG":
        """The DAG induced on ``nodes`` (kept in this DAG's node order)."""
        keep = set(nodes)
        for n in keep:
            self._check(n)
        order = [n for n in self._nodes if n in keep]
        return DAG({n: [p for p in self._parents[n] if p in keep] for n in order}, nodes=order)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DAG):
            return NotImplemented
        return self._nodes == other._nodes and self._parents == other._parents

    def same_graph(self, other: "DAG") -> bool:
        """True if both have the same nodes and arcs, whatever the orders."""
        return set(self._nodes) == set(other._nodes) and all(
            set(self._parents[n]) == set(other._parents[n]) for n in self._nodes
        )

    def __hash__(self) -> int:
        return hash((self._nodes, tuple(self._parents[n] for n in self._nodes)))

    def __repr__(self) -> str:
        ms = self.modelstring()
        if len(ms) > 120:
            ms = ms[:117] + "..."
        return f"DAG({len(self._nodes)} nodes, {len(self.arcs)} arcs: {ms})"

    # ------------------------------------------------------------------ helpers
    def _kahn_order(self) -> list[str]:
        indeg = {n: len(self._parents[n]) for n in self._nodes}
        ready = [n for n in self._nodes if indeg[n] == 0]
        out: list[str] = []
        i = 0
        while i < len(ready):
            n = ready[i]
            i += 1
            out.append(n)
            for c in self._children[n]:
                indeg[c] -= 1
                if indeg[c] == 0:
                    ready.append(c)
        return out

    def _find_cycle(self) -> list[str] | None:
        if len(self._kahn_order()) == len(self._nodes):
            return None
        # iterative DFS over parent links to extract one cycle
        state = {n: 0 for n in self._nodes}  # 0 new, 1 on stack, 2 done
        for start in self._nodes:
            if state[start]:
                continue
            stack: list[tuple[str, int]] = [(start, 0)]
            path: list[str] = []
            while stack:
                n, i = stack.pop()
                if i == 0:
                    state[n] = 1
                    path.append(n)
                ch = self._children[n]
                if i < len(ch):
                    stack.append((n, i + 1))
                    c = ch[i]
                    if state[c] == 1:
                        return path[path.index(c) :]
                    if state[c] == 0:
                        stack.append((c, 0))
                else:
                    state[n] = 2
                    path.pop()
        return None  # pragma: no cover - Kahn found a cycle, DFS must too

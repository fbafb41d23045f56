"""Score-based structure searches, as bnlearn's ``hc()`` and ``tabu()``.

Both move through DAGs by single arc operations (add, remove, reverse).  Each step
scans the score changes of every legal operation in bnlearn's order (additions, then
removals, then reversals; ``from`` then ``to`` in the data's column order) and takes
the first largest, a change counting as larger only above
:math:`\\sqrt{\\epsilon_{\\mathrm{machine}}}`: on the same data the searches take
bnlearn's path.  The score is decomposable, so an operation changes the terms of its
head (a reversal: of both ends); the changes of the operations on those nodes are the
only ones recomputed after a step, from family scores cached by family
(:class:`~pybncsmooth.learning._family.FamilyScorer`), each family counted once by the
compiled counting.

* Hill climbing (``hc``) stops when no operation improves the score; ``restart`` random
  restarts each perturb the best network by ``perturb`` random operations and climb
  again, the best network of all being returned.  With the BHD score and neither
  ``start`` nor ``restart`` given, hc also climbs from the pooled rows' BDeu network and
  goes on by iterated local search (see :func:`hc`).
* Tabu search (``tabu``, Glover 1986) also takes the least bad operation when none
  improves, never returning to one of the last ``tabu`` networks, and stops after
  ``max_tabu`` such steps without improving on the best network, which it returns.
"""

from __future__ import annotations

import math
import time
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from ..errors import CycleError, HyperparameterError, StructureError, UnknownNodeError
from ..pipeline.structure import resolve_structure
from ..structure.dag import DAG
from ..validation import check_int, check_random_state, progress_bar
from .._jit import numba_loaded
from ._family import FamilyScorer, use_twins
from ._kernels import best_move, has_path
from ._twins import best_move_numpy, has_path_numpy
from .scores import make_scorer

__all__ = ["hc", "tabu"]

#: bnlearn's tolerance of score comparisons (MACHINE_TOL)
TOL = math.sqrt(np.finfo(float).eps)
#: scores whose value is the same for Markov-equivalent networks
_EQUIVALENT = ("loglik", "aic", "bic", "bde")
#: seconds of searching after which a progress bar (when enabled) appears
_BAR_AFTER = 2.0
#: the default search of the BHD score (iterated local search from the pooled rows' BDeu
#: network): its restarts, the share of the best network's arcs each removes (rounded
#: up), and the seed of the removals when ``random_state`` is None.  Chosen on alarm's
#: homogeneous 5 x 200 and 10 x 200 rows (``benchmarks/bench_structure_shd.py``'s data,
#: 5 replicates), where the plain climb from the empty graph ends at mean SHD 33.4 and
#: 30.8 (pooled BDeu: 31.2, 27.8); from the BDeu network with no restart: 33.4 and 28.2,
#: 10 restarts: 32.0 and 24.2, 20 restarts: 30.4 and 23.2 (another seed: 31.6 and 20.0)
_RUIN_RESTARTS = 20
_RUIN_SHARE = 0.2
_RUIN_SEED = 0


class _Search:
    """The state of a search: adjacency matrix, family terms, the cache of score changes."""

    def __init__(self, scorer: FamilyScorer, nodes: list[str], start: np.ndarray, wl: np.ndarray,
                 bl: np.ndarray, maxp: float) -> None:
        self.s = scorer
        self.nodes = nodes
        self.p = len(nodes)
        self.am = start.astype(np.int8)
        self.wl = wl
        self.bl = bl
        self.maxp = maxp
        self.equivalent = scorer.type in _EQUIVALENT
        self.ref = np.array([scorer.family(j, self.parents(j)) for j in range(self.p)])
        self.delta = np.zeros((self.p, self.p))

    def parents(self, j: int) -> list[int]:
        return np.flatnonzero(self.am[:, j]).tolist()

    def total(self) -> float:
        return float(self.ref.sum())

    def fill(self, updated: Iterable[int]) -> None:
        """The score change of toggling every arc ``i -> j`` into the nodes ``updated``."""
        s, am, bl, ref = self.s, self.am, self.bl, self.ref
        rooted = am.any(axis=0)
        for j in updated:
            pa = self.parents(j)
            col = self.delta[:, j]
            for i in range(self.p):
                if i == j or bl[i, j]:
                    continue
                if am[i, j]:
                    new = [x for x in pa if x != i]
                elif self.equivalent and not pa and not rooted[i] and (i, (j,)) in s.cache:
                    col[i] = s.cache[(i, (j,))] - ref[i]  # i -> j and j -> i: equivalent networks
                    continue
                else:
                    new = pa + [i]
                col[i] = s.family(j, new) - ref[j]

    def added(self) -> np.ndarray:
        """bnlearn's candidate additions: absent in both directions, not blacklisted,
        into a node below ``maxp`` parents."""
        am = self.am
        a = ((am == 0) & (am.T == 0)).astype(np.int8)
        np.fill_diagonal(a, 0)
        a[:, am.sum(axis=0) >= self.maxp] = 0
        a[self.bl != 0] = 0
        return a

    def step(self, tabu: np.ndarray, n_tabu: int, baseline: float) -> tuple[int, int, int]:
        nparents = self.am.sum(axis=0).astype(np.float64)
        maxp = float(min(self.maxp, 1e300))
        move = best_move_numpy if self.s.twins else best_move
        return move(self.am, self.delta, self.added(), self.wl, self.bl, nparents, maxp, tabu, n_tabu, baseline, TOL)

    def apply(self, op: int, i: int, j: int) -> list[int]:
        """Apply an operation (1 add, 2 remove, 3 reverse ``i -> j``) and update the terms;
        the nodes whose parents changed."""
        if op == 1:
            self.am[i, j] = 1
        elif op == 2:
            self.am[i, j] = 0
        else:
            self.am[i, j] = 0
            self.am[j, i] = 1
        changed = [j] if op != 3 else [i, j]
        for v in changed:
            self.ref[v] = self.s.family(v, self.parents(v))
        return changed

    def set_state(self, am: np.ndarray) -> None:
        self.am = am.copy()
        self.ref = np.array([self.s.family(j, self.parents(j)) for j in range(self.p)])

    def dag(self) -> DAG:
        return DAG({v: [self.nodes[i] for i in self.parents(j)] for j, v in enumerate(self.nodes)}, nodes=self.nodes)


class _Bar:
    """A progress bar shown once a search has run ``_BAR_AFTER`` seconds (when enabled)."""

    def __init__(self, progress: bool | None, desc: str) -> None:
        self.progress = progress
        self.desc = desc
        self.t0 = time.perf_counter()
        self.bar = None

    def update(self, score: float) -> None:
        if self.progress is False:
            return
        if self.bar is None:
            if time.perf_counter() - self.t0 < _BAR_AFTER:
                return
            self.bar = progress_bar(self.progress, None, self.desc)
            if self.bar is None:
                self.progress = False
                return
        self.bar.update(1)
        self.bar.set_postfix(score=f"{score:.6g}", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _arc_matrix(arcs: Any, index: dict[str, int], what: str) -> np.ndarray:
    """An arc list (pairs ``(from, to)``, or a data frame of two columns) as a matrix."""
    p = len(index)
    out = np.zeros((p, p), dtype=np.int8)
    if arcs is None:
        return out
    if isinstance(arcs, pd.DataFrame):
        if arcs.shape[1] != 2:
            raise StructureError(f"the {what} must have two columns (from, to), not {arcs.shape[1]}")
        arcs = list(arcs.itertuples(index=False, name=None))
    for arc in arcs:
        if isinstance(arc, str) or len(arc) != 2:
            raise StructureError(f"each arc of the {what} must be a pair (from, to), not {arc!r}")
        a, b = str(arc[0]), str(arc[1])
        for v in (a, b):
            if v not in index:
                raise UnknownNodeError(v, f"(the {what} names it; it is not a column of the data)")
        if a == b:
            raise StructureError(f"the {what} holds a loop {a!r} -> {a!r}")
        out[index[a], index[b]] = 1
    return out


def _constraints(nodes: list[str], whitelist: Any, blacklist: Any, start: Any, maxp: int | None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(start adjacency, whitelist, blacklist, maxp) as bnlearn builds them: a whitelisted
    arc's reverse is blacklisted, a whitelisted arc is never blacklisted, the start
    network gains the whitelist and loses the blacklist."""
    index = {v: i for i, v in enumerate(nodes)}
    wl = _arc_matrix(whitelist, index, "whitelist")
    bl = _arc_matrix(blacklist, index, "blacklist")
    both = np.argwhere((wl == 1) & (wl.T == 1))
    if len(both):
        a, b = nodes[both[0][0]], nodes[both[0][1]]
        raise StructureError(f"the whitelist holds both {a!r} -> {b!r} and {b!r} -> {a!r}: a search needs one direction")
    bl = np.where(wl.T == 1, 1, bl).astype(np.int8)
    bl[wl == 1] = 0
    am = np.zeros((len(nodes), len(nodes)), dtype=np.int8)
    if start is not None:
        dag, _ = resolve_structure(start, nodes)
        if sorted(dag.nodes) != sorted(nodes):
            extra = sorted(set(dag.nodes) ^ set(nodes))
            raise UnknownNodeError(extra[0], "(the start network and the data differ in it)")
        for a, b in dag.arcs:
            am[index[a], index[b]] = 1
    am[wl.T == 1] = 0
    am[wl == 1] = 1
    am[bl == 1] = 0
    _check_acyclic(am, nodes)
    limit = math.inf if maxp is None else check_int("maxp", maxp, low=0)
    over = np.flatnonzero(am.sum(axis=0) > limit)
    if len(over):
        raise StructureError(f"node {nodes[over[0]]!r} of the start network has more than maxp = {maxp} parents")
    return am, wl, bl, limit


def _check_acyclic(am: np.ndarray, nodes: list[str]) -> None:
    stack = np.empty(len(nodes), dtype=np.int64)
    seen = np.empty(len(nodes), dtype=np.int64)
    twins = not numba_loaded()
    for i, j in np.argwhere(am == 1):
        if has_path_numpy(am, j, i, False) if twins else has_path(am, j, i, False, stack, seen):
            raise CycleError([nodes[k] for k in _cycle(am, int(i), int(j))])


def _cycle(am: np.ndarray, i: int, j: int) -> list[int]:
    """The nodes of a cycle through the arc ``i -> j`` (a path ``j -> ... -> i`` exists)."""
    came = {j: -1}
    queue = [j]
    for v in queue:
        if v == i:
            break
        for w in np.flatnonzero(am[v]).tolist():
            if w not in came:
                came[w] = v
                queue.append(w)
    path = [i]
    while path[-1] != j:
        path.append(came[path[-1]])
    return [i] + path[::-1][:-1]  # i -> j -> ... -> (back to i)


def _setup(data: Any, score: str, whitelist: Any, blacklist: Any, start: Any, maxp: int | None,
           hyper: dict[str, Any]) -> _Search:
    if not isinstance(data, pd.DataFrame):
        raise StructureError(f"a structure search takes a pandas DataFrame, not a {type(data).__name__}")
    domain = hyper.get("domain") if score == "bhd" else None
    nodes = [str(c) for c in data.columns if str(c) != domain]
    if len(set(nodes)) != len(nodes):
        raise StructureError("the data has two columns of one name")
    scorer = make_scorer(data, nodes, score, hyper)
    use_twins(scorer, len(nodes) * (len(nodes) - 1))  # the families of a first step
    am, wl, bl, limit = _constraints(nodes, whitelist, blacklist, start, maxp)
    return _Search(scorer, nodes, am, wl, bl, limit)


def _max_iter(max_iter: int | None) -> float:
    return math.inf if max_iter is None else check_int("max_iter", max_iter, low=0)


def hc(data: pd.DataFrame, score: str = "bic", *, whitelist: Any = None, blacklist: Any = None,
       start: Any = None, maxp: int | None = None, restart: int | None = None, perturb: int | None = None,
       max_iter: int | None = None, random_state: Any = None, progress: bool | None = None,
       **hyperparameters: Any) -> DAG:
    """Hill climbing over DAGs, as bnlearn's ``hc()``.

    Parameters
    ----------
    data:
        A data frame of categorical columns without missing values; every column is a
        node (but the ``domain`` column of ``score="bhd"``).
    score:
        A decomposable score of :func:`pybncsmooth.score`: ``"bic"`` (default, as
        bnlearn's), ``"aic"``, ``"loglik"``, ``"bde"``, ``"bds"``, ``"k2"``, ``"bhd"``.
    whitelist, blacklist:
        Arcs ``(from, to)`` (pairs, or a data frame of two columns) that must be / must
        not be in the network; a whitelisted arc's reverse is blacklisted.
    start:
        The network to start from (any structure :func:`pybncsmooth.fit` takes; default
        the empty graph); it gains the whitelist and loses the blacklist.  Given, the
        search is bnlearn's hill climbing from it, whatever the score.
    maxp:
        The most parents of a node (default: no limit).
    restart, perturb:
        Random restarts, and the random arc operations that perturb the best network
        before each (bnlearn's defaults: 0 and 1).  With ``score="bhd"``, ``restart=0``
        is bnlearn's plain climb from the empty graph, and no ``restart`` (nor
        ``start``) the score's default search (see Notes).
    max_iter:
        The most operations (and restarts) in all (default: no limit); in the BHD
        score's default search, of each of its climbs and of its pooled BDeu search.
    random_state:
        Seeds the perturbations of random restarts, and the arc removals of the BHD
        score's default search (``None`` there: a fixed seed, so that the default search
        gives one network for one data set, as a plain climb does).
    progress:
        A progress bar once the search has run two seconds (``None``: when standard
        error is a terminal).
    **hyperparameters:
        The score's: ``iss`` (BDe/BDs), ``k`` (AIC/BIC), ``domain`` and the model's for
        BHD.

    Returns
    -------
    DAG
        The learned network over the data's columns in their order, each node's parents
        in that order; ``pybncsmooth.fit`` takes it.

    Notes
    -----
    **The BHD score's default search.**  BHD is not score equivalent: an arc's direction
    changes the score even where the data cannot tell it, and a climb from the empty
    graph fixes directions early and often stops in a poor local optimum (on alarm's
    homogeneous domains, a climb from the true network ends at a higher score, much
    closer to the truth).  When the domains agree, BHD behaves like a BDeu score of the
    pooled rows.  So with ``score="bhd"`` and neither ``start`` nor ``restart`` given, hc

    1. climbs from the empty graph, as bnlearn's hc (the *plain* climb);
    2. learns the pooled rows' network by hc with BDeu (``iss = 1``; the same whitelist,
       blacklist and ``maxp``) and climbs with BHD from it;
    3. goes on from there by *iterated local search* (Lourenço, Martin & Stützle 2003)
       with a ruin-and-recreate perturbation: 20 times it removes a random fifth of the
       best network's arcs (never a whitelisted one) and climbs again, a network
       replacing the best only if it scores higher;

    and returns the higher-scoring of the plain climb's network and the search's best
    (the latter on a tie).  Each climb takes only improving operations, so the network
    returned scores at least as high as the plain climb's.  The removals are drawn from
    ``random_state`` (``None``: a fixed seed).  ``perturb`` applies to bnlearn's restarts
    only.  ``restart=0`` (or any ``start``) gives bnlearn's plain hill climbing,
    ``restart=k`` its random restarts.

    Examples
    --------
    >>> import pybncsmooth as bs
    >>> df = bs.load_dataset("asia")
    >>> bs.hc(df, score="bde", iss=1).modelstring()
    '[A][S][T][L|S][B|S][E|T:L][X|E][D|B:E]'
    """
    default = score == "bhd" and start is None and restart is None
    restart = 0 if restart is None else check_int("restart", restart, low=0)
    perturb = 1 if perturb is None else check_int("perturb", perturb, low=0)
    limit = _max_iter(max_iter)
    rng = np.random.default_rng(check_random_state(_RUIN_SEED if default and random_state is None else random_state))
    s = _setup(data, score, whitelist, blacklist, start, maxp, hyperparameters)
    bar = _Bar(progress, "hc")
    if default:
        try:
            _bhd_search(s, data, hyperparameters, whitelist, blacklist, maxp, max_iter, limit, rng, bar)
        finally:
            bar.close()
        return s.dag()
    updated: list[int] = list(range(s.p))
    left = restart
    best: tuple[np.ndarray, float] | None = None
    it = 1
    empty = np.zeros((1, s.p, s.p), dtype=np.int8)
    try:
        while limit > 0:
            s.fill(updated)
            op, i, j = s.step(empty, 0, 0.0)
            if op == 0:
                if restart == 0:
                    break
                if best is None or best[1] - s.total() <= 0:  # a tie keeps the new network, as bnlearn
                    best = (s.am.copy(), s.total())
                else:
                    s.set_state(best[0])
                if left == 0 or it >= limit:
                    break
                it += 1
                left -= 1
                _perturb(s, perturb, rng)
                updated = list(range(s.p))
                continue
            updated = s.apply(op, i, j)
            bar.update(s.total())
            if it >= limit:
                break
            it += 1
    finally:
        bar.close()
    return s.dag()


def _climb(s: _Search, updated: list[int], limit: float, bar: _Bar) -> None:
    """Take the best improving operation until none improves (or ``limit`` operations),
    the score changes left up to date with the network."""
    empty = np.zeros((1, s.p, s.p), dtype=np.int8)
    done = 0
    while True:
        s.fill(updated)
        if done >= limit:
            return
        op, i, j = s.step(empty, 0, 0.0)
        if op == 0:
            return
        updated = s.apply(op, i, j)
        bar.update(s.total())
        done += 1


def _bhd_search(s: _Search, data: pd.DataFrame, hyper: dict[str, Any], whitelist: Any, blacklist: Any,
                maxp: int | None, max_iter: int | None, limit: float, rng: np.random.Generator, bar: _Bar) -> None:
    """The BHD score's default search (:func:`hc`'s Notes), leaving ``s`` at the network
    it returns: the plain climb from the empty graph, the climb from the pooled rows'
    BDeu network and its iterated local search, the higher-scoring of the two."""
    _climb(s, list(range(s.p)), limit, bar)
    plain, plain_score = s.am.copy(), s.total()
    domain = str(hyper["domain"])
    pooled = data.drop(columns=[c for c in data.columns if str(c) == domain])
    bdeu = hc(pooled, "bde", whitelist=whitelist, blacklist=blacklist, maxp=maxp, restart=0, max_iter=max_iter,
              progress=False, iss=1.0)
    am, _, _, _ = _constraints(s.nodes, whitelist, blacklist, bdeu, maxp)
    s.set_state(am)
    _climb(s, list(range(s.p)), limit, bar)
    best = (s.am.copy(), s.ref.copy(), s.delta.copy(), s.total())
    for _ in range(_RUIN_RESTARTS):
        _climb(s, _ruin(s, rng), limit, bar)
        if s.total() > best[3]:
            best = (s.am.copy(), s.ref.copy(), s.delta.copy(), s.total())
        else:
            s.am, s.ref, s.delta = best[0].copy(), best[1].copy(), best[2].copy()
    if plain_score > best[3]:
        s.set_state(plain)


def _ruin(s: _Search, rng: np.random.Generator) -> list[int]:
    """Remove a random :data:`_RUIN_SHARE` of the network's arcs (rounded up; never a
    whitelisted arc), the terms of their heads recomputed: the nodes whose parents
    changed.  A removal keeps the graph acyclic, within ``maxp`` and the blacklist."""
    cand = np.argwhere((s.am == 1) & (s.wl == 0))
    if len(cand) == 0:
        return []
    k = math.ceil(_RUIN_SHARE * len(cand))
    heads: list[int] = []
    for i, j in cand[np.sort(rng.choice(len(cand), size=k, replace=False))]:
        s.am[i, j] = 0
        if int(j) not in heads:
            heads.append(int(j))
    for v in heads:
        s.ref[v] = s.s.family(v, s.parents(v))
    return heads


def _perturb(s: _Search, times: int, rng: np.random.Generator) -> None:
    """``times`` random legal arc operations (bnlearn's ``perturb``, at most ``3 times``
    tries), the terms of the nodes they change recomputed."""
    done = 0
    for _ in range(3 * times):
        if done >= times:
            break
        op = int(rng.integers(1, 4))
        if op == 1:
            cand = np.argwhere(s.added() == 1)
        elif op == 2:
            cand = np.argwhere((s.am == 1) & (s.wl == 0))
        else:
            np_ = s.am.sum(axis=0)
            cand = np.array([(i, j) for i, j in np.argwhere(s.am == 1) if not s.bl[j, i] and np_[i] < s.maxp])
        if len(cand) == 0:
            continue
        i, j = (int(x) for x in cand[rng.integers(len(cand))])
        stack = np.empty(s.p, dtype=np.int64)
        seen = np.empty(s.p, dtype=np.int64)
        if s.s.twins:
            cycle = (op == 1 and has_path_numpy(s.am, j, i, False)) or (op == 3 and has_path_numpy(s.am, i, j, True))
        else:
            cycle = (op == 1 and has_path(s.am, j, i, False, stack, seen)) or (op == 3 and has_path(s.am, i, j, True,
                                                                                                  stack, seen))
        if cycle:
            continue
        s.apply(op, i, j)
        done += 1


def tabu(data: pd.DataFrame, score: str = "bic", *, whitelist: Any = None, blacklist: Any = None,
         start: Any = None, tabu: int = 10, max_tabu: int | None = None, maxp: int | None = None,
         max_iter: int | None = None, progress: bool | None = None, **hyperparameters: Any) -> DAG:
    """Tabu search over DAGs, as bnlearn's ``tabu()``.

    Each step takes the best operation that does not give one of the last ``tabu``
    networks visited, improving or not; after ``max_tabu`` steps (default ``tabu``)
    without a better network than the best so far the search stops and returns the
    best.  The other parameters are :func:`pybncsmooth.hc`'s.  (bnlearn 4.9.4 reads
    ``max.tabu`` but stops after ``tabu`` such steps; with the default the two agree.)

    Examples
    --------
    >>> import pybncsmooth as bs
    >>> df = bs.load_dataset("asia")
    >>> bs.tabu(df, score="bde", iss=1).modelstring()
    '[A][S][T][L|S][B|S][E|T:L][X|E][D|B:E]'
    """
    size = check_int("tabu", tabu, low=1)
    max_loss = size if max_tabu is None else check_int("max_tabu", max_tabu, low=1)
    limit = _max_iter(max_iter)
    s = _setup(data, score, whitelist, blacklist, start, maxp, hyperparameters)
    bar = _Bar(progress, "tabu")
    tabu_list = np.zeros((size, s.p, s.p), dtype=np.int8)
    filled = 0
    updated: list[int] = list(range(s.p))
    best_am, best_score = s.am.copy(), s.total()
    loss = 0
    it = 1
    try:
        while limit > 0:
            if s.total() - best_score > 0:
                best_am, best_score = s.am.copy(), s.total()
            tabu_list[(it - 1) % size] = s.am
            filled = min(filled + 1, size)
            s.fill(updated)
            op, i, j = s.step(tabu_list, filled, 0.0)
            if op == 0:
                if loss >= max_loss:
                    s.set_state(best_am)
                    break
                loss += 1
                op, i, j = s.step(tabu_list, filled, -math.inf)
                if op == 0:
                    if loss > 0:
                        s.set_state(best_am)
                    break
                updated = s.apply(op, i, j)
            else:
                updated = s.apply(op, i, j)
                if s.total() - best_score > 0:
                    loss = 0
            bar.update(s.total())
            if it >= limit:
                if loss > 0:
                    s.set_state(best_am)
                break
            it += 1
    finally:
        bar.close()
    return s.dag()

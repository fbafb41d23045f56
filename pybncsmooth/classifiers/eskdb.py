"""Ensembles of selective kDB classifiers (ESKDB; Zhang 2020, Ch. 4, Algorithm 9).

Each member is a selective kDB classifier (:func:`~pybncsmooth.classifiers.skdb.learn_skdb`)
learned on the same data with two sources of randomness (Sec. 4.2.2-4.2.3), each of
which can be switched off for an ablation:

* **attribute order**: the order in which attributes enter (and may become parents) is
  sampled without replacement with probabilities proportional to the mutual
  information :math:`I(X_i; C)`, renormalised after each draw (Algorithm 12), instead
  of sorting by it;
* **parent order**: each attribute's parents are the first ``k`` of its earlier
  attributes sampled with probabilities proportional to :math:`I(X_i; X_j \\mid C)`,
  instead of the ``k`` of highest CMI.

The selection of each member (the number of parents ``k' <= k`` and the attribute
prefix, by incremental leave-one-out cross-validation) then runs on its own order, and
its CPTs are estimated by any estimator.  The ensemble's class probabilities are the
average of the members' (Algorithm 15), each member's posterior first raised to one
exponent :math:`\\beta \\le 1` chosen by the ensemble's leave-one-out log loss
(:mod:`~pybncsmooth.classifiers._tempering`; ``tempering=False``: the plain average).
MI and CMI are computed once for all members, and a node's context tree with the same
ordered parents is counted once for all; members are learned in parallel threads, each
from its own random stream spawned from ``random_state``, so the ensemble does not
depend on the number of threads.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..data.discretize import MDLDiscretizer
from ..data.encode import encode
from ..data.weights import chunk_weights
from ..data.sources import DataSource, as_source
from ..estimators.base import Estimator
from ..model.network import FittedNetwork
from ..pipeline import assemble_network, check_counted_weight, fit_network
from ..structure.dag import DAG
from ..options import Options
from ..structure.learning import sample_order, source_statistics
from ..validation import entropy_of, parallel_map
from ._tempering import loo_posteriors, best_exponent, ensemble_losses, tempering_exponent
from .builders import class_prior_network, member_trees, resolved_k, selection_info
from .skdb import learn_skdb_members

__all__ = [
    "Member",
    "fit_eskdb",
    "member_seeds",
    "member_iterations",
    "member_estimator",
    "member_orders",
]


@dataclass
class Member:
    """One fitted member: its network, structure, the features it leaves out (one
    observed value), its own discretiser (``discretize="mdl"``; else ``None``) and the
    exponent its posterior is raised to in the ensemble (1: none)."""

    network: FittedNetwork
    dag: DAG
    ignored: list[str]
    discretizer: MDLDiscretizer | None = None
    exponent: float = 1.0


def member_seeds(random_state: Any, n_estimators: int) -> list[np.random.SeedSequence]:
    """One independent seed sequence per member, spawned from ``random_state``."""
    entropy = entropy_of(random_state)
    return np.random.SeedSequence(entropy).spawn(n_estimators)


def _estimator_seed(seed: np.random.SeedSequence) -> int:
    """The member's estimator's ``random_state``, from the member's seed."""
    return int(seed.generate_state(1, np.uint64)[0] >> np.uint64(1))


def member_orders(
    seed: np.random.SeedSequence,
    features: Sequence[str],
    mi: dict[str, float],
    order_sampling: bool,
    parent_sampling: bool,
) -> tuple[list[str] | None, np.random.Generator | None]:
    """One member's two stochasticities from its seed: its attribute order, sampled in
    proportion to the MI with the class (``None``: by decreasing MI), and the random
    stream its parent orders are drawn from (``None``: the ``k`` of highest CMI)."""
    g = np.random.default_rng(seed)
    order = None
    if order_sampling:
        order = [features[i] for i in sample_order(np.array([mi[f] for f in features]), g)]
    return order, (g if parent_sampling else None)


def _learn_members(
    source: DataSource, target: str, features: list[str], seeds: list, estimator: Estimator, options: Options,
    loo_rows: list | None = None,
) -> list[Member]:
    """The members of ``seeds`` learned together on one data source in three passes
    shared by all (statistics, the union of their full-kDB trees, all their
    leave-one-out losses), each then estimated from the counts its selection made;
    with ``options.tempering`` a fourth pass finds their exponent
    (:func:`~pybncsmooth.classifiers._tempering.tempering_exponent`).  ``loo_rows``
    (a data frame source of one chunk): the exponent is left to the caller, and
    ``(positions of the rows used, leave-one-out posteriors, classes, weights)`` of the
    first member is appended to it instead."""
    k_max = resolved_k(options, len(features))
    stats = source_statistics(source, target, features, options, pairs=k_max > 0)
    ignored = stats.single_level_features()
    used = [f for f in features if f not in ignored]
    est = member_estimator(estimator, stats.schema.cardinality(target), options)
    if not used:  # no feature informs the class: every member is the class prior
        net, dag = class_prior_network(source, target, ignored, est, options, stacklevel=6)
        return [Member(net, dag, ignored) for _ in seeds]
    mi = stats.mi(used)
    orders = [member_orders(seed, used, mi, options.order_sampling, options.parent_sampling) for seed in seeds]
    tables: dict = {}  # the trees' flat tables, made by the selection's pass, read again by the tempering's
    selected = learn_skdb_members(
        source, target, min(k_max, len(used)), orders, options, features=used, m=options.skdb_m,
        loss=member_selection_loss(estimator.name, options.skdb_loss), return_info=True, stats=stats,
        n_jobs=options.n_jobs, tables=tables,
    )
    exponent = 1.0
    if options.tempering and loo_rows is not None:
        loo_rows.append(_frame_posteriors(source, target, used, selected[0], options))
    elif options.tempering:
        exponent = tempering_exponent(source, target, used, selected, options, tables=tables)
    tables.clear()
    if options.domain is not None:  # each member's CPTs per domain: its structure counted again with the domain

        def fit_domain(i: int) -> Member:
            dag, _ = selected[i]
            rs = _estimator_seed(seeds[i])
            net = fit_network(dag, source, est.with_settings(random_state=rs), options.replace(random_state=rs))
            net.info["selection"] = selection_info(selected[i][1])
            return Member(net, dag, ignored, exponent=exponent)

        return parallel_map(fit_domain, range(len(seeds)), options.n_jobs)
    members = _estimate_members(selected, seeds, est, stats.n_rows + stats.n_dropped, ignored, options)
    for mem in members:
        mem.exponent = exponent
    return members


def _frame_posteriors(source: DataSource, target: str, used: list[str], member: tuple, options: Options) -> tuple:
    """A member's leave-one-out posteriors on the rows of a data frame (a source of one
    chunk), with the positions of the rows its selection used, their classes and weights."""
    frame = next(iter(source.chunks())).reset_index(drop=True)  # the index: the rows' positions
    variables = [target, *used]
    enc = encode(frame, member[1].extra["schema"], variables=variables, empty_ok=True,
                 **options.missing.encode_args())
    y = enc[target].astype(np.int64)
    w = chunk_weights(frame, options.weights, variables, options.missing.counting) if options.weights else None
    wt = np.ones(len(y)) if w is None else np.asarray(w, dtype=np.float64)
    post = loo_posteriors(enc, y, target, member[0], member[1], float(options.skdb_m), np.minimum(wt, 1.0))
    return np.asarray(enc.index, dtype=np.int64), post, y, wt


def _distinct_trees(selected: list) -> tuple[list[dict], list[dict], dict]:
    """Every member's trees, each member's key of each node's tree, and the distinct
    trees by key (the same full tree cut at the same depth), each with a name of its own
    (the streams of stochastic estimators)."""
    member_sets = [member_trees(dag, info) for dag, info in selected]
    keys: list[dict[str, tuple]] = []
    distinct: dict[tuple, tuple[str, Any]] = {}
    for (dag, info), trees in zip(selected, member_sets):
        full = info.extra["trees"]
        own = {n: (id(full[n]), len(dag.parents(n))) for n in dag.nodes}
        for n, key in own.items():
            if key not in distinct:
                distinct[key] = ("|".join((n, *dag.parents(n))), trees[n])
        keys.append(own)
    return member_sets, keys, distinct


def _estimate_members(
    selected: list, seeds: list, estimator: Estimator, n_total: int, ignored: list[str], options: Options,
) -> list[Member]:
    """Every member's network from the trees its selection kept.  A context tree two
    members have in common (the same node, ordered parents and counts: the same full
    tree cut at the same depth) is estimated once, all distinct trees in one call of
    the estimator (in ``options.n_jobs`` threads across trees), from a stream of its own
    spawned beside the members' (``random_state``): ten kDB-5 members repeat 2-16% of
    their trees on the UCI sets of vignette 06."""
    member_sets, keys, distinct = _distinct_trees(selected)
    rs = _estimator_seed(np.random.SeedSequence(seeds[0].entropy, spawn_key=(len(seeds),)))
    est = estimator.with_settings(random_state=rs, n_jobs=options.n_jobs)
    check_counted_weight({name: tree for name, tree in distinct.values()}, options.weights)
    by_name = est.estimate_all({name: tree for name, tree in distinct.values()})
    estimates = {key: by_name[name] for key, (name, _) in distinct.items()}
    member_options = options.replace(random_state=rs)

    def assemble(i: int) -> Member:
        dag, info = selected[i]
        n_used = info.extra["n_rows"]
        run = {"n_rows": n_used, "n_dropped": n_total - n_used, "na": options.missing.name, "random_state": rs}
        schema = info.extra["schema"].subset(dag.nodes)
        mine = {n: estimates[key] for n, key in keys[i].items()}
        run["selection"] = selection_info(info)
        return Member(assemble_network(dag, schema, member_sets[i], mine, est, member_options, info=run), dag,
                      ignored)

    return [assemble(i) for i in range(len(selected))]


def _mdl_member(frame: pd.DataFrame, target: str, features: list[str], seed: Any, estimator: Estimator,
                options: Options) -> tuple[Member, tuple | None]:
    """A member with cut points of its own (``discretize="mdl"``, Zhang 2020, Sec. 4.2.1):
    MDL with random tie-breaking from the member's seed, then the member on its codes;
    with its leave-one-out posteriors on the rows (``None``: a member with no feature,
    or no tempering)."""
    disc = MDLDiscretizer(random_state=np.random.default_rng([int(seed.generate_state(1)[0]), 1]))
    sw = frame[options.weights].to_numpy() if options.weights is not None else None
    fr = disc.fit(frame[features], frame[target].to_numpy(), sample_weight=sw).transform(frame[features])
    fr[target] = frame[target]
    for extra in (options.weights, options.domain):
        if extra is not None:
            fr[extra] = frame[extra]
    rows: list = []
    member = _learn_members(as_source(fr), target, features, [seed], estimator, options, loo_rows=rows)[0]
    member.discretizer = disc
    return member, (rows[0] if rows else None)


def _mdl_exponent(found: list) -> float:
    """The ensemble's exponent from its MDL members' leave-one-out posteriors, on the
    rows every member used (a member with no feature is left out: its posterior is
    the class prior whatever the exponent)."""
    found = [f for f in found if f is not None]
    if not found:
        return 1.0
    common = functools.reduce(np.intersect1d, [f[0] for f in found])
    posts = []
    for pos, post, _, _ in found:
        posts.append(post[np.searchsorted(pos, common)] if not np.array_equal(pos, common) else post)
    pos, _, y, wt = found[0]
    at = np.searchsorted(pos, common)
    return best_exponent(ensemble_losses(posts, y[at], wt[at]))


def fit_eskdb(
    data: Any, target: str, features: list[str], estimator: Estimator, options: Options, *, member_mdl: bool = False
) -> list[Member]:
    """The members of an ESKDB ensemble (Zhang 2020, Ch. 4, Algorithm 9) on ``data`` (a
    data frame or any data source), ``options.n_estimators`` of them (default 10), each
    from its own seed spawned from ``options.random_state``: the ensemble does not
    depend on the number of threads (``options.n_jobs``) nor on how the data are cut
    into chunks.  ``member_mdl`` (a data frame only): each member discretises the
    numeric features with MDL cut points of its own."""
    n_est = options.n_estimators or 10
    resolved_k(options, len(features))
    seeds = member_seeds(options.random_state, n_est)
    if not member_mdl:
        source = as_source(data, chunksize=options.chunksize)
        source.require_passes(3 + options.tempering + (n_est if options.domain is not None else 0), "ESKDB")
        return _learn_members(source, target, features, seeds, estimator, options)
    inner = options.replace(n_jobs=1)
    out = parallel_map(lambda seed: _mdl_member(data, target, features, seed, estimator, inner), seeds,
                       options.n_jobs)
    members = [m for m, _ in out]
    if options.tempering:
        exponent = _mdl_exponent([rows for _, rows in out])
        for m in members:
            m.exponent = exponent
    return members


#: Zhang (2020), Table 4: a classifier's HDP runs 1000 Gibbs sweeps and its m-estimates
#: take m = 1 / (number of classes)
THESIS_HDP_ITERATIONS = 1000
#: the fewest sweeps a member's HDP runs (burn-in 10): measured enough to leave the
#: sampler's starting state on the ten UCI sets of vignette 06
MIN_MEMBER_ITERATIONS = 100


def member_iterations(n_estimators: int) -> int:
    r"""Gibbs sweeps of each member's HDP when the user sets none: the thesis's 1000
    sweeps of one classifier shared out over the members, at least 100.

    The ensemble's class probabilities are the mean of its members', so the
    Monte-Carlo error that reaches them is that of the mean: with ``M`` members whose
    chains record ``R`` sweeps each (burn-in 10%), its variance is about
    :math:`\bar\sigma^2 \tau / (M R)` (:math:`\bar\sigma^2 \tau`: a member's
    posterior variance times its integrated autocorrelation time), that of one chain
    recording ``M R`` sweeps.  ``M`` members of ``1000 / M`` sweeps therefore carry the
    Monte-Carlo error of one classifier at the thesis's 1000; only the burn-in is not
    averaged away, hence the floor.  Ten members: 100 sweeps each (vignette 06 shows
    that RMSE and log loss do not move against 1000)."""
    return max(MIN_MEMBER_ITERATIONS, -(-THESIS_HDP_ITERATIONS // max(int(n_estimators), 1)))


def member_selection_loss(method: Any, loss: str | None) -> str:
    """The leave-one-out loss a member's selective kDB minimises: the user's, else RMSE
    (the thesis's), but log loss for HGS members: over the ten UCI sets (5 x 2 CV) it
    takes ESKDB-HGS from 7 to 8 log-loss wins against the random forest (breast cancer:
    0.223 to 0.111, the forest 0.141) and keeps 9 RMSE wins, at a lower fit time
    (``benchmarks/bench_hgs.py --eskdb``)."""
    if loss is not None:
        return loss
    return "log_loss" if method == "hgs" else "rmse"


def member_estimator(estimator: Estimator, n_classes: int | None, options: Options) -> Estimator:
    """One member's estimator: ``estimator`` with the ensemble's defaults where its
    hyperparameters were not given: ``hdp`` runs :func:`member_iterations` sweeps (100
    for ten members), ``mestimate`` takes ``m = 1 / n_classes`` (Zhang 2020, Table 4);
    one thread (the ensemble's threads, ``options.n_jobs``, are the members')."""
    changes: dict[str, Any] = {"n_jobs": 1}
    if estimator.name == "hdp" and "iterations" not in estimator.given:
        changes["iterations"] = member_iterations(options.n_estimators or 10)
    if estimator.name == "mestimate" and "m" not in estimator.given and n_classes:
        changes["m"] = 1.0 / n_classes
    return estimator.with_settings(**changes)

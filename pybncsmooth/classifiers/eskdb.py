"""Ensembles of selective kDB classifiers (ESKDB; thesis 002, Ch. 4, Algorithm 9).

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
average of the members' (Algorithm 15).  MI and CMI are computed once for all members,
and a node's context tree with the same ordered parents is counted once for all;
members are learned in parallel threads, each from its own random stream spawned from
``random_state``, so the ensemble does not depend on the number of threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..data.discretize import MDLDiscretizer
from ..data.sources import DataSource, as_source
from ..estimators.base import Estimator, make_estimator
from ..model.network import FittedNetwork
from ..pipeline import assemble_network, fit_network
from ..structure.dag import DAG
from ..structure.learning import check_k, sample_order, source_statistics
from ..validation import check_int, entropy_of, parallel_map
from .builders import class_prior_network, counting_na, member_trees
from .skdb import learn_skdb_members

__all__ = [
    "EskdbOptions",
    "Member",
    "fit_eskdb",
    "check_n_estimators",
    "member_seeds",
    "member_iterations",
    "member_method",
    "member_orders",
]


@dataclass
class Member:
    """One fitted member: its network, structure, the features it leaves out (one
    observed value) and its own discretiser (``discretize="mdl"``; else ``None``)."""

    network: FittedNetwork
    dag: DAG
    ignored: list[str]
    discretizer: MDLDiscretizer | None = None


@dataclass
class EskdbOptions:
    """The settings of an ensemble (see :class:`~pybncsmooth.BNClassifier`)."""

    n_estimators: int = 10
    k: int = 5
    method: str = "hdp"
    na: str = "level"
    random_state: Any = None
    order_sampling: bool = True
    parent_sampling: bool = True
    skdb_m: float = 1.0
    skdb_loss: str | None = None  # None: the members' default (member_selection_loss)
    n_jobs: int | None = None
    hyper: dict[str, Any] | None = None
    domain: str | None = None
    weights: str | None = None


def check_n_estimators(n_estimators: Any) -> int:
    """``n_estimators`` must be an integer >= 1."""
    return check_int("n_estimators", n_estimators, low=1)  # type: ignore[return-value]


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
    source: DataSource, target: str, features: list[str], seeds: list, opts: EskdbOptions
) -> list[Member]:
    """The members of ``seeds`` learned together on one data source in three passes
    shared by all (statistics, the union of their full-kDB trees, all their
    leave-one-out losses), each then estimated from the counts its selection made."""
    k_max = check_k(opts.k, len(features))
    stats = source_statistics(source, target, features, na=opts.na, pairs=k_max > 0, weights=opts.weights)
    ignored = stats.single_level_features()
    used = [f for f in features if f not in ignored]
    method, hyper = member_method(opts.method, opts.hyper or {}, stats.schema.cardinality(target), opts.n_estimators)
    if not used:  # no feature informs the class: every member is the class prior
        net, dag = class_prior_network(source, target, ignored, method=method, na=opts.na, stacklevel=6, **hyper)
        if opts.domain is not None or opts.weights is not None:
            net = fit_network(dag, source, method, domain=opts.domain, na=counting_na(opts.na), weights=opts.weights,
                              **hyper)
        return [Member(net, dag, ignored) for _ in seeds]
    mi = stats.mi(used)
    orders = [member_orders(seed, used, mi, opts.order_sampling, opts.parent_sampling) for seed in seeds]
    selected = learn_skdb_members(
        source,
        target,
        min(k_max, len(used)),
        orders,
        features=used,
        na=opts.na,
        m=opts.skdb_m,
        loss=member_selection_loss(opts.method, opts.skdb_loss),
        return_info=True,
        stats=stats,
        n_jobs=opts.n_jobs,
        weights=opts.weights,
    )
    n_total = stats.n_rows + stats.n_dropped
    if opts.domain is not None:  # each member's CPTs per domain: its structure counted again with the domain

        def fit_domain(i: int) -> Member:
            dag, info = selected[i]
            rs = _estimator_seed(seeds[i])
            est = make_estimator(method, random_state=rs, **hyper)
            net = fit_network(dag, source, est, domain=opts.domain, na=counting_na(opts.na), random_state=rs,
                              weights=opts.weights)
            return Member(net, dag, ignored)

        return parallel_map(fit_domain, range(len(seeds)), opts.n_jobs)
    return _estimate_members(selected, seeds, method, hyper, n_total, ignored, opts)


def _estimate_members(
    selected: list, seeds: list, method: Any, hyper: dict[str, Any], n_total: int, ignored: list[str],
    opts: EskdbOptions,
) -> list[Member]:
    """Every member's network from the trees its selection kept.  A context tree two
    members have in common (the same node, ordered parents and counts: the same full
    tree cut at the same depth) is estimated once, all distinct trees in one call of
    the estimator (its threads across trees, ``n_jobs``), from a stream of its own
    spawned beside the members' (``random_state``): ten kDB-5 members repeat 2-16% of
    their trees on the UCI sets of vignette 06."""
    member_sets = [member_trees(dag, info) for dag, info in selected]
    keys: list[dict[str, tuple]] = []
    distinct: dict[tuple, tuple[str, Any]] = {}
    for (dag, info), trees in zip(selected, member_sets):
        full = info.extra["trees"]
        own = {n: (id(full[n]), len(dag.parents(n))) for n in dag.nodes}
        for n, key in own.items():
            if key not in distinct:  # a name per tree: the streams of stochastic estimators
                distinct[key] = ("|".join((n, *dag.parents(n))), trees[n])
        keys.append(own)
    rs = _estimator_seed(np.random.SeedSequence(seeds[0].entropy, spawn_key=(len(seeds),)))
    # member_method gave an estimator with threads of its own one (the members' threads);
    # here the ensemble's threads go to it, across the trees
    threads = {"n_jobs": opts.n_jobs} if "n_jobs" in hyper else {}
    est = make_estimator(method, random_state=rs, **{**hyper, **threads})
    by_name = est.estimate_all({name: tree for name, tree in distinct.values()})
    estimates = {key: by_name[name] for key, (name, _) in distinct.items()}

    def assemble(i: int) -> Member:
        dag, info = selected[i]
        n_used = info.extra["n_rows"]
        run = {"n_rows": n_used, "n_dropped": n_total - n_used, "na": counting_na(opts.na), "random_state": rs}
        schema = info.extra["schema"].subset(dag.nodes)
        mine = {n: estimates[key] for n, key in keys[i].items()}
        return Member(assemble_network(dag, schema, member_sets[i], mine, est, info=run), dag, ignored)

    return [assemble(i) for i in range(len(selected))]


def _mdl_member(frame: pd.DataFrame, target: str, features: list[str], seed: Any, opts: EskdbOptions) -> Member:
    """A member with cut points of its own (``discretize="mdl"``, thesis 002 Sec. 4.2.1):
    MDL with random tie-breaking from the member's seed, then the member on its codes."""
    disc = MDLDiscretizer(random_state=np.random.default_rng([int(seed.generate_state(1)[0]), 1]))
    sw = frame[opts.weights].to_numpy() if opts.weights is not None else None
    fr = disc.fit(frame[features], frame[target].to_numpy(), sample_weight=sw).transform(frame[features])
    fr[target] = frame[target]
    if opts.weights is not None:
        fr[opts.weights] = frame[opts.weights]
    if opts.domain is not None:
        fr[opts.domain] = frame[opts.domain]
    member = _learn_members(as_source(fr), target, features, [seed], opts)[0]
    member.discretizer = disc
    return member


def fit_eskdb(
    data: Any, target: str, features: list[str], opts: EskdbOptions, *, member_mdl: bool = False
) -> list[Member]:
    """The members of an ESKDB ensemble (thesis 002, Ch. 4, Algorithm 9) on ``data`` (a
    data frame or any data source), each from its own seed spawned from
    ``opts.random_state``: the ensemble does not depend on the number of threads nor
    on how the data are cut into chunks.  ``member_mdl`` (a data frame only): each
    member discretises the numeric features with MDL cut points of its own."""
    n_est = check_n_estimators(opts.n_estimators)
    check_k(opts.k, len(features))
    seeds = member_seeds(opts.random_state, n_est)
    if not member_mdl:
        source = as_source(data)
        source.require_passes(3 + (n_est if opts.domain is not None else 0), "ESKDB")
        return _learn_members(source, target, features, seeds, opts)
    inner = EskdbOptions(**{**opts.__dict__, "n_jobs": 1})
    return parallel_map(lambda seed: _mdl_member(data, target, features, seed, inner), seeds, opts.n_jobs)


#: thesis 002, Table 4: a classifier's HDP runs 1000 Gibbs sweeps and its m-estimates
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


def member_method(
    method: str | Estimator, hyper: dict[str, Any], n_classes: int | None = None, n_estimators: int = 1
) -> tuple[str | Estimator, dict[str, Any]]:
    """The estimator settings of one member where the user set none: ``hdp`` runs
    :func:`member_iterations` sweeps (100 for ten members), ``mestimate`` takes
    ``m = 1 / n_classes`` (thesis 002, Table 4); an estimator that runs threads of its
    own (``n_jobs``) gets one, the ensemble's threads being the members."""
    hyper = dict(hyper)
    if method == "hdp" and "iterations" not in hyper:
        hyper["iterations"] = member_iterations(n_estimators)
    if method == "mestimate" and "m" not in hyper and n_classes:
        hyper["m"] = 1.0 / n_classes
    hyper["n_jobs"] = 1
    return method, hyper

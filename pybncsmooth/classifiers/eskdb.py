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

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..errors import HyperparameterError
from ..estimators._mcmc import entropy_of
from ..estimators.base import _REGISTRY, Estimator
from ..structure.dag import DAG
from ..structure.learning import _cmi_matrix, _mi, check_k, encode_for_structure, sample_order
from .skdb import learn_skdb

__all__ = [
    "learn_eskdb_structures",
    "check_n_estimators",
    "member_seeds",
    "member_method",
    "member_trees",
    "member_orders",
]


def member_trees(dag: DAG, info: Any) -> dict:
    """A member's context trees from its full kDB's counts (no recount): each node's
    tree truncated to the member's parents (a prefix of the full kDB's)."""
    full = info.extra["trees"]
    return {n: full[n].truncate(len(dag.parents(n))) for n in dag.nodes}


def check_n_estimators(n_estimators: Any) -> int:
    """``n_estimators`` must be an integer >= 1."""
    if isinstance(n_estimators, bool) or not isinstance(n_estimators, (int, np.integer)) or n_estimators < 1:
        raise HyperparameterError(f"n_estimators must be an integer >= 1, not {n_estimators!r}")
    return int(n_estimators)


def member_seeds(random_state: Any, n_estimators: int) -> list[np.random.SeedSequence]:
    """One independent seed sequence per member, spawned from ``random_state``."""
    entropy = entropy_of(random_state)
    return np.random.SeedSequence(entropy).spawn(n_estimators)


def member_orders(
    seed: np.random.SeedSequence,
    features: Sequence[str],
    mi: dict[str, float],
    order_sampling: bool,
    parent_sampling: bool,
) -> tuple[list[str] | None, np.random.Generator | None]:
    """One member's two stochasticities from its seed: its attribute order, sampled in
    proportion to the MI with the class (``None``: by decreasing MI), and the random
    stream its parent orders are drawn from (``None``: the ``k`` of highest CMI).  The
    same for data in memory and read in chunks, so both give the same ensemble."""
    g = np.random.default_rng(seed)
    order = None
    if order_sampling:
        order = [features[i] for i in sample_order(np.array([mi[f] for f in features]), g)]
    return order, (g if parent_sampling else None)


def learn_eskdb_structures(
    data: pd.DataFrame,
    target: str,
    n_estimators: int,
    k: int,
    *,
    features: Sequence[str] | None = None,
    na: str = "level",
    m: float = 1.0,
    loss: str = "rmse",
    order_sampling: bool = True,
    parent_sampling: bool = True,
    seeds: Sequence[np.random.SeedSequence],
    n_jobs: int | None = None,
    return_info: bool = False,
) -> list[DAG] | list[tuple[DAG, Any]]:
    """The structures of the ``n_estimators`` members (see the module docstring); with
    ``return_info``, ``(dag, StructureInfo)`` pairs whose ``extra["trees"]`` hold the
    counts of each member's full kDB (its selected trees are their first levels)."""
    n_estimators = check_n_estimators(n_estimators)
    enc, feats = encode_for_structure(data, target, features, na)
    k = check_k(k, len(feats))
    mi = _mi(enc, target, feats)
    cmi = _cmi_matrix(enc, target, feats) if k > 0 else None
    cache: dict = {}  # trees of the same node with the same ordered parents, counted once

    def one(seed: np.random.SeedSequence) -> Any:
        order, g = member_orders(seed, feats, mi, order_sampling, parent_sampling)
        return learn_skdb(
            data,
            target,
            k,
            features=feats,
            na=na,
            m=m,
            loss=loss,
            order=order,
            parent_rng=g,
            mi=mi,
            cmi=cmi,
            encoded=(enc, feats),
            return_info=return_info,
            tree_cache=cache,
        )

    workers = min(n_jobs or os.cpu_count() or 1, n_estimators)
    if workers <= 1:
        return [one(s) for s in seeds]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, seeds))


#: thesis 002, Table 4: the members' HDP runs 1000 Gibbs sweeps (burn-in 100, our
#: default for 1000 sweeps) and their m-estimates take m = 1 / (number of classes)
THESIS_HDP_ITERATIONS = 1000


def member_method(
    method: str | Estimator, hyper: dict[str, Any], n_classes: int | None = None
) -> tuple[str | Estimator, dict[str, Any]]:
    """The estimator settings of one member: the thesis's where the user set none
    (``hdp``: 1000 sweeps; ``mestimate``: ``m = 1 / n_classes``; thesis 002, Table 4);
    an estimator that runs threads of its own (``n_jobs``) gets one, the ensemble's
    threads being the members."""
    hyper = dict(hyper)
    if method == "hdp" and "iterations" not in hyper:
        hyper["iterations"] = THESIS_HDP_ITERATIONS
    if method == "mestimate" and "m" not in hyper and n_classes:
        hyper["m"] = 1.0 / n_classes
    hyper.pop("n_jobs", None)
    cls = _REGISTRY.get(method) if isinstance(method, str) else None
    if cls is not None and "n_jobs" in cls.param_names():
        hyper["n_jobs"] = 1
    return method, hyper

"""Classifier structures and their CPTs from any data source: one code path per structure.

A data frame is a data source of one chunk, so naive Bayes, TAN, kDB and selective
kDB are learned the same way from a frame in memory, a CSV/Parquet file read in
chunks, a list of frames or a Dask DataFrame: one pass for the counts the structure
needs (class, feature-class and feature-pair-class counts: MI, CMI, single-valued
features), one to count the CPTs' context trees; selective kDB's third pass scores
its sub-models, and its CPTs come from the trees it counted (no fourth pass).
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

from ..data.sources import DataSource, as_source
from ..errors import HyperparameterError
from ..validation import PAIRWISE_NA_POLICIES
from ..estimators.base import Estimator, make_estimator
from ..model.network import FittedNetwork
from ..pipeline import estimate_network, fit_network
from ..structure.dag import DAG
from ..structure.learning import check_k, source_statistics, structure_from_statistics
from ..structure.statistics import StructureStatistics
from .skdb import learn_skdb_members

__all__ = [
    "STRUCTURES", "build_classifier_network", "member_trees", "counting_na", "structure_na", "class_prior_network",
]

STRUCTURES = ("nb", "tan", "kdb", "skdb", "eskdb")


def counting_na(na: str) -> str:
    """The counts' NA policy for a classifier's ``na``: ``"pairwise"`` learns the
    structure by pairwise deletion and counts each CPT on its observed rows."""
    return "available" if na == "pairwise" else na


def structure_na(na: str) -> str:
    """The structure-learning NA policy for a classifier's ``na``."""
    return "pairwise" if na in PAIRWISE_NA_POLICIES else na


def member_trees(dag: DAG, info: Any) -> dict:
    """A selective kDB's context trees from its full kDB's counts (no recount): each
    node's tree truncated to the selected parents (a prefix of the full kDB's)."""
    full = info.extra["trees"]
    return {n: full[n].truncate(len(dag.parents(n))) for n in dag.nodes}


def check_structure(structure: Any) -> None:
    """One of :data:`STRUCTURES` or a DAG; ESKDB is an ensemble, not one network."""
    if isinstance(structure, DAG):
        return
    if structure == "eskdb":
        raise HyperparameterError(
            "structure='eskdb' is an ensemble of networks, not one network: fit it with BNClassifier(structure='eskdb')"
        )
    if structure not in STRUCTURES:
        raise HyperparameterError(f"structure must be one of {STRUCTURES} or a DAG, not {structure!r}")


def class_prior_network(
    source: DataSource,
    target: str,
    ignored: Sequence[str],
    *,
    method: str | Estimator,
    na: str,
    random_state: Any = None,
    stacklevel: int = 4,
    **hyper: Any,
) -> tuple[FittedNetwork, DAG]:
    """The classifier when no feature informs the class (every feature has one observed
    value, e.g. MDL found no cut point on a small sample): the class prior, as a
    scikit-learn classifier would still fit, with a warning."""
    warnings.warn(
        f"no feature has two values or more besides the class {target!r}"
        + (f" (left out: {', '.join(map(repr, list(ignored)[:5]))})" if ignored else "")
        + ": predictions are the class prior",
        UserWarning,
        stacklevel=stacklevel,
    )
    dag = DAG({target: []}, nodes=[target])
    net = fit_network(dag, source, method, na=counting_na(na), random_state=random_state, **hyper)
    return net, dag


def _selective_kdb(
    source: DataSource,
    stats: StructureStatistics,
    target: str,
    k: int,
    used: list[str],
    *,
    method: str | Estimator,
    na: str,
    random_state: Any,
    skdb_m: float,
    skdb_loss: str,
    progress: bool | None,
    hyper: dict[str, Any],
    weights: str | None = None,
) -> tuple[FittedNetwork, DAG]:
    """Selective kDB's structure (passes 2 and 3) and its CPTs from the counts the
    selection made."""
    dag, info = learn_skdb_members(
        source,
        target,
        k,
        [(None, None)],
        features=used,
        na=na,
        m=skdb_m,
        loss=skdb_loss,
        return_info=True,
        stats=stats,
        progress=progress,
        weights=weights,
    )[0]
    est = make_estimator(method, random_state=random_state, progress=progress, **hyper)
    run = {"n_rows": info.extra["n_rows"], "n_dropped": stats.n_dropped, "na": counting_na(na)}
    net = estimate_network(dag, info.extra["schema"].subset(dag.nodes), member_trees(dag, info), est, info=run)
    return net, dag


def build_classifier_network(
    data: Any,
    target: str,
    *,
    structure: str | DAG = "tan",
    k: int | None = 1,
    method: str | Estimator = "bayes",
    na: str = "level",
    root: str | None = None,
    random_state: Any = None,
    features: list[str] | None = None,
    skdb_m: float = 1.0,
    skdb_loss: str = "rmse",
    progress: bool | None = None,
    chunksize: int | None = None,
    domain: str | None = None,
    weights: str | None = None,
    **hyper: Any,
) -> tuple[FittedNetwork, DAG, list[str]]:
    """Learn a classifier structure on ``data`` (a data frame or any data source) and
    fit its parameters.

    With ``domain`` (a column of ``data``, not a feature) the structure is learned on
    the pooled rows and the CPTs are fitted per domain (:func:`fit_network` with
    ``domain=``; selective kDB's CPTs are then counted again with the domain).
    ``weights`` names a column of row weights: the structure's statistics, selective
    kDB's leave-one-out losses and the CPTs count sums of weights.

    Returns ``(network, dag, ignored)``: features with a single observed level carry
    no information about the class and are left out (``ignored``).  With ``k`` larger
    than the features left, kDB and selective kDB take every earlier feature (``k``
    is checked against the features the caller gave, then clipped).
    """
    check_structure(structure)
    source = as_source(data, chunksize=chunksize)
    if (domain is not None or weights is not None) and features is None:
        features = [c for c in source.columns() or [] if c not in (target, domain, weights)]
    if isinstance(structure, DAG):
        net = fit_network(
            structure, source, method, domain=domain, na=counting_na(na), random_state=random_state,
            progress=progress, weights=weights, **hyper,
        )
        return net, structure, []
    source.require_passes(3 if structure == "skdb" else 2, f"learning a {structure} classifier")
    if structure in ("kdb", "skdb") and k is not None and features is not None:
        k = check_k(k, len(features))
    pairs = structure == "tan" or (structure in ("kdb", "skdb") and (k or 0) > 0)
    stats = source_statistics(
        source, target, features, na=structure_na(na), pairs=pairs, progress=progress, weights=weights
    )
    features = list(stats.features)
    if structure in ("kdb", "skdb") and k is not None:
        k = check_k(k, len(features))
    ignored = stats.single_level_features()
    used = [f for f in features if f not in ignored]
    if not used:
        net, dag = class_prior_network(
            source, target, ignored, method=method, na=na, random_state=random_state, **hyper
        )
        if domain is not None or weights is not None:
            net = fit_network(dag, source, method, domain=domain, na=counting_na(na), random_state=random_state,
                              weights=weights, **hyper)
        return net, dag, ignored
    if structure in ("kdb", "skdb") and k is not None:
        k = min(k, len(used))
    if structure == "skdb":
        net, dag = _selective_kdb(
            source,
            stats,
            target,
            k if k is not None else 1,
            used,
            method=method,
            na=na,
            random_state=random_state,
            skdb_m=skdb_m,
            skdb_loss=skdb_loss,
            progress=progress,
            hyper=hyper,
            weights=weights,
        )
        if domain is not None:
            net = fit_network(dag, source, method, domain=domain, na=counting_na(na), random_state=random_state,
                              progress=progress, weights=weights, **hyper)
        return net, dag, ignored
    dag, _ = structure_from_statistics(stats, structure, k, features=used, root=root)
    net = fit_network(
        dag, source, method, domain=domain, na=counting_na(na), random_state=random_state, progress=progress,
        weights=weights, **hyper,
    )
    return net, dag, ignored

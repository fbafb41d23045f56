"""Classifier structures and their CPTs from any data source: one code path per structure.

A data frame is a data source of one chunk, so naive Bayes, TAN, kDB and selective
kDB are learned the same way from a frame in memory, a CSV/Parquet file read in
chunks, a list of frames or a Dask DataFrame: one pass for the counts the structure
needs (class, feature-class and feature-pair-class counts: MI, CMI, single-valued
features), one to count the CPTs' context trees; selective kDB's third pass scores
its sub-models, and its CPTs come from the trees it counted (no fourth pass).

Every function takes the fit's :class:`~pybncsmooth.options.Options` whole (the
structure, ``k``, ``root``, the missing values' policy, the domain, the weights
column, ...) and the estimator built where the options were.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

from ..data.sources import DataSource
from ..errors import HyperparameterError
from ..estimators.base import Estimator
from ..model.network import FittedNetwork
from ..options import STRUCTURES, Options
from ..pipeline import estimate_network, fit_network
from ..structure.dag import DAG
from ..structure.learning import check_k, source_statistics, structure_from_statistics
from ..structure.statistics import StructureStatistics
from .skdb import learn_skdb_members

__all__ = [
    "STRUCTURES", "build_classifier_network", "member_trees", "class_prior_network", "resolved_k", "selection_info",
]


def member_trees(dag: DAG, info: Any) -> dict:
    """A selective kDB's context trees from its full kDB's counts (no recount): each
    node's tree truncated to the selected parents (a prefix of the full kDB's)."""
    full = info.extra["trees"]
    return {n: full[n].truncate(len(dag.parents(n))) for n in dag.nodes}


def resolved_k(options: Options, n_features: int) -> int:
    """``options.k`` checked against the features the caller gave, or the structure's
    default: 5 for ESKDB (Zhang 2020, Table 4), at most the number of features; 1
    otherwise."""
    if options.k is not None:
        return check_k(options.k, n_features)
    return min(5, n_features) if options.structure == "eskdb" else 1


def class_prior_network(
    source: DataSource, target: str, ignored: Sequence[str], estimator: Estimator, options: Options, *,
    stacklevel: int = 4,
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
    return fit_network(dag, source, estimator, options), dag


def _selective_kdb(
    source: DataSource, stats: StructureStatistics, target: str, k: int, used: list[str], estimator: Estimator,
    options: Options,
) -> tuple[FittedNetwork, DAG]:
    """Selective kDB's structure (passes 2 and 3) and its CPTs from the counts the
    selection made (counted again with the domain, for a multi-domain fit)."""
    dag, info = learn_skdb_members(
        source, target, k, [(None, None)], options, features=used, m=options.skdb_m,
        loss=options.skdb_loss or "rmse", return_info=True, stats=stats,
    )[0]
    if options.domain is not None:
        net = fit_network(dag, source, estimator, options)
    else:
        run = {"n_rows": info.extra["n_rows"], "n_dropped": stats.n_dropped, "na": options.missing.name}
        trees = member_trees(dag, info)
        net = estimate_network(dag, info.extra["schema"].subset(dag.nodes), trees, estimator, options, info=run)
    net.info["selection"] = selection_info(info)
    return net, dag


def selection_info(info: Any) -> dict[str, Any]:
    """What a selective kDB keeps of its selection (``FittedNetwork.info["selection"]``):
    the ``k`` and attributes chosen, the loss minimised and its leave-one-out value of
    every sub-model (rows: at most ``k'`` parents; columns: the first ``l`` attributes)."""
    sel = info.extra["selection"]
    return {"k": int(sel.k), "n_attributes": int(sel.n_attributes), "order": list(sel.order),
            "loss_name": sel.loss_name, "loss": sel.loss.tolist()}


def build_classifier_network(
    source: DataSource, target: str, features: list[str], estimator: Estimator, options: Options,
) -> tuple[FittedNetwork, DAG, list[str]]:
    """Learn the classifier structure ``options.structure`` on ``source`` (a data
    source; its weights, if any, the column ``options.weights``) and fit its parameters.

    With ``options.domain`` (a column, not a feature) the structure is learned on the
    pooled rows and the CPTs are fitted per domain.  Returns ``(network, dag, ignored)``:
    features with a single observed level carry no information about the class and are
    left out (``ignored``).  With ``k`` larger than the features left, kDB and selective
    kDB take every earlier feature (``k`` is checked against the features the caller
    gave, then clipped)."""
    structure = options.structure
    if isinstance(structure, DAG):
        return fit_network(structure, source, estimator, options), structure, []
    if structure not in STRUCTURES or structure == "eskdb":
        raise HyperparameterError(
            "structure='eskdb' is an ensemble of networks, not one network: fit it with BNClassifier(structure='eskdb')"
            if structure == "eskdb" else f"structure must be one of {STRUCTURES[:4]} or a DAG, not {structure!r}"
        )
    source.require_passes(3 if structure == "skdb" else 2, f"learning a {structure} classifier")
    k = resolved_k(options, len(features))
    pairs = structure == "tan" or (structure in ("kdb", "skdb") and k > 0)
    stats = source_statistics(source, target, features, options, pairs=pairs)
    ignored = stats.single_level_features()
    used = [f for f in stats.features if f not in ignored]
    if not used:
        net, dag = class_prior_network(source, target, ignored, estimator, options)
        return net, dag, ignored
    k = min(k, len(used))
    if structure == "skdb":
        net, dag = _selective_kdb(source, stats, target, k, used, estimator, options)
        return net, dag, ignored
    dag, _ = structure_from_statistics(stats, structure, k, features=used, root=options.root)
    return fit_network(dag, source, estimator, options), dag, ignored

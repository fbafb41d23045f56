"""Counting and estimating: a structure and any data source -> :class:`FittedNetwork`.

Every function here takes the fit's :class:`~pybncsmooth.options.Options` whole and
reads the fields it uses; the estimator comes built (its hyperparameters checked where
the options were)."""

from __future__ import annotations

import functools
from typing import Any

from ..counting.context_tree import ContextTree
from ..counting.flat import TreeMap
from ..counting.network import NetworkCounter, count_source, spec_variables
from ..data.schema import NA_LABEL, Schema
from ..data.sources import DataSource, as_source
from ..data.weights import WEIGHT_COLUMN, check_total_weight, weights_column
from ..errors import DataError, StructureError, UndeclaredLevelError
from ..estimators.base import Estimator
from ..model.fit_state import FitState
from ..model.cpd import CPD, DomainLastCPD, LazyTreeCPD, TreeCPD
from ..model.network import FittedNetwork
from ..options import Options
from ..structure.dag import DAG
from .augment import run_augmentation
from .domains import DomainRole, check_domain
from ._em_update import em_state
from .em import EStep, run_em
from .prior import check_prior_use, load_prior, prior_schema, resolve_prior, with_fit_prior
from .structure import resolve_structure

__all__ = ["fit_network", "estimate_network", "assemble_network", "check_counted_weight", "weighted_source"]


def check_counted_weight(trees: dict[str, ContextTree], weights: Any = None) -> None:
    """The total count of every node's tree at most
    :data:`~pybncsmooth.data.weights.MAX_TOTAL_WEIGHT`: a check of the row weights over
    all chunks (each chunk's total is checked as it is read); ``weights`` names them."""
    node, total = max(((n, t.total) for n, t in trees.items()), key=lambda x: x[1], default=(None, 0))
    if node is not None:
        what = f"the weights {weights!r}" if isinstance(weights, str) and weights != "per row" else "the row weights"
        check_total_weight(float(total), f"{what} (counted for node {node!r})")


def estimate_network(
    dag: DAG,
    schema: Schema,
    trees: dict[str, ContextTree],
    estimator: Estimator,
    options: Options,
    *,
    info: dict | None = None,
) -> FittedNetwork:
    """Apply ``estimator`` to every node's context tree and assemble the network (a
    multi-domain fit, ``options.domain``, as :class:`DomainRole` says).

    ``info`` (rows used, NA policy, ...) is kept in ``FittedNetwork.info`` beside the
    method and its hyperparameters."""
    role = DomainRole.of(options, estimator)
    estimator = with_fit_prior(estimator, dag, schema, options)
    if not role and isinstance(trees, TreeMap) and trees.flat is not None:
        flat = estimator.estimate_flat(trees.flat)
        if flat is not None:  # a closed form, every tree at once: no tree or estimate made before it is read
            whole = {n: trees[n] for n in dag.nodes if n not in trees.index}  # (counted by a sort of the rows)
            return _flat_network(dag, schema, trees, flat, estimator.estimate_all(whole) if whole else {},
                                 estimator, options, info)
    node_trees = {n: trees[n] for n in dag.nodes}
    if (info or {}).get("weights") is not None:  # unweighted counts total the rows: far below the limit
        check_counted_weight(node_trees, info["weights"])
    if role.split == "last":
        estimates = estimator.estimate_domains(node_trees, role.column)
    else:
        estimates = estimator.estimate_all(node_trees, domain=role.column)
    return assemble_network(dag, schema, trees, estimates, estimator, options, info=info)


def assemble_network(
    dag: DAG,
    schema: Schema,
    trees: dict[str, ContextTree],
    estimates: dict[str, Any],
    estimator: Estimator,
    options: Options,
    *,
    info: dict | None = None,
) -> FittedNetwork:
    """The network of every node's tree and its estimate (as :func:`estimate_network`
    makes them)."""
    last = DomainRole.of(options, estimator).split == "last"
    cpds = {n: _tree_cpd(trees[n], estimates[n], last) for n in dag.nodes}
    return FittedNetwork(dag, schema, cpds, domain=options.domain, estimator=estimator,
                         info=_network_info(estimator, info), options=options)


def _network_info(estimator: Estimator, info: dict | None) -> dict[str, Any]:
    """What ``FittedNetwork.info`` keeps of the fit: the method, its hyperparameters, the
    prior network's description, then ``info``."""
    full_info = {"method": estimator.name, "hyperparameters": estimator.hyperparameters()}
    if estimator.network_prior is not None:
        full_info["prior"] = estimator.network_prior.describe()
    full_info.update(info or {})
    return full_info


def _flat_network(dag: DAG, schema: Schema, trees: TreeMap, estimates: Any, whole: dict[str, Any],
                  estimator: Estimator, options: Options, info: dict | None) -> FittedNetwork:
    """The network of the estimates of every flat tree at once (``estimates``: the
    estimator's :meth:`~pybncsmooth.estimators.base.Estimator.estimate_flat`), a CPD a
    node whose tree and estimate are made when first read, and of the estimates
    ``whole`` of the other trees."""
    flat, index, card = trees.flat, trees.index, trees.flat.card
    cpds: dict[str, CPD] = {
        n: LazyTreeCPD(estimates, index[n], n, flat.parents[index[n]], card[n]) if n in index
        else TreeCPD(trees[n], whole[n])
        for n in dag.nodes
    }
    return FittedNetwork.assembled(dag, schema, cpds, estimator=estimator, info=_network_info(estimator, info),
                                   options=options)


def _tree_cpd(tree: ContextTree, estimate: Any, domain_last: bool) -> CPD:
    """The CPD of one node: a domain split last is presented first (the network's layout)."""
    if domain_last:
        return DomainLastCPD(TreeCPD(tree, estimate, domain_last=True))
    return TreeCPD(tree, estimate)


def _seed_label(random_state: Any) -> Any:
    return random_state if isinstance(random_state, (int, type(None))) else repr(random_state)


def weighted_source(data: Any, options: Options) -> tuple[DataSource, Options]:
    """The data as a source (chunks of ``options.chunksize``) whose row weights, if any,
    are a column of it, and the options naming that column (an array of weights becomes
    a column of a copy of the frame)."""
    source = as_source(data, chunksize=options.chunksize)
    source, column = weights_column(source, options.weights)
    if column is not None and not (isinstance(options.weights, str) and options.weights == column):
        options = options.replace(weights=column)
    return source, options


def fit_network(spec: Any, data: Any, estimator: Estimator, options: Options, *, transformer: Any = None
                ) -> FittedNetwork:
    """The parameters of the network ``spec`` (any structure :func:`resolve_structure`
    reads) fitted on ``data`` (a data frame, a path, chunks, a Dask DataFrame: see
    :func:`pybncsmooth.fit`): one pass counts every node's context tree (the domain's
    place as :class:`DomainRole` decides), then the estimator turns the trees into CPDs.

    ``options.weights``: one finite number >= 0 per row (an array for a data frame in
    memory, or the name of a column of the data): the counts are sums of weights.
    ``options.discretize`` (an unsupervised discretiser) cuts the numeric nodes of a given
    structure, unless the caller cut them already (``transformer``, kept for queries; a
    learned classifier's are cut with its class by the classifier's builders).

    ``na="em"`` / ``"hard-em"``: expectation-maximisation over the missing cells from
    the available-case fit (:mod:`pybncsmooth.pipeline.em`), stopping when the relative
    change of the observed-data log-likelihood is below ``em_tol`` or after
    ``em_max_iter`` iterations; ``info["em"]`` keeps the trace.  For estimators whose
    samplers need whole counts (``hdp``, ``hls-bayes``) ``na="em"`` is data augmentation
    (:mod:`pybncsmooth.pipeline.augment`): ``em_burn + em_draws`` blocks, each drawing
    the missing cells and running the sampler on the completed counts, the last
    ``em_draws`` averaged.

    This is :func:`pybncsmooth.fit` without the classifier formulas; every front end
    fits a given structure through it."""
    source, options = weighted_source(data, options)
    if options.missing.em is not None:
        source.require_passes(3, "EM")
    dag, file_schema = resolve_structure(spec, source.columns())
    role = DomainRole.of(options, estimator)
    if options.weights is not None and (options.weights in dag or options.weights == role.column):
        raise StructureError(f"the weights column {options.weights!r} is a variable of the network")
    dag, file_schema = role.structure(dag, file_schema)
    prior = load_prior(options.prior)
    if prior is not None:
        check_prior_use(estimator, role)
        file_schema = prior_schema(prior, dag, file_schema)
    if transformer is None and options.discretize is not None and options.structure is None:
        source, transformer = _discretized(source, dag, options)  # a classifier's were cut with the class
    try:
        counter = _count(source, dag, file_schema, role, options)
    except UndeclaredLevelError as e:
        if prior is None:
            raise
        e.args = (f"{e.args[0]} (the levels are the prior network's: prior= fixes them)", *e.args[1:])
        raise
    schema, trees = counter.result()
    if prior is not None:
        estimator = estimator.with_prior(resolve_prior(prior, dag, schema, options))
    if options.weights is not None and all(t.total == 0 for t in trees.values()):
        raise DataError(f"the weights column {options.weights!r} has only zero weights (on the rows counted)")
    schema.check_min_levels(dag.nodes)
    if role:
        check_domain(role.column, schema, trees, counter.domain_rows, options.na)
    info = _fit_info(counter, role, options)
    net = estimate_network(dag, schema, trees, estimator, options, info=info)
    net.transformer = transformer
    net.fit_state = FitState(given=tuple(file_schema) if file_schema is not None else ())
    if options.missing.em is None:
        return net
    return _fit_em(net, source, dag, schema, trees, estimator, options, info)


def _discretized(source: DataSource, dag: DAG, options: Options) -> tuple[DataSource, Any]:
    """The data with the numeric nodes cut by ``options.discretize`` (fitted here, on
    the data in memory) and the fitted discretiser."""
    if not source.in_memory:
        raise StructureError(
            "discretize= learns cut points from the data in memory; for data read in chunks (a file, chunks, "
            "a Dask DataFrame) discretise the numeric columns first, or pass a DataFrame"
        )
    from ..data.discretize import MDLDiscretizer, make_discretizer  # scikit-learn, imported when first used

    transformer = make_discretizer(options.discretize, options.n_bins)
    if isinstance(transformer, MDLDiscretizer):
        raise StructureError(
            "discretize='mdl' cuts numeric columns by the class: it needs a classifier formula ('Class ~ .'), "
            "not a given structure; use 'equal_frequency' or 'equal_width'"
        )
    frame = source.data
    nodes = [n for n in dag.nodes if n in frame.columns]
    transformer.fit(frame[nodes])
    frame = frame.copy()
    frame[nodes] = transformer.transform(frame[nodes])
    return as_source(frame, chunksize=options.chunksize), transformer


def _count(source: DataSource, dag: DAG, file_schema: Schema | None, role: DomainRole, options: Options
           ) -> NetworkCounter:
    """One pass over the data: every node's context tree (missing cells as the policy
    says; under EM the available cases first)."""
    policy = options.missing
    counter = NetworkCounter(
        dag,
        schema=file_schema,
        na="available" if policy.em is not None else policy.counting,
        max_levels=options.max_levels,
        na_label=policy.label,
        weights=options.weights,
        n_jobs=options.n_jobs,
        **role.counter_splits(),
    )
    return count_source(source, counter, progress=options.progress)


def _fit_info(counter: NetworkCounter, role: DomainRole, options: Options) -> dict[str, Any]:
    """What the network keeps of its fit in ``info``."""
    given = options.weights
    return {
        "n_rows": counter.n_rows,
        **({"domain_rows": dict(counter.domain_rows)} if role else {}),
        "n_dropped": counter.n_dropped,
        "n_missing": dict(counter.n_missing),
        **({"weights": given if given != WEIGHT_COLUMN else "per row"} if given is not None else {}),
        "na": options.missing.name,
        **({"na_label": options.na_label} if options.na == "level" and options.na_label != NA_LABEL else {}),
        "random_state": _seed_label(options.random_state),
    }


def _fit_em(net: FittedNetwork, source: DataSource, dag: DAG, schema: Schema, trees: dict, estimator: Estimator,
            options: Options, info: dict) -> FittedNetwork:
    """EM (or data augmentation) from the available-case fit ``net``."""
    specs = [(n, t.parents) for n, t in trees.items()]
    variables = spec_variables(schema, specs)
    estep = EStep(source, schema, specs, variables, options.weights, options.progress)
    estimate = functools.partial(estimate_network, dag, schema, estimator=estimator, options=options, info=info)
    if options.missing.treatment(estimator) == "augmentation":
        assemble = functools.partial(assemble_network, dag, schema, estimator=estimator, options=options, info=info)
        out = run_augmentation(net, estep, trees, estimator, estimate, assemble, draws=options.em_draws,
                               burn=options.em_burn, progress=options.progress)
    else:
        out = run_em(net, estep, trees, estimate, hard=options.missing.em == "hard", tol=options.em_tol,
                     max_iter=options.em_max_iter)
    out.transformer = net.transformer
    out.fit_state = em_state(estep, schema, specs, net.fit_state.given if net.fit_state else ())
    return out

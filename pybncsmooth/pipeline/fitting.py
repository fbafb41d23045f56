"""Counting and estimating: a structure and any data source -> :class:`FittedNetwork`."""

from __future__ import annotations

import functools
from typing import Any

from ..counting.context_tree import ContextTree
from ..counting.network import NetworkCounter, count_source, spec_variables
from ..data.encode import DEFAULT_MAX_LEVELS, NAPolicy
from ..data.schema import NA_LABEL, Schema
from ..data.sources import as_source
from ..data.weights import weights_column
from ..estimators.base import Estimator, make_estimator
from ..model.cpd import CPD, DomainLastCPD, TreeCPD
from ..model.network import FittedNetwork
from ..structure.dag import DAG
from ..errors import DataError, StructureError
from ..validation import NA_POLICIES, check_int, check_na, check_number
from .augment import AUGMENTED, run_augmentation
from .em import EM_POLICIES, EStep, run_em
from .domains import check_domain, domain_from_hyper, strip_domain
from .structure import resolve_structure

__all__ = ["fit_network", "estimate_network", "assemble_network"]


def estimate_network(
    dag: DAG,
    schema: Schema,
    trees: dict[str, ContextTree],
    estimator: Estimator,
    *,
    domain: str | None = None,
    info: dict | None = None,
) -> FittedNetwork:
    """Apply ``estimator`` to every node's context tree and assemble the network.

    ``info`` (rows used, NA policy, ...) is kept in ``FittedNetwork.info`` beside the
    method and its hyperparameters."""
    last = domain is not None and estimator.domain_split == "last"
    node_trees = {n: trees[n] for n in dag.nodes}
    if last:
        estimates = estimator.estimate_domains(node_trees, domain)
    else:
        estimates = estimator.estimate_all(node_trees, domain=domain)
    return assemble_network(dag, schema, trees, estimates, estimator, domain=domain, info=info)


def assemble_network(
    dag: DAG,
    schema: Schema,
    trees: dict[str, ContextTree],
    estimates: dict[str, Any],
    estimator: Estimator,
    *,
    domain: str | None = None,
    info: dict | None = None,
) -> FittedNetwork:
    """The network of every node's tree and its estimate (as :func:`estimate_network`
    makes them)."""
    last = domain is not None and estimator.domain_split == "last"
    cpds = {n: _tree_cpd(trees[n], estimates[n], last) for n in dag.nodes}
    full_info = {"method": estimator.name, "hyperparameters": estimator.get_params()}
    full_info.update(info or {})
    return FittedNetwork(dag, schema, cpds, domain=domain, estimator=estimator, info=full_info)


def _tree_cpd(tree: ContextTree, estimate: Any, domain_last: bool) -> CPD:
    """The CPD of one node: a domain split last is presented first (the network's layout)."""
    if domain_last:
        return DomainLastCPD(TreeCPD(tree, estimate, domain_last=True))
    return TreeCPD(tree, estimate)


def _seed_label(random_state: Any) -> Any:
    return random_state if isinstance(random_state, (int, type(None))) else repr(random_state)


def fit_network(
    spec: Any,
    data: Any,
    method: str | Estimator = "bayes",
    *,
    domain: str | None = None,
    na: NAPolicy = "error",
    random_state: Any = None,
    chunksize: int | None = None,
    max_levels: int = DEFAULT_MAX_LEVELS,
    na_label: str = NA_LABEL,
    progress: bool | None = None,
    weights: Any = None,
    em_tol: float = 1e-6,
    em_max_iter: int = 100,
    em_draws: int = 10,
    em_burn: int = 2,
    **hyper: Any,
) -> FittedNetwork:
    """The parameters of the network ``spec`` (any structure :func:`resolve_structure`
    reads) fitted on ``data`` (a data frame, a path, chunks, a Dask DataFrame: see
    :func:`pybncsmooth.fit`): one pass counts every node's context tree (the domain,
    if any, as the last split, or the first where the estimator's
    ``domain_split`` says so), then the estimator turns the trees into CPDs.

    ``weights``: one finite number >= 0 per row (an array for a data frame in memory,
    or the name of a column of the data): the counts are sums of weights.

    ``na="em"`` / ``"hard-em"``: expectation-maximisation over the missing cells from
    the available-case fit (:mod:`pybncsmooth.pipeline.em`), stopping when the relative
    change of the observed-data log-likelihood is below ``em_tol`` or after
    ``em_max_iter`` iterations; ``info["em"]`` keeps the trace.  For ``hdp`` and
    ``hls-bayes`` (samplers of whole counts) ``na="em"`` is data augmentation
    (:mod:`pybncsmooth.pipeline.augment`): ``em_burn + em_draws`` blocks, each drawing
    the missing cells and running the sampler on the completed counts, the last
    ``em_draws`` averaged.

    This is :func:`pybncsmooth.fit` without the classifier formulas; every front end
    fits a given structure through it."""
    check_na(na, NA_POLICIES)
    em = na in EM_POLICIES
    if em:
        em_tol = check_number("em_tol", em_tol)
        em_max_iter = check_int("em_max_iter", em_max_iter, low=1)
        em_draws = check_int("em_draws", em_draws, low=1)
        em_burn = check_int("em_burn", em_burn, low=0)
    domain, hyper = domain_from_hyper(domain, hyper)
    estimator = make_estimator(method, random_state=random_state, progress=progress, **hyper)
    source = as_source(data, chunksize=chunksize)
    source, weight_col = weights_column(source, weights)
    if em:
        source.require_passes(3, "EM")
    dag, file_schema = resolve_structure(spec, source.columns())
    if weight_col is not None and (weight_col in dag or weight_col == domain):
        raise StructureError(f"the weights column {weight_col!r} is a variable of the network")
    if domain is not None:
        dag = strip_domain(dag, domain)
        if file_schema is not None and domain in file_schema:
            file_schema = file_schema.subset([v for v in file_schema if v != domain])
    counter = NetworkCounter(
        dag,
        schema=file_schema,
        na="available" if em else na,
        max_levels=max_levels,
        na_label=na_label,
        prefix=(domain,) if domain is not None and estimator.domain_split == "first" else (),
        suffix=(domain,) if domain is not None and estimator.domain_split == "last" else (),
        weights=weight_col,
    )
    counter = count_source(source, counter, progress=progress)
    domain_rows = counter.domain_rows
    schema, trees = counter.result()
    if weight_col is not None and all(t.total == 0 for t in trees.values()):
        raise DataError(f"the weights column {weight_col!r} has only zero weights (on the rows counted)")
    schema.check_min_levels(dag.nodes)
    if domain is not None:
        check_domain(domain, schema, trees, domain_rows, na)
    info = {
        "n_rows": counter.n_rows,
        **({"domain_rows": dict(domain_rows)} if domain is not None else {}),
        "n_dropped": counter.n_dropped,
        **({"weights": weights if isinstance(weights, str) else "per row"} if weights is not None else {}),
        "na": na,
        "random_state": _seed_label(random_state),
    }
    net = estimate_network(dag, schema, trees, estimator, domain=domain, info=info)
    if not em:
        return net
    specs = [(n, t.parents) for n, t in trees.items()]
    variables = spec_variables(schema, specs)
    estep = EStep(source, schema, specs, variables, weight_col, progress)
    estimate = functools.partial(estimate_network, dag, schema, estimator=estimator, domain=domain, info=info)
    if na == "em" and estimator.name in AUGMENTED:
        assemble = functools.partial(assemble_network, dag, schema, estimator=estimator, domain=domain, info=info)
        return run_augmentation(net, estep, trees, estimator, estimate, assemble, draws=em_draws, burn=em_burn,
                                progress=progress)
    return run_em(net, estep, trees, estimate, hard=na == "hard-em", tol=em_tol, max_iter=em_max_iter)

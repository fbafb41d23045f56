"""``pybncsmooth.fit``: structure + data + estimator -> FittedNetwork."""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..counting.network import NetworkCounter, count_source
from ..data.encode import DEFAULT_MAX_LEVELS, NAPolicy
from ..data.schema import NA_LABEL, Schema
from ..data.sources import as_source
from ..errors import EmptyDataError, DataError, MissingColumnError, StructureError
from ..estimators.base import Estimator, make_estimator, with_progress
from ..model.cpd import TreeCPD
from ..model.network import FittedNetwork
from ..structure.dag import DAG

__all__ = ["fit", "resolve_structure", "estimate_network"]


def _looks_like_path(s: str) -> bool:
    from ..interop.io import NETWORK_FORMATS

    low = s.lower()
    return any(low.endswith(ext) or low.endswith(ext + ".gz") for ext in NETWORK_FORMATS)


def resolve_structure(spec: Any, columns: Sequence[str] | None = None) -> tuple[DAG, Schema | None]:
    """A DAG (and the levels a file declares, if any) from any structure spec.

    Accepted: a :class:`DAG`; a :class:`FittedNetwork` (its structure and levels);
    a bnlearn model string (``"[A][B|A]"``); one per-node formula or a list of them
    (``"B ~ A"``; ``.`` means every other column of the data); a path to a
    ``.bif``/``.dsc``/``.net``/``.rds``/``.pbn`` file; a ``networkx.DiGraph``.
    """
    if isinstance(spec, DAG):
        return spec, None
    if isinstance(spec, FittedNetwork):
        return spec.dag, spec.schema.subset(spec.nodes)
    if isinstance(spec, os.PathLike) or (isinstance(spec, str) and _looks_like_path(spec.strip())):
        from ..interop.io import read_network

        obj = read_network(spec)
        if isinstance(obj, DAG):
            return obj, None
        return obj.dag, obj.schema
    if isinstance(spec, str):
        s = spec.strip()
        if s.startswith("["):
            return DAG.from_modelstring(s), None
        if "~" in s:
            return DAG.from_formulas([s], columns), None
        raise StructureError(
            f"cannot read {spec!r} as a structure: expected a model string '[A][B|A]', a formula "
            "'B ~ A', or a path to a .bif/.dsc/.net/.rds/.pbn file"
        )
    if isinstance(spec, (list, tuple)) and all(isinstance(f, str) for f in spec):
        return DAG.from_formulas(list(spec), columns), None
    if hasattr(spec, "is_directed") and hasattr(spec, "edges"):
        return DAG.from_networkx(spec), None
    raise StructureError(f"cannot use a {type(spec).__name__} as a network structure")


def _strip_domain(dag: DAG, domain: str) -> DAG:
    """Remove a bnlearn-style group node (a root that is a parent of every other node)."""
    if domain not in dag:
        return dag
    others = [n for n in dag.nodes if n != domain]
    if dag.parents(domain):
        raise StructureError(
            f"the domain {domain!r} is a node of the structure with parents {dag.parents(domain)}; in "
            "bnlearn's layout for grouped fits it is a root parent of every other node"
        )
    lacking = [n for n in others if domain not in dag.parents(n)]
    if lacking:
        raise StructureError(
            f"the domain {domain!r} is a parent of some nodes but not of {lacking[0]!r}"
            + (f" (and {len(lacking) - 1} more)" if len(lacking) > 1 else "")
            + "; in bnlearn's layout for grouped fits it is a root parent of every other node, "
            "otherwise leave it out of the structure"
        )
    return DAG({n: [p for p in dag.parents(n) if p != domain] for n in others}, nodes=others)


def estimate_network(
    dag: DAG,
    schema: Schema,
    trees: dict,
    estimator: Estimator,
    *,
    domain: str | None = None,
    info: dict | None = None,
) -> FittedNetwork:
    """Apply ``estimator`` to every node's context tree."""
    estimates = estimator.estimate_all({n: trees[n] for n in dag.nodes}, domain=domain)
    cpds = {n: TreeCPD(trees[n], estimates[n]) for n in dag.nodes}
    full_info = {"method": estimator.name, "hyperparameters": estimator.get_params()}
    full_info.update(info or {})
    return FittedNetwork(dag, schema, cpds, domain=domain, estimator=estimator, info=full_info)


def fit(
    spec: Any,
    data: Any,
    /,
    method: str | Estimator = "bayes",
    *,
    structure: str | None = None,
    k: int | None = None,
    discretize: Any = None,
    n_bins: int = 5,
    root: str | None = None,
    domain: str | None = None,
    na: NAPolicy = "error",
    random_state: Any = None,
    chunksize: int | None = None,
    max_levels: int = DEFAULT_MAX_LEVELS,
    na_label: str = NA_LABEL,
    progress: bool | None = None,
    **hyper: Any,
) -> FittedNetwork:
    """Fit the parameters of a discrete Bayesian network.

    Pipeline: data frame -> codes + schema -> one context tree per node ->
    estimator -> :class:`FittedNetwork`.

    Parameters
    ----------
    spec:
        The structure: a bnlearn model string ``"[A][B|A][C|A:B]"``, per-node
        formulas ``["B ~ A", "C ~ A + B"]``, a :class:`DAG`, a network file
        (``.bif``/``.dsc``/``.net``/``.rds``/``.pbn``, whose levels then fix the
        data's), a fitted network, or a ``networkx.DiGraph``.  A node's parent
        order is the branching order of its context tree.
    data:
        A pandas DataFrame of categorical columns; a path to a CSV or Parquet file,
        read in chunks of ``chunksize`` rows (default: about two million values a
        chunk, so that memory does not grow with the file); a list of DataFrame
        chunks, a function returning an iterable of them, or a one-shot iterator
        (counted one at a time; the same result as the concatenation); or a Dask
        DataFrame, counted per partition on Dask's workers and merged (map-reduce).
        Levels first met in a later chunk are united with the earlier ones (the
        result is the same as one pass over the whole data); with a network file
        fixing the levels, a level it does not declare is an error naming the level,
        the column and the chunk.
    method:
        ``"mle"``, ``"bayes"`` (BDeu, ``iss``), ``"mestimate"`` (``m``), ``"hdp"``
        (hierarchical Dirichlet process: ``iterations``, ``burn_in``, ``tying``,
        ``n_chains``, ...), ``"hmd"`` (hierarchical Multinomial-Dirichlet by
        variational inference: ``s``, ``alpha0``, ``iss``, ``compat="bnlearn"``,
        ``tol``, ``max_iter``), or an estimator object.  See
        :func:`pybncsmooth.available_methods`.
    structure, k, root:
        With a classifier formula ``"Class ~ ."`` (or ``"Class ~ A + B"``): learn a
        ``"nb"``, ``"tan"`` (``root``), ``"kdb"`` or ``"skdb"`` (``k``) structure on
        ``data`` first; the result is the model :class:`BNClassifier` builds.
    discretize, n_bins:
        ``"mdl"``, ``"equal_frequency"`` or ``"equal_width"`` (or a transformer)
        for numeric columns, fitted on ``data`` (MDL uses the class of the
        formula); the fitted network applies it to the data it is queried with.
    domain:
        A column naming the domain of each row (user, site, ...): every node's
        context tree then splits on it first, giving domain-specific CPTs that back
        off to pooled ones; with ``method="hmd"`` each domain's joint table of
        node and parents is shrunk toward the other domains' (paper 001 Sec. 5,
        bnlearn's ``hdir``).  ``group=`` is accepted as bnlearn's name for it.  A
        structure that already has this column as a root parent of every node
        (bnlearn's grouped layout) is accepted.  A domain level with no rows gets
        the pooled (population-level) tables.
    na:
        Missing values: ``"error"`` (default), ``"level"`` (a level of its own),
        ``"drop"`` (drop incomplete rows), ``"available"`` (each node uses the rows
        where it and its parents are observed, as bnlearn's ``bn.fit``).
    random_state:
        Seed or ``numpy.random.Generator`` for stochastic estimators.
    progress:
        Progress bars: over chunks (Dask: partitions) while counting, and the
        estimator's own where it has one (HDP's sweeps); ``None`` (default): no bar
        over chunks, the estimator's default.
    **hyper:
        Hyperparameters of the method (``iss=``, ``m=``, ...); unknown names raise
        :class:`~pybncsmooth.errors.HyperparameterError`.

    Examples
    --------
    >>> import pybncsmooth as bs
    >>> df = bs.load_dataset("asia")
    >>> net = bs.fit("[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]", df, method="bayes", iss=1)
    >>> round(float(net.cpt("A")[1]), 7)
    0.0084983
    """
    if structure is not None or discretize is not None:
        return _fit_classifier(
            spec,
            data,
            method=method,
            structure=structure,
            k=k,
            discretize=discretize,
            n_bins=n_bins,
            root=root,
            domain=domain,
            na=na,
            random_state=random_state,
            chunksize=chunksize,
            progress=progress,
            **hyper,
        )
    if "group" in hyper:  # bnlearn's name for the domain (bn.fit(method = "hdir", group = ))
        group = hyper.pop("group")
        if domain is not None and group != domain:
            raise StructureError(f"domain={domain!r} and group={group!r} name different columns; give one")
        domain = group
    estimator = make_estimator(method, random_state=random_state, **with_progress(method, hyper, progress))
    source = as_source(data, chunksize=chunksize)
    dag, file_schema = resolve_structure(spec, source.columns())
    if domain is not None:
        dag = _strip_domain(dag, domain)
        if file_schema is not None and domain in file_schema:
            file_schema = file_schema.subset([v for v in file_schema if v != domain])
    counter = NetworkCounter(
        dag,
        schema=file_schema,
        na=na,
        max_levels=max_levels,
        na_label=na_label,
        prefix=(domain,) if domain is not None else (),
    )
    counter = count_source(source, counter, progress=progress)
    domain_rows = counter.prefix_rows
    schema, trees = counter.result()
    schema.check_min_levels(dag.nodes)
    if domain is not None:
        _check_domain(domain, schema, trees, domain_rows, na)
    info = {
        "n_rows": counter.n_rows,
        **({"domain_rows": dict(domain_rows)} if domain is not None else {}),
        "n_dropped": counter.n_dropped,
        "na": na,
        "random_state": random_state if isinstance(random_state, (int, type(None))) else repr(random_state),
    }
    return estimate_network(dag, schema, trees, estimator, domain=domain, info=info)


def _fit_classifier(
    spec: Any,
    data: Any,
    *,
    method: Any,
    structure: str | None,
    k: int | None,
    discretize: Any,
    n_bins: int,
    root: str | None,
    domain: str | None,
    na: str,
    random_state: Any,
    chunksize: int | None = None,
    progress: bool | None = None,
    **hyper: Any,
) -> FittedNetwork:
    """``fit("Class ~ .", df, structure="tan", discretize="mdl")``: the BNClassifier model
    (any data source: structure and counts are learned in chunks)."""
    from ..classifiers.classifier import build_classifier_network
    from ..classifiers.discretize import make_discretizer
    from ..structure.formula import parse_formula

    if not isinstance(spec, str) or "~" not in spec:
        raise StructureError(
            f"with structure={structure!r} the first argument is a classifier formula such as 'Class ~ .', not {spec!r}"
        )
    in_memory = isinstance(data, pd.DataFrame)
    source = None if in_memory else as_source(data, chunksize=chunksize)
    all_columns = [str(c) for c in data.columns] if in_memory else source.columns()
    if all_columns is None:
        raise EmptyDataError("the data has no chunk")
    columns = [c for c in all_columns if c != domain]
    target, features = parse_formula(spec, columns)
    if target not in columns:
        raise MissingColumnError(target, "class", columns)
    for f in features:
        if f not in columns:
            raise MissingColumnError(f, "feature", columns)
    if not in_memory and discretize is not None:
        raise StructureError(
            "discretize= learns cut points from the data in memory; for data read in chunks (a file, chunks, "
            "a Dask DataFrame) discretise the numeric columns first, or pass a DataFrame"
        )
    transformer = make_discretizer(discretize, n_bins)
    frame = data if in_memory else source
    if transformer is not None:
        transformer.fit(data[features], data[target].to_numpy())
        frame = data.copy()
        frame[features] = transformer.transform(data[features])
    if structure is None:  # discretize= alone: naive Bayes on the discretised frame
        dag = DAG({target: [], **{f: [target] for f in features}}, nodes=[target, *features])
        net = fit(dag, frame, method, domain=domain, na=na, random_state=random_state, **hyper)
    else:
        if domain is not None:
            raise StructureError("domain= with a learned classifier structure: learn the structure first, then fit it")
        net, _, ignored = build_classifier_network(
            frame,
            target,
            structure=structure,
            k=k if k is not None else 1,
            method=method,
            na=na,
            root=root,
            random_state=random_state,
            features=features,
            progress=progress,
            **hyper,
        )
        net.info["ignored_features"] = ignored
    net.transformer = transformer
    return net


def _check_domain(domain: str, schema: Schema, trees: dict, raw_rows: dict, na: str) -> None:
    """A multi-domain fit needs two domains or more, each with data after NA handling.

    A level of a categorical domain column with no rows at all is allowed (bnlearn
    keeps such a group: it gets the population-level tables); a domain whose rows
    were all removed by missing values is an error.
    """
    levels = list(schema[domain])
    if len(levels) < 2:
        raise DataError(
            f"the domain column {domain!r} has {len(levels)} level ({levels[0]!r}); a multi-domain "
            "fit needs two domains or more"
            if levels
            else f"the domain column {domain!r} has no levels"
        )
    kept = np.zeros(len(levels), dtype=np.int64)
    for t in trees.values():
        if t.depth and len(t.levels[1].value):
            np.add.at(kept, t.levels[1].value, t.levels[1].counts.sum(axis=1))
    for code, level in enumerate(levels):
        if kept[code] == 0 and raw_rows.get(level, 0) > 0:
            raise DataError(
                f"domain {level!r} of {domain!r} has {raw_rows[level]} row(s) but none is left after "
                f"missing values are handled (na={na!r}) for any node"
            )

"""``fit("Class ~ .", data, structure="tan", discretize="mdl")``: a classifier formula
fitted as :class:`~pybncsmooth.BNClassifier` would (any data source: the structure and
the counts are learned in chunks)."""

from __future__ import annotations

from typing import Any

from ..data.discretize import make_discretizer
from ..data.sources import as_source
from ..data.weights import weights_column
from ..errors import EmptyDataError, MissingColumnError, StructureError
from ..model.network import FittedNetwork
from ..pipeline import fit_network
from ..structure.dag import DAG
from ..structure.formula import parse_formula
from .builders import build_classifier_network

__all__ = ["fit_classifier_formula"]


def _formula_columns(spec: Any, structure: Any, columns: list[str] | None, domain: str | None) -> tuple[str, list]:
    """The class and the features of a classifier formula, checked against the data."""
    if not isinstance(spec, str) or "~" not in spec:
        raise StructureError(
            f"with structure={structure!r} the first argument is a classifier formula such as 'Class ~ .', not {spec!r}"
        )
    if columns is None:
        raise EmptyDataError("the data has no chunk")
    columns = [c for c in columns if c != domain]
    target, features = parse_formula(spec, columns)
    if target not in columns:
        raise MissingColumnError(target, "class", columns)
    for f in features:
        if f not in columns:
            raise MissingColumnError(f, "feature", columns)
    return target, features


def fit_classifier_formula(
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
    weights: Any = None,
    **hyper: Any,
) -> FittedNetwork:
    """The model :class:`BNClassifier` builds, from a formula ``"Class ~ ."`` (or
    ``"Class ~ A + B"``): ``structure`` learned on ``data`` (``k``, ``root``), numeric
    columns cut by ``discretize`` (fitted on ``data``; the network applies it to the
    data it is queried with).  ``discretize`` alone fits naive Bayes."""
    source = as_source(data, chunksize=chunksize)
    source, weight_col = weights_column(source, weights)
    cols = [c for c in source.columns() or [] if c != weight_col] if source.columns() is not None else None
    target, features = _formula_columns(spec, structure, cols, domain)
    if not source.in_memory and discretize is not None:
        raise StructureError(
            "discretize= learns cut points from the data in memory; for data read in chunks (a file, chunks, "
            "a Dask DataFrame) discretise the numeric columns first, or pass a DataFrame"
        )
    transformer = make_discretizer(discretize, n_bins)
    if transformer is not None:
        frame = source.data
        transformer.fit(frame[features], frame[target].to_numpy())
        frame = frame.copy()
        frame[features] = transformer.transform(frame[features])
        source = as_source(frame, chunksize=chunksize)
    if structure is None:  # discretize= alone: naive Bayes on the discretised frame
        dag = DAG({target: [], **{f: [target] for f in features}}, nodes=[target, *features])
        net = fit_network(dag, source, method, domain=domain, na=na, random_state=random_state, weights=weight_col,
                          **hyper)
    else:
        net, _, ignored = build_classifier_network(
            source,
            target,
            structure=structure,
            k=k if k is not None else 1,
            method=method,
            na=na,
            root=root,
            random_state=random_state,
            features=features,
            progress=progress,
            domain=domain,
            weights=weight_col,
            **hyper,
        )
        net.info["ignored_features"] = ignored
    net.transformer = transformer
    return net

"""``fit("Class ~ .", data, structure="tan", discretize="mdl")``: a classifier formula
fitted as :class:`~pybncsmooth.BNClassifier` would (any data source: the structure and
the counts are learned in chunks)."""

from __future__ import annotations

from typing import Any

from ..data.sources import DataSource, as_source
from ..errors import EmptyDataError, MissingColumnError, StructureError
from ..estimators.base import Estimator
from ..model.network import FittedNetwork
from ..options import Options
from ..pipeline import DomainRole, fit_network, weighted_source
from ..structure.dag import DAG
from ..structure.formula import parse_formula
from .builders import build_classifier_network

__all__ = ["fit_classifier_formula"]


def _formula_columns(spec: Any, options: Options, columns: list[str] | None) -> tuple[str, list]:
    """The class and the features of a classifier formula (one string, or a list of one,
    as R hands formulas over), checked against the data."""
    if isinstance(spec, (list, tuple)) and len(spec) == 1:
        spec = spec[0]
    if not isinstance(spec, str) or "~" not in spec:
        raise StructureError(
            f"with structure={options.structure!r} the first argument is a classifier formula such as 'Class ~ .', "
            f"not {spec!r}"
        )
    if columns is None:
        raise EmptyDataError("the data has no chunk")
    columns = DomainRole.of(options).features(columns, options.weights)
    target, features = parse_formula(spec, columns)
    if target not in columns:
        raise MissingColumnError(target, "class", columns)
    for f in features:
        if f not in columns:
            raise MissingColumnError(f, "feature", columns)
    return target, features


def _discretized(source: DataSource, target: str, features: list[str], options: Options) -> tuple[DataSource, Any]:
    """The features' numeric columns cut by ``options.discretize``, fitted on the data
    with the class (MDL needs it), and the fitted discretiser (``None`` without one)."""
    if options.discretize is None:
        return source, None
    from ..data.discretize import make_discretizer  # scikit-learn, imported when first used

    transformer = make_discretizer(options.discretize, options.n_bins)
    if not source.in_memory:
        raise StructureError(
            "discretize= learns cut points from the data in memory; for data read in chunks (a file, chunks, "
            "a Dask DataFrame) discretise the numeric columns first, or pass a DataFrame"
        )
    frame = source.data
    transformer.fit(frame[features], frame[target].to_numpy())
    frame = frame.copy()
    frame[features] = transformer.transform(frame[features])
    return as_source(frame, chunksize=options.chunksize), transformer


def fit_classifier_formula(spec: Any, data: Any, estimator: Estimator, options: Options) -> FittedNetwork:
    """The model :class:`BNClassifier` builds, from a formula ``"Class ~ ."`` (or
    ``"Class ~ A + B"``): ``options.structure`` learned on ``data`` (``k``, ``root``, ...),
    numeric columns cut by ``options.discretize`` (fitted on ``data``; the network
    applies it to the data it is queried with).  ``discretize`` alone fits naive Bayes."""
    source, options = weighted_source(data, options)
    cols = source.columns()
    target, features = _formula_columns(spec, options, list(cols) if cols is not None else None)
    source, transformer = _discretized(source, target, features, options)
    if options.structure is None:  # discretize= alone: naive Bayes on the discretised frame
        dag = DAG({target: [], **{f: [target] for f in features}}, nodes=[target, *features])
        net = fit_network(dag, source, estimator, options, transformer=transformer)
    else:
        net, _, ignored = build_classifier_network(source, target, features, estimator, options)
        net.info["ignored_features"] = ignored
    net.transformer = transformer
    return net

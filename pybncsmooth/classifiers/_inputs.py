"""What :class:`~pybncsmooth.BNClassifier` checks in its inputs: data to read in chunks
or a feature matrix, text classes, the domain column, options of one structure given
to another."""

from __future__ import annotations

import inspect
import os
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_array

from ..data.sources import DataSource, is_dask_frame
from ..errors import HyperparameterError, MissingColumnError
from ..validation import PAIRWISE_NA_POLICIES
from ..estimators.base import Estimator
from .eskdb import check_n_estimators
from .skdb import refuse_em_settings

__all__ = ["check_structure_options", "split_domain"]


def _is_source(X: Any) -> bool:
    """Data to read in chunks rather than a feature matrix: a path, a Dask DataFrame, a
    function, an iterator, or a non-empty list / tuple of DataFrames."""
    if isinstance(X, (str, os.PathLike, DataSource)) or is_dask_frame(X) or callable(X):
        return True
    if isinstance(X, (list, tuple)):
        return len(X) > 0 and all(isinstance(c, pd.DataFrame) for c in X)
    return hasattr(X, "__next__")


def _nan_ok() -> dict[str, Any]:
    params = inspect.signature(check_array).parameters
    name = "ensure_all_finite" if "ensure_all_finite" in params else "force_all_finite"
    return {name: "allow-nan"}


_NAN_OK = _nan_ok()


def _is_text(y: Any) -> bool:
    arr = np.asarray(y)
    return arr.dtype.kind in "OUS"


def split_domain(X: pd.DataFrame, domain: str | None) -> tuple[pd.Series | None, pd.DataFrame]:
    """The domain column of ``X`` (index reset) and the features without it; ``(None, X)``
    without a domain.  A missing domain column is a :class:`MissingColumnError`."""
    if domain is None:
        return None, X
    if domain not in X.columns:
        raise MissingColumnError(domain, "domain", [str(c) for c in X.columns])
    return X[domain].reset_index(drop=True), X.drop(columns=domain)


def weights_by_position(sample_weight: Any, X: Any) -> Any:
    """``sample_weight`` as an array when ``X`` has no row labels (an array): the weights
    then go by position, as scikit-learn passes them; with a DataFrame ``X`` a Series is
    aligned with its rows by index."""
    return sample_weight if sample_weight is None or isinstance(X, pd.DataFrame) else np.asarray(sample_weight)


def check_structure_options(clf: Any) -> None:
    """Options of one kind of structure given to another: specific errors."""
    if clf.structure in ("skdb", "eskdb") and clf.na in PAIRWISE_NA_POLICIES:
        raise HyperparameterError(
            f'structure={clf.structure!r} does not take na="{clf.na}" (its leave-one-out selection counts complete '
            'rows): use na="level" or na="drop", or na="em" with nb, tan or kdb'
        )
    if clf.structure in ("skdb", "eskdb"):
        refuse_em_settings(clf.structure, getattr(clf, "_hyper", {}))
    if clf.structure == "eskdb":
        check_n_estimators(10 if clf.n_estimators is None else clf.n_estimators)
        if clf.root is not None:
            raise HyperparameterError("root is the root of a TAN tree; it does not apply to structure='eskdb'")
        if isinstance(clf.method, Estimator):
            raise HyperparameterError(
                "structure='eskdb' needs method as a name (each member gets an estimator of its own), "
                f"not an estimator object ({type(clf.method).__name__})"
            )
    else:
        for name, default in (("n_estimators", None), ("order_sampling", True), ("parent_sampling", True)):
            if getattr(clf, name) != default:
                raise HyperparameterError(
                    f"{name} applies to structure='eskdb' only, not structure={clf.structure!r}"
                )

"""What :class:`~pybncsmooth.BNClassifier` reads from its inputs: data to read in chunks
or a feature matrix, the classes, and the one training frame of features, class,
domain and weights that the builders count."""

from __future__ import annotations

import inspect
import os
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, column_or_1d

from ..data.sources import DataSource, is_dask_frame
from ..data.weights import WEIGHT_COLUMN, check_weights
from ..errors import DataError, SingleLevelError

__all__ = ["is_source", "feature_frame", "class_series", "training_frame", "weights_by_position"]


def is_source(X: Any) -> bool:
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


def feature_frame(X: Any) -> pd.DataFrame:
    """A data frame of the features.  Data frames pass as they are (categoricals keep
    their levels); anything else goes through scikit-learn's ``check_array`` (dense,
    2-d, at least one row and column, numbers kept as numbers: a numeric array needs
    ``discretize=``) with columns ``x0, x1, ...``."""
    if isinstance(X, pd.DataFrame):
        return X
    arr = check_array(X, accept_sparse=False, dtype=None, **_NAN_OK)
    df = pd.DataFrame(arr, columns=[f"x{i}" for i in range(arr.shape[1])])
    # an object array holding numbers is numeric data (discretisers see numbers)
    return df.infer_objects() if arr.dtype == object else df


def class_series(y: Any, n_rows: int) -> pd.Series:
    """The classes as a Series (nullable integers, booleans and Categoricals keep their
    type), checked: at least two classes, one per row of ``X``, none missing."""
    if y is None:
        raise ValueError("BNClassifier requires y to be passed, but the target y is None")
    if isinstance(y, (pd.api.extensions.ExtensionArray, pd.Index)):
        y = pd.Series(y)
    if not isinstance(y, pd.Series):
        arr = np.asarray(y)
        y = column_or_1d(np.asarray(y, dtype=object) if arr.dtype.kind in "OUS" else y, warn=True)
        check_classification_targets(y)
    y_ser = y if isinstance(y, pd.Series) else pd.Series(np.asarray(y))
    if y_ser.nunique(dropna=True) < 2:
        only = y_ser.dropna().unique()[:1].tolist()
        raise SingleLevelError(
            "y", only,
            f"y has 1 class ({only[0]!r}); a classifier needs at least two classes" if only else "y has no classes",
        )
    if len(y_ser) != n_rows:
        raise DataError(f"X has {n_rows} rows but y has {len(y_ser)}")
    if y_ser.isna().any():
        raise DataError("y has missing values; drop those rows first")
    return y_ser


def training_frame(
    Xd: pd.DataFrame, y: pd.Series, domain: tuple[str, pd.Series] | None, sw: np.ndarray | None
) -> tuple[pd.DataFrame, str, list[str], str | None]:
    """One frame of the (discretised) features, the class (a name of its own), the
    domain column and the weights column: ``(frame, target, features, weights column)``."""
    target = str(y.name) if y.name is not None else "class"
    while target in Xd.columns:
        target = "_" + target
    frame = Xd.reset_index(drop=True).copy()
    if isinstance(y.dtype, pd.CategoricalDtype):
        frame[target] = pd.Categorical(y.to_numpy(), categories=y.cat.categories)
    else:
        frame[target] = y.to_numpy()
    features = [str(c) for c in Xd.columns]
    frame.columns = [*features, target]
    if domain is not None:
        frame[domain[0]] = domain[1]
    if sw is None:
        return frame, target, features, None
    frame[WEIGHT_COLUMN] = sw
    return frame, target, features, WEIGHT_COLUMN


def weights_by_position(sample_weight: Any, X: Any, index: pd.Index) -> np.ndarray | None:
    """``sample_weight`` checked, one per row: by position when ``X`` has no row labels
    (an array, as scikit-learn passes them); with a DataFrame ``X`` a Series is aligned
    with its rows by index."""
    if sample_weight is None:
        return None
    if not isinstance(X, pd.DataFrame):
        sample_weight = np.asarray(sample_weight)
    return check_weights(sample_weight, index, "sample_weight")

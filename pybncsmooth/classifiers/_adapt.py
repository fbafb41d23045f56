"""A fitted :class:`~pybncsmooth.BNClassifier` given a domain from a few labelled rows:
every member network adapted (:meth:`FittedNetwork.adapt`), no structure learned again."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..data.discretize import apply_transformer
from ..data.weights import WEIGHT_COLUMN
from ..errors import DataError, MissingColumnError
from ..model.domains.adapt import DEFAULT_DOMAIN_NAME
from ._inputs import feature_frame, weights_by_position

__all__ = ["adapt_classifier"]


def _class_values(y: Any, n_rows: int) -> pd.Series:
    """The classes of the new rows (one class is enough: the domain's rows may all share
    one), one per row, none missing."""
    if y is None:
        raise ValueError("adapt requires y, the classes of the new rows")
    y_ser = y.reset_index(drop=True) if isinstance(y, pd.Series) else pd.Series(np.asarray(y, dtype=object))
    if y_ser.ndim != 1 or len(y_ser) != n_rows:
        raise DataError(f"X has {n_rows} rows but y has {len(y_ser)}")
    if y_ser.isna().any():
        raise DataError("y has missing values; drop those rows first")
    return y_ser


def _features(clf: Any, X: Any, column: str) -> tuple[pd.DataFrame, pd.Series | None]:
    """The fitted features of ``X`` (an array: by position) and its domain column, if any."""
    if not isinstance(X, pd.DataFrame):
        X = feature_frame(X)
        n_feat = clf.n_features_in_
        if X.shape[1] not in (n_feat, n_feat + 1):
            raise ValueError(f"X has {X.shape[1]} features, but BNClassifier is expecting {n_feat} features as input")
        X.columns = [str(c) for c in clf.feature_names_in_] + ([column] if X.shape[1] > n_feat else [])
    X = X.rename(columns=str)
    missing = [f for f in map(str, clf.feature_names_in_) if f not in X.columns]
    if missing:
        raise MissingColumnError(missing[0], "feature", [str(c) for c in X.columns])
    dom = X[column].reset_index(drop=True) if column in X.columns else None
    return X[[str(f) for f in clf.feature_names_in_]].reset_index(drop=True), dom


def _member_rows(clf: Any, feats: pd.DataFrame, y: pd.Series, dom: pd.Series | None, column: str,
                 weights: np.ndarray | None, on_unseen: str) -> pd.DataFrame:
    """The new rows as the members were fitted on: the features cut by the classifier's
    discretiser, the class under its fitted name, the domain column if given, the
    weights."""
    frame = apply_transformer(clf.discretizer_, feats, on_unseen) if clf.discretizer_ is not None else feats.copy()
    frame = frame.reset_index(drop=True)
    frame[clf.target_] = y.to_numpy()
    if dom is not None:
        frame[column] = dom.to_numpy()
    if weights is not None:
        frame[WEIGHT_COLUMN] = weights
    return frame


def adapt_classifier(clf: Any, X: Any, y: Any, domain: Any, column: str | None, sample_weight: Any,
                     on_unseen: str) -> None:
    """See :meth:`BNClassifier.adapt` (the classifier is changed in place; ``on_unseen``:
    the call's rule for feature levels unseen in training)."""
    clf._check_fitted()
    fitted = clf.options_.domain
    if fitted is not None and column is not None and column != fitted:
        raise DataError(f"the classifier's domain column is {fitted!r}, not {column!r}")
    col = fitted or column or DEFAULT_DOMAIN_NAME
    if fitted is None and col in map(str, clf.feature_names_in_):
        raise DataError(f"{col!r} is a feature of the classifier: name the domain column with column=")
    X0 = X
    if isinstance(X, pd.DataFrame) and isinstance(y, str):
        if y not in X.columns:
            raise MissingColumnError(y, "class", [str(c) for c in X.columns])
        X0, X, y = X, X.drop(columns=y), X[y]
    feats, dom = _features(clf, X, col)
    y_ser = _class_values(y, len(feats))
    sw = weights_by_position(sample_weight, X0, X.index if isinstance(X, pd.DataFrame) else feats.index)
    frame = _member_rows(clf, feats, y_ser, dom, col, sw, on_unseen)
    extra = {"weights": WEIGHT_COLUMN, "on_unseen": on_unseen} if sw is not None else {"on_unseen": on_unseen}
    discs = getattr(clf, "member_discretizers_", None) or [None] * len(clf.estimators_)
    adapted = []
    for net, disc in zip(clf.estimators_, discs):
        rows = apply_transformer(disc, frame, on_unseen) if disc is not None else frame
        adapted.append(net.adapt(rows, domain, **({} if fitted else {"column": col}), **extra))
    clf.estimators_ = adapted
    clf.network_ = adapted[0]
    if fitted is None:
        clf.options_ = clf.options_.replace(domain=col)

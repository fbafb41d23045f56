"""``BNClassifier.partial_fit``: scikit-learn's incremental contract on top of
:meth:`FittedNetwork.update`.

The first call fits the classifier on its batch, structure included (learned on that
batch, as ``fit`` learns it; the classes fixed to ``classes``); every later call
updates the CPTs of every member network (ESKDB: each member) with the batch's rows,
the structure, the features left out and the discretisers' cut points fixed by the
first call.  For the closed-form estimators ``partial_fit(A); partial_fit(B)``
therefore gives the classifier ``fit`` gives on ``A + B`` with the structure of the
first call (``BNClassifier(structure=clf.dag_)``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..data.weights import WEIGHT_COLUMN
from ..errors import DataError, MissingColumnError
from ._adapt import _class_values, _features, _member_rows
from ._inputs import is_source, weights_by_position

__all__ = ["partial_fit_classifier"]


def _split_class(X: Any, y: Any) -> tuple[Any, Any, Any]:
    """``(X as given, features, classes)``: ``y`` may name the class column of a frame."""
    if isinstance(X, pd.DataFrame) and isinstance(y, str):
        if y not in X.columns:
            raise MissingColumnError(y, "class", [str(c) for c in X.columns])
        return X, X.drop(columns=y), X[y]
    return X, X, y


def _classes(classes: Any) -> np.ndarray:
    out = np.unique(np.asarray(list(classes), dtype=object))
    if len(out) < 2:
        raise ValueError(f"classes must hold at least two classes, not {list(out)}")
    return out


def _first_call(clf: Any, X: Any, y: Any, classes: Any, sample_weight: Any) -> None:
    """Fit on the first batch, the class's levels ``classes`` (sorted, as scikit-learn's
    ``classes_``) whether or not the batch shows them all (it must show two: the
    structure is learned from it)."""
    if classes is not None:
        levels = _classes(classes)
        y_ser = pd.Series(np.asarray(y, dtype=object) if not isinstance(y, pd.Series) else y.to_numpy(dtype=object))
        unknown = sorted(set(y_ser.dropna()) - set(levels), key=str)
        if unknown:
            raise ValueError(f"y holds class {unknown[0]!r}, which is not in classes {list(levels)}")
        if y_ser.nunique(dropna=True) < 2:
            raise ValueError("partial_fit's first batch learns the structure: it needs rows of two classes or more "
                             f"(it has {list(y_ser.dropna().unique()[:1])})")
        if len(levels) and all(isinstance(v, (int, np.integer)) for v in levels):
            levels = levels.astype(np.int64)
        y = pd.Series(pd.Categorical(y_ser.to_numpy(), categories=list(levels)),
                      name=getattr(y, "name", None), index=getattr(y, "index", None))
    clf.fit(X, y, sample_weight=sample_weight)
    clf.n_batches_ = 1


def _member_seed(clf: Any, i: int) -> Any:
    rs = clf.random_state
    if rs is None or not isinstance(rs, (int, np.integer)):
        return None
    return int(np.random.SeedSequence([int(rs), getattr(clf, "n_batches_", 1), i]).generate_state(1)[0])


def partial_fit_classifier(clf: Any, X: Any, y: Any, classes: Any, sample_weight: Any) -> None:
    """See :meth:`BNClassifier.partial_fit` (the classifier is changed in place)."""
    if is_source(X):
        raise DataError(
            "partial_fit takes one batch in memory (a data frame or an array); for data read in chunks call it "
            "once per chunk, or fit(path, y=...) once"
        )
    X0, X, y = _split_class(X, y)
    if not hasattr(clf, "network_"):
        _first_call(clf, X, y, classes, sample_weight)
        return
    if classes is not None and list(_classes(classes)) != [*clf.classes_]:
        raise ValueError(f"classes {list(_classes(classes))} differ from the classes of the first call "
                         f"{list(clf.classes_)}")
    column = clf.options_.domain or "\0no domain"
    feats, dom = _features(clf, X, column)
    y_ser = _class_values(y, len(feats))
    unknown = [v for v in pd.unique(y_ser) if v not in set(clf.classes_)]
    if unknown:
        raise ValueError(f"y holds class {unknown[0]!r}, which is not in classes_ {list(clf.classes_)} (partial_fit "
                         "fixes the classes at its first call: pass them all there with classes=)")
    sw = weights_by_position(sample_weight, X0, X.index if isinstance(X, pd.DataFrame) else feats.index)
    frame = _member_rows(clf, feats, y_ser, dom, column, sw, clf.on_unseen)  # unseen feature text: on_unseen, as adapt
    extra = {"weights": WEIGHT_COLUMN} if sw is not None else {}
    discs = getattr(clf, "member_discretizers_", None) or [None] * len(clf.estimators_)
    updated = []
    for i, (net, disc) in enumerate(zip(clf.estimators_, discs)):
        rows = disc.transform(frame) if disc is not None else frame
        updated.append(net.update(rows, random_state=_member_seed(clf, i), n_jobs=clf.n_jobs, **extra))
    clf.estimators_ = updated
    clf.network_ = updated[0]
    clf.n_batches_ = getattr(clf, "n_batches_", 1) + 1

"""Cross-validated comparison of classifiers on one data set: tidy per-fold results
(:func:`evaluate`), every model on the same folds (Petitjean et al. 2018, Sec. 6.1:
five repeats of two-fold cross-validation)."""

from __future__ import annotations

import re
import time
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError, HyperparameterError, MissingColumnError, SingleLevelError, TooManyLevelsError
from ..options import Options
from ..validation import parallel_map, progress_bar
from .metrics import METRIC_FUNCS, METRICS

__all__ = ["evaluate", "categorize"]


def categorize(data: pd.DataFrame, exclude: Sequence[str] = (), integers: bool = False,
               max_levels: int | None = None) -> pd.DataFrame:
    """A copy whose text and boolean columns (and with ``integers`` the integer ones)
    are Categoricals with the levels of the whole data set, so that every
    cross-validation fold knows every level (numeric columns are left for a
    discretiser).  ``max_levels``: a column of more distinct values is refused
    (:class:`~pybncsmooth.errors.TooManyLevelsError`), as a fit refuses a column it
    reads as a node (the Categorical would pass unchecked)."""
    out = data.copy()
    for c in out.columns:
        if c in exclude:
            continue
        s = out[c]
        dt = s.dtype
        if isinstance(dt, pd.CategoricalDtype):
            continue
        text = pd.api.types.is_string_dtype(dt) or pd.api.types.is_object_dtype(dt)
        if pd.api.types.is_bool_dtype(dt) or text or (integers and pd.api.types.is_integer_dtype(dt)):
            vals = s.dropna().unique().tolist()
            try:
                levels = sorted(vals)
            except TypeError:
                levels = sorted(vals, key=str)
            if max_levels is not None and len(levels) > max_levels:
                raise TooManyLevelsError(str(c), len(levels), max_levels)
            out[c] = pd.Categorical(s, categories=levels)
    return out


def _splitter(cv: Any, random_state: Any) -> tuple[Any, int]:
    from sklearn.model_selection import RepeatedStratifiedKFold, StratifiedKFold

    if isinstance(cv, (int, np.integer)) and not isinstance(cv, bool):
        if cv < 2:
            raise HyperparameterError(f"cv = {cv}: cross-validation needs at least 2 folds")
        return StratifiedKFold(int(cv), shuffle=True, random_state=random_state), int(cv)
    if isinstance(cv, str):
        m = re.fullmatch(r"\s*(\d+)\s*(?:x\s*(\d+))?\s*", cv)
        if not m:
            raise HyperparameterError(f"cv must look like '5x2' (repeats x folds) or '10', not {cv!r}")
        if m.group(2) is None:
            folds = int(m.group(1))
            if folds < 2:
                raise HyperparameterError(f"cv = {cv!r}: cross-validation needs at least 2 folds")
            return StratifiedKFold(folds, shuffle=True, random_state=random_state), folds
        repeats, folds = int(m.group(1)), int(m.group(2))
        if folds < 2 or repeats < 1:
            raise HyperparameterError(f"cv {cv!r} needs at least 2 folds and 1 repeat")
        return RepeatedStratifiedKFold(n_splits=folds, n_repeats=repeats, random_state=random_state), folds
    if hasattr(cv, "split"):
        return cv, getattr(cv, "n_splits", 2)
    raise HyperparameterError(f"cv must be '5x2', an integer or a scikit-learn splitter, not {cv!r}")


def _check_models(models: Any) -> None:
    if not isinstance(models, Mapping):
        raise HyperparameterError(f"models must be a mapping of name -> classifier, not a {type(models).__name__}")
    if not models:
        raise HyperparameterError("no model to evaluate")
    for name, model in models.items():
        if not (hasattr(model, "fit") and hasattr(model, "predict_proba") and hasattr(model, "get_params")):
            raise HyperparameterError(
                f"model {name!r} is a {type(model).__name__}, not a scikit-learn classifier (BNClassifier(...), a "
                "pipeline, ...)"
            )


def _classes(data: pd.DataFrame, target: str, folds: int) -> tuple[list, np.ndarray]:
    """The classes (sorted) and each row's code, checked against the folds."""
    y_raw = data[target]
    if y_raw.isna().any():
        raise DataError(f"the class {target!r} has missing values; drop those rows first")
    classes = sorted(y_raw.unique().tolist(), key=lambda v: (str(type(v)), v))
    if len(classes) < 2:
        raise SingleLevelError(target, classes)
    counts = y_raw.value_counts()
    if len(data) < 2 * folds:
        raise DataError(f"{len(data)} rows are too few for {folds}-fold cross-validation (need at least {2 * folds})")
    if counts.min() < folds:
        raise DataError(
            f"class {counts.idxmin()!r} has {int(counts.min())} row(s), fewer than the {folds} folds of the "
            "stratified cross-validation"
        )
    return classes, np.asarray(pd.Categorical(y_raw, categories=classes).codes)


def _one_fit(model: Any, X: pd.DataFrame, y: pd.Series, tr: np.ndarray, te: np.ndarray, classes: list,
             y_codes: np.ndarray, metrics: Sequence[str]) -> dict[str, Any]:
    """One model fitted on a fold's training rows (a clone) and scored on its test rows."""
    from sklearn.base import clone

    est = clone(model)
    t0 = time.perf_counter()
    est.fit(X.iloc[tr], y.iloc[tr])
    t1 = time.perf_counter()
    proba = np.asarray(est.predict_proba(X.iloc[te]), dtype=np.float64)
    t2 = time.perf_counter()
    # columns of predict_proba follow est.classes_; put them in `classes` order
    full = np.zeros((len(te), len(classes)))
    pos = {c: i for i, c in enumerate(classes)}
    for j, c in enumerate(est.classes_):
        full[:, pos[c]] = proba[:, j]
    row = {m: METRIC_FUNCS[m](full, y_codes[te]) for m in metrics}
    return {**row, "fit_seconds": t1 - t0, "predict_seconds": t2 - t1}


def evaluate(
    models: Mapping[str, Any],
    data: pd.DataFrame,
    target: str,
    *,
    cv: Any = "5x2",
    metrics: Sequence[str] = ("zero_one", "rmse", "log_loss", "auc"),
    dataset: str | None = None,
    random_state: Any = 0,
    **options: Any,
) -> pd.DataFrame:
    """Cross-validate classifiers on one data set; one row per (model, fold).

    Parameters
    ----------
    models:
        Name -> scikit-learn classifier (cloned for every fold; ``BNClassifier``,
        pipelines, ...).  Each must offer ``predict_proba`` with columns in the
        order of its ``classes_``.
    data:
        Features and the ``target`` column.  Text columns become Categoricals with
        the levels of the whole data set first (see :func:`categorize`).
    cv:
        ``"5x2"`` (5 repeats of stratified 2-fold CV, Petitjean et al. 2018's protocol),
        ``"10"`` (10-fold), an integer, or a scikit-learn splitter.  Every model sees
        the same folds (drawn from ``random_state``, default 0).
    metrics:
        Any of ``zero_one``, ``rmse``, ``log_loss``, ``auc``.
    **options:
        Options of the ``evaluate`` entry point (:mod:`pybncsmooth.options`):
        ``progress`` (a bar over the fits; default: when standard error is a terminal)
        and ``n_jobs`` (fits in that many threads; the results do not depend on it).
        The classifiers carry their own options.

    Returns
    -------
    DataFrame with columns ``dataset, model, repeat, fold`` then one column per
    metric, ``fit_seconds`` and ``predict_seconds``.
    """
    opts = Options.build("evaluate", random_state=random_state, **options)
    bad = [m for m in metrics if m not in METRICS]
    if bad:
        raise HyperparameterError(f"unknown metric {bad[0]!r}; available: {', '.join(METRICS)}")
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"data must be a pandas DataFrame, not {type(data).__name__}")
    if target not in data.columns:
        raise MissingColumnError(target, "class", [str(c) for c in data.columns])
    _check_models(models)
    splitter, folds = _splitter(cv, opts.random_state)
    classes, y_codes = _classes(data, target, folds)
    data = categorize(data, exclude=[target])
    X = data.drop(columns=[target])
    y = pd.Series(pd.Categorical(data[target], categories=classes), name=target)
    tasks = [(s, tr, te, name) for s, (tr, te) in enumerate(splitter.split(X, y_codes)) for name in models]
    bar = progress_bar(opts.progress, len(tasks), dataset or "cross-validation")

    def run(task: tuple) -> dict[str, Any]:
        s, tr, te, name = task
        out = _one_fit(models[name], X, y, tr, te, classes, y_codes, metrics)
        if bar is not None:
            bar.update(1)
        return {"dataset": dataset, "model": name, "repeat": s // folds, "fold": s % folds, **out}

    try:
        rows = parallel_map(run, tasks, opts.n_jobs or 1)
    finally:
        if bar is not None:
            bar.close()
    return pd.DataFrame(rows)

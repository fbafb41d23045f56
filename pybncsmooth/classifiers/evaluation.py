"""Cross-validated comparison of classifiers: tidy per-fold results, win-draw-loss
and the two-tailed binomial sign test (paper 000 Sec. 6.1, thesis 002 Sec. 2.6).

Metrics (lower is better except AUC):

* ``zero_one``: error rate of the most probable class;
* ``rmse``: :math:`\\sqrt{\\frac1N \\sum_i \\sum_k (\\hat p_{ik} - [y_i = k])^2}`, over all
  classes (thesis 002 eq. 29; the version divided by the number of classes, used by
  some tools, is a constant multiple of it and gives the same win-draw-loss);
* ``log_loss``: :math:`-\\frac1N \\sum_i \\log \\max(\\hat p_{i y_i}, 10^{-15})`;
* ``auc``: area under the ROC curve; with more than two classes the one-vs-rest
  AUCs averaged with weights equal to the class frequencies (Provost & Domingos 2001),
  over the classes present in the test fold.
"""

from __future__ import annotations

import re
import sys
import time
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import binomtest, rankdata

from ..errors import DataError, HyperparameterError, MissingColumnError, SingleLevelError
from ..validation import check_int

__all__ = [
    "evaluate",
    "win_draw_loss",
    "sign_test",
    "METRICS",
    "zero_one_loss",
    "rmse",
    "log_loss",
    "auc",
    "categorize",
]

#: metric name -> True when higher is better
METRICS = {"zero_one": False, "rmse": False, "log_loss": False, "auc": True}


def zero_one_loss(proba: np.ndarray, y: np.ndarray) -> float:
    """Share of rows whose most probable class (first on ties) is not ``y``."""
    return float(np.mean(np.argmax(proba, axis=1) != y))


def rmse(proba: np.ndarray, y: np.ndarray) -> float:
    r""":math:`\sqrt{\frac1N \sum_i \sum_k (\hat p_{ik} - [y_i = k])^2}` (thesis 002, eq. 29)."""
    onehot = np.zeros_like(proba)
    onehot[np.arange(len(y)), y] = 1.0
    return float(np.sqrt(np.sum((proba - onehot) ** 2) / len(y)))


def log_loss(proba: np.ndarray, y: np.ndarray) -> float:
    r""":math:`-\frac1N \sum_i \log \hat p_{i y_i}`, each probability floored at ``1e-15``."""
    return float(-np.mean(np.log(np.maximum(proba[np.arange(len(y)), y], 1e-15))))


def _binary_auc(score: np.ndarray, positive: np.ndarray) -> float:
    n_pos = int(positive.sum())
    n_neg = len(positive) - n_pos
    ranks = rankdata(score)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def auc(proba: np.ndarray, y: np.ndarray) -> float:
    """ROC AUC (see the module docstring for more than two classes)."""
    K = proba.shape[1]
    present = [k for k in range(K) if 0 < np.sum(y == k) < len(y)]
    if not present:
        raise DataError("AUC needs a test set with at least two classes")
    if K == 2:
        return _binary_auc(proba[:, 1], y == 1)
    w = np.array([np.mean(y == k) for k in present])
    vals = np.array([_binary_auc(proba[:, k], y == k) for k in present])
    return float(np.sum(w * vals) / np.sum(w))


_METRIC_FUNCS = {"zero_one": zero_one_loss, "rmse": rmse, "log_loss": log_loss, "auc": auc}


def categorize(data: pd.DataFrame, exclude: Sequence[str] = ()) -> pd.DataFrame:
    """A copy whose text and boolean columns are Categoricals with the levels of the
    whole data set, so that every cross-validation fold knows every level (numeric
    columns are left for a discretiser)."""
    out = data.copy()
    for c in out.columns:
        if c in exclude:
            continue
        s = out[c]
        dt = s.dtype
        if isinstance(dt, pd.CategoricalDtype):
            continue
        if pd.api.types.is_bool_dtype(dt) or pd.api.types.is_string_dtype(dt) or pd.api.types.is_object_dtype(dt):
            vals = s.dropna().unique().tolist()
            try:
                levels = sorted(vals)
            except TypeError:
                levels = sorted(vals, key=str)
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
            return StratifiedKFold(folds, shuffle=True, random_state=random_state), folds
        repeats, folds = int(m.group(1)), int(m.group(2))
        if folds < 2 or repeats < 1:
            raise HyperparameterError(f"cv {cv!r} needs at least 2 folds and 1 repeat")
        return RepeatedStratifiedKFold(n_splits=folds, n_repeats=repeats, random_state=random_state), folds
    if hasattr(cv, "split"):
        return cv, getattr(cv, "n_splits", 2)
    raise HyperparameterError(f"cv must be '5x2', an integer or a scikit-learn splitter, not {cv!r}")


def _progress(total: int, enabled: bool | None, desc: str) -> Any:
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(total=total, desc=desc, leave=False)


def evaluate(
    models: Mapping[str, Any],
    data: pd.DataFrame,
    target: str,
    *,
    cv: Any = "5x2",
    metrics: Sequence[str] = ("zero_one", "rmse", "log_loss", "auc"),
    random_state: Any = 0,
    progress: bool | None = None,
    dataset: str | None = None,
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
        ``"5x2"`` (5 repeats of stratified 2-fold CV, paper 000's protocol), ``"10"``
        (10-fold), an integer, or a scikit-learn splitter.  Every model sees the
        same folds.
    metrics:
        Any of ``zero_one``, ``rmse``, ``log_loss``, ``auc``.
    progress:
        Progress bar over folds (default: when standard error is a terminal).

    Returns
    -------
    DataFrame with columns ``dataset, model, repeat, fold`` then one column per
    metric, ``fit_seconds`` and ``predict_seconds``.
    """
    from sklearn.base import clone

    bad = [m for m in metrics if m not in METRICS]
    if bad:
        raise HyperparameterError(f"unknown metric {bad[0]!r}; available: {', '.join(METRICS)}")
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"data must be a pandas DataFrame, not {type(data).__name__}")
    if target not in data.columns:
        raise MissingColumnError(target, "class", [str(c) for c in data.columns])
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
    y_raw = data[target]
    if y_raw.isna().any():
        raise DataError(f"the class {target!r} has missing values; drop those rows first")
    data = categorize(data, exclude=[target])
    classes = sorted(y_raw.unique().tolist(), key=lambda v: (str(type(v)), v))
    if len(classes) < 2:
        raise SingleLevelError(target, classes)
    splitter, folds = _splitter(cv, random_state)
    counts = y_raw.value_counts()
    if len(data) < 2 * folds:
        raise DataError(f"{len(data)} rows are too few for {folds}-fold cross-validation (need at least {2 * folds})")
    if counts.min() < folds:
        rare = counts.idxmin()
        raise DataError(
            f"class {rare!r} has {int(counts.min())} row(s), fewer than the {folds} folds of the "
            "stratified cross-validation"
        )
    y = pd.Categorical(y_raw, categories=classes)
    y_codes = np.asarray(y.codes)
    X = data.drop(columns=[target])
    y_ser = pd.Series(y, name=target)
    splits = list(splitter.split(X, y_codes))
    bar = _progress(len(splits) * len(models), progress, dataset or "cross-validation")
    rows = []
    for s, (tr, te) in enumerate(splits):
        for name, model in models.items():
            est = clone(model)
            t0 = time.perf_counter()
            est.fit(X.iloc[tr], y_ser.iloc[tr])
            t1 = time.perf_counter()
            proba = np.asarray(est.predict_proba(X.iloc[te]), dtype=np.float64)
            t2 = time.perf_counter()
            # columns of predict_proba follow est.classes_; put them in `classes` order
            est_classes = [c for c in est.classes_]
            full = np.zeros((len(te), len(classes)))
            pos = {c: i for i, c in enumerate(classes)}
            for j, c in enumerate(est_classes):
                full[:, pos[c]] = proba[:, j]
            row = {"dataset": dataset, "model": name, "repeat": s // folds, "fold": s % folds}
            for m in metrics:
                row[m] = _METRIC_FUNCS[m](full, y_codes[te])
            row["fit_seconds"] = t1 - t0
            row["predict_seconds"] = t2 - t1
            rows.append(row)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return pd.DataFrame(rows)


def sign_test(wins: int, losses: int, alternative: str = "two-sided") -> float:
    """Binomial sign test of ``wins`` against ``losses`` (draws excluded): two-tailed by
    default; ``alternative="greater"`` is the one-tailed test of thesis 002 (Sec. 2.6),
    :math:`P(W \\ge \\text{wins})` for :math:`W \\sim \\mathrm{Binomial}(n, 1/2)`."""
    if alternative not in ("two-sided", "greater"):
        raise HyperparameterError(f"alternative must be 'two-sided' or 'greater', not {alternative!r}")
    wins = check_int("wins", wins, low=0)
    losses = check_int("losses", losses, low=0)
    n = wins + losses
    if n == 0:
        return 1.0
    return float(binomtest(wins, n, 0.5, alternative=alternative).pvalue)


def _wilcoxon(diff: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired differences (zeros dropped;
    1.0 when none is left)."""
    d = np.asarray(diff, dtype=np.float64)
    d = d[d != 0]
    if d.size == 0:
        return 1.0
    from scipy.stats import wilcoxon

    return float(wilcoxon(d).pvalue)


def win_draw_loss(
    results: pd.DataFrame,
    model_a: str,
    model_b: str,
    metric: str = "rmse",
    *,
    by: str = "dataset",
    tol: float = 0.0,
) -> dict[str, Any]:
    """Win-draw-loss of ``model_a`` against ``model_b``.

    Results are averaged per ``by`` (``"dataset"``, or e.g. ``"fold"`` to compare
    within one data set); ``model_a`` wins a unit when its mean is better by more
    than ``tol``.  Returns ``wins``, ``draws``, ``losses``, the two-tailed sign test
    ``p_value`` (draws excluded), the one-tailed ``p_one_sided`` (``model_a`` better;
    as thesis 002 reports win-draw-loss) and ``p_wilcoxon``, the two-sided Wilcoxon
    signed-rank test of the per-unit mean differences (which also weighs by how much
    each unit is won or lost).
    """
    if metric not in METRICS:
        raise HyperparameterError(f"unknown metric {metric!r}; available: {', '.join(METRICS)}")
    for mdl in (model_a, model_b):
        if mdl not in set(results["model"]):
            raise HyperparameterError(f"model {mdl!r} is not in the results")
    res = results.copy()
    if by == "fold":
        res["_unit"] = res["repeat"].astype(str) + "/" + res["fold"].astype(str)
        if "dataset" in res.columns and res["dataset"].nunique() > 1:
            res["_unit"] = res["dataset"].astype(str) + "/" + res["_unit"]
    else:
        res["_unit"] = res[by].astype(str)
    means = res.groupby(["_unit", "model"])[metric].mean().unstack("model")
    a, b = means[model_a], means[model_b]
    ok = a.notna() & b.notna()
    diff = (a - b)[ok]
    if METRICS[metric]:
        diff = -diff
    wins = int((diff < -tol).sum())
    losses = int((diff > tol).sum())
    draws = int(ok.sum()) - wins - losses
    return {
        "wins": wins,
        "draws": draws,
        "losses": losses,
        "p_value": sign_test(wins, losses),
        "p_one_sided": sign_test(wins, losses, "greater"),
        "p_wilcoxon": _wilcoxon(diff.to_numpy()),
    }

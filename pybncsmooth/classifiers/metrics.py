"""Scores of predicted class probabilities (lower is better except AUC).

* ``zero_one``: error rate of the most probable class;
* ``rmse``: :math:`\\sqrt{\\frac1N \\sum_i \\sum_k (\\hat p_{ik} - [y_i = k])^2}`, over all
  classes (Zhang 2020, eq. 29; the version divided by the number of classes, used by
  some tools, is a constant multiple of it and gives the same win-draw-loss);
* ``log_loss``: :math:`-\\frac1N \\sum_i \\log \\max(\\hat p_{i y_i}, 10^{-15})`;
* ``auc``: area under the ROC curve; with more than two classes the one-vs-rest
  AUCs averaged with weights equal to the class frequencies (Provost & Domingos 2001),
  over the classes present in the test fold.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from ..errors import DataError

__all__ = ["METRICS", "METRIC_FUNCS", "zero_one_loss", "rmse", "log_loss", "auc"]

#: metric name -> True when higher is better
METRICS = {"zero_one": False, "rmse": False, "log_loss": False, "auc": True}


def zero_one_loss(proba: np.ndarray, y: np.ndarray) -> float:
    """Share of rows whose most probable class (first on ties) is not ``y``."""
    return float(np.mean(np.argmax(proba, axis=1) != y))


def rmse(proba: np.ndarray, y: np.ndarray) -> float:
    r""":math:`\sqrt{\frac1N \sum_i \sum_k (\hat p_{ik} - [y_i = k])^2}` (Zhang 2020, eq. 29)."""
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


METRIC_FUNCS = {"zero_one": zero_one_loss, "rmse": rmse, "log_loss": log_loss, "auc": auc}



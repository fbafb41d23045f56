"""Comparing classifiers over data sets or folds: win-draw-loss, the two-tailed and
one-tailed binomial sign tests (Petitjean et al. 2018, Sec. 6.1; Zhang 2020, Sec. 2.6)
and the Wilcoxon signed-rank test (Demsar 2006)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from ..errors import HyperparameterError
from ..validation import check_int
from .metrics import METRICS

__all__ = ["win_draw_loss", "sign_test"]


def sign_test(wins: int, losses: int, alternative: str = "two-sided") -> float:
    """Binomial sign test of ``wins`` against ``losses`` (draws excluded): two-tailed by
    default; ``alternative="greater"`` is the one-tailed test of Zhang 2020 (Sec. 2.6),
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
    as Zhang 2020 reports win-draw-loss) and ``p_wilcoxon``, the two-sided Wilcoxon
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

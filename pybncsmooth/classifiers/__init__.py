"""Bayesian network classifiers: selective kDB, the scikit-learn classifier,
discretisers and cross-validated evaluation."""

from .classifier import BNClassifier
from .discretize import EqualFrequencyDiscretizer, EqualWidthDiscretizer, MDLDiscretizer, mdl_cut_points
from .evaluation import evaluate, sign_test, win_draw_loss
from .skdb import SkdbSelection, learn_skdb

__all__ = [
    "BNClassifier",
    "learn_skdb",
    "SkdbSelection",
    "EqualWidthDiscretizer",
    "EqualFrequencyDiscretizer",
    "MDLDiscretizer",
    "mdl_cut_points",
    "evaluate",
    "win_draw_loss",
    "sign_test",
]

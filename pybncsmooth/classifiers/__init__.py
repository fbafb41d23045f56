"""Bayesian network classifiers: the scikit-learn classifier, the structure builders
(naive Bayes, TAN, kDB, selective kDB), ESKDB ensembles and cross-validated evaluation.

The discretisers live in :mod:`pybncsmooth.data.discretize` (they are data
transforms) and are re-exported here.
"""

from ..data.discretize import EqualFrequencyDiscretizer, EqualWidthDiscretizer, MDLDiscretizer, mdl_cut_points
from .builders import STRUCTURES, build_classifier_network
from .classifier import BNClassifier
from .domain_evaluation import DomainEvaluation, evaluate_domains
from .comparison import sign_test, win_draw_loss
from .crossval import evaluate
from .skdb import SkdbSelection, learn_skdb

__all__ = [
    "BNClassifier",
    "STRUCTURES",
    "build_classifier_network",
    "learn_skdb",
    "SkdbSelection",
    "EqualWidthDiscretizer",
    "EqualFrequencyDiscretizer",
    "MDLDiscretizer",
    "mdl_cut_points",
    "evaluate",
    "evaluate_domains",
    "DomainEvaluation",
    "win_draw_loss",
    "sign_test",
]

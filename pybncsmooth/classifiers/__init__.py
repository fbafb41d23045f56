"""Bayesian network classifiers: the scikit-learn classifier, the structure builders
(naive Bayes, TAN, kDB, selective kDB), ESKDB ensembles and cross-validated evaluation.

The discretisers live in :mod:`pybncsmooth.data.discretize` (they are data
transforms) and are re-exported here.  The names load their modules when first used:
a formula fit (``bs.fit("Class ~ .", df, structure="kdb")``) needs neither
scikit-learn (the classifier, the discretisers, cross-validation) nor ``scipy.stats``
(the sign test), and a script that never touches them does not pay their import.
"""

from __future__ import annotations

import importlib
from typing import Any

#: each public name and the module (relative to this package, or absolute) defining it
_WHERE = {
    "BNClassifier": ".classifier",
    "STRUCTURES": ".builders",
    "build_classifier_network": ".builders",
    "learn_skdb": ".skdb",
    "SkdbSelection": ".skdb",
    "EqualWidthDiscretizer": "pybncsmooth.data.discretize",
    "EqualFrequencyDiscretizer": "pybncsmooth.data.discretize",
    "MDLDiscretizer": "pybncsmooth.data.discretize",
    "mdl_cut_points": "pybncsmooth.data.discretize",
    "evaluate": ".crossval",
    "evaluate_domains": ".domain_evaluation",
    "DomainEvaluation": ".domain_evaluation",
    "win_draw_loss": ".comparison",
    "sign_test": ".comparison",
}

__all__ = list(_WHERE)


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(where, __name__) if where.startswith(".") else importlib.import_module(where)
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])

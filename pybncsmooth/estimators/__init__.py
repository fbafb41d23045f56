"""Estimators: context tree -> probabilities at every tree node.

In the order data flows: :mod:`.base` (the estimator protocol, its registry and the
multi-domain hooks), the shared machinery (:mod:`.posterior`, :mod:`.prior`,
:mod:`.bootstrap`, random streams, special functions, the Stirling tables, warm
starts), then a package a family: :mod:`.closed` (``mle``, ``bayes``, ``mestimate``),
:mod:`.hdp`, :mod:`.hmd`, :mod:`.hls` (``hls``, ``hls-bayes``), :mod:`.hgs` (``hgs``,
``mbranch``), and :mod:`.domains` (how a multi-domain fit pools its domains).
"""

from .base import (
    Estimator,
    TreeEstimate,
    available_methods,
    describe_methods,
    estimator_class,
    hyperparameter_names,
    make_estimator,
    method_params,
    register_estimator,
)
from .closed.classical import MLE, Bayes, MEstimate
from .hdp.estimator import HDP
from .hgs.estimator import HGS
from .hls.estimator import HLS
from .hls.bayes import HLSBayes
from .hmd.estimator import HMD
from .hgs.mbranch import MBranch

__all__ = [
    "Estimator",
    "TreeEstimate",
    "available_methods",
    "estimator_class",
    "hyperparameter_names",
    "describe_methods",
    "method_params",
    "make_estimator",
    "register_estimator",
    "MLE",
    "Bayes",
    "MEstimate",
    "HDP",
    "HMD",
    "HLS",
    "HLSBayes",
    "HGS",
    "MBranch",
]

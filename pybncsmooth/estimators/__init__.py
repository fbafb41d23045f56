"""Estimators: context tree -> probabilities at every tree node."""

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
from .classical import MLE, Bayes, MEstimate
from .hdp import HDP
from .hgs import HGS
from .hls import HLS
from .hls_bayes import HLSBayes
from .hmd import HMD
from .mbranch import MBranch

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

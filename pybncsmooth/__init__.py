"""pybncsmooth: parameters of discrete Bayesian networks and Bayesian network
classifiers with hierarchical smoothing.

The pipeline::

    DataFrame --encode--> codes + Schema --count--> ContextTree per node
              --estimate--> probabilities at every tree node --> FittedNetwork

Layout, one layer a subpackage, imports running only down this list:
``errors``/``validation`` (every argument check, hyperparameter declarations),
``data`` (schemas, encoding, data sources: a frame is a source of one chunk,
discretisers), ``structure`` (DAGs, model strings, formulas, NB/TAN/kDB learning),
``counting`` (context trees), ``estimators`` (one module per estimator and the
registry), ``model`` (CPDs, ``FittedNetwork``, the table of file formats),
``interop`` (BIF/DSC/NET/native/rds, registered in that table; the R bridge),
``pipeline`` (the fit below every front end: ``fit_network``, ``estimate_network``,
``resolve_structure``) beside ``learning`` (bnlearn's structure scores and searches, the
BHD score of related data sets, CPDAGs and SHD), ``classifiers`` (structure builders, selective kDB, ESKDB,
``BNClassifier``), ``frontends`` (``fit``, the command line).

Quick start::

    import pybncsmooth as bs
    df = bs.load_dataset("asia")
    net = bs.fit("[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]", df, method="bayes", iss=1)
    net.cpt("D")                      # numpy array, axes (D, B, E): bnlearn's layout
    net.predict_proba(df, "L")        # exact posterior of L given the other columns
    net.write("asia.bif")             # as bnlearn's write.bif
"""

from typing import TYPE_CHECKING

from ._cache import configure_numba_cache

configure_numba_cache()  # before any module compiles a kernel: caches in the user cache folder

from . import errors

# NumPy and pandas, and the reading and querying of a network (``read_network``,
# ``FittedNetwork.query``: NumPy paths, no compiled kernel), are imported with the
# package, as pyAgrum's import loads its engine: every answer is a pandas object, and
# a script's first read and queries would otherwise pay pandas' import and ours inside
# them (0.29 s against pyAgrum's 0.03 s on alarm).  The whole import stays within
# about 1.1x ``import pandas, numpy`` (benchmarks/bench_cold.py).
import numpy  # noqa: E402,F401
import pandas  # noqa: E402,F401

from .interop import read_network  # noqa: E402

#: where each public name lives: ``pybncsmooth.<name>`` imports its module when first
#: asked for (those of the reading and querying of a network are imported above), so
#: that a fresh ``import pybncsmooth`` (and the command line's ``--help``, which runs
#: this file) costs little more than ``import pandas, numpy``: the fit pipeline,
#: structure learning, SciPy, numba (the compiled kernels) wait for their first use.
#: The classifiers and the discretisers are scikit-learn estimators: a script that
#: never uses them never pays for scikit-learn.
_LAZY = {
    "ContextTree": "counting",
    "NA_LABEL": "data",
    "Schema": "data",
    "encode": "data",
    "read_table": "data",
    "list_datasets": "datasets",
    "load_dataset": "datasets",
    "Estimator": "estimators",
    "available_methods": "estimators",
    "make_estimator": "estimators",
    "fit": "frontends.api",
    "from_pgmpy": "interop",
    "from_pyagrum": "interop",
    "read_network": "interop",
    "write_network": "interop",
    "CPDAG": "learning",
    "compare": "learning",
    "cpdag": "learning",
    "hc": "learning",
    "score": "learning",
    "shd": "learning",
    "tabu": "learning",
    "FittedNetwork": "model",
    "DAG": "structure",
    "learn_structure": "structure.learning",
    "classifiers": "classifiers",
    "BNClassifier": "classifiers",
    "EqualFrequencyDiscretizer": "classifiers",
    "EqualWidthDiscretizer": "classifiers",
    "MDLDiscretizer": "classifiers",
    "evaluate": "classifiers",
    "evaluate_domains": "classifiers",
    "learn_skdb": "classifiers",
    "sign_test": "classifiers",
    "win_draw_loss": "classifiers",
}

if TYPE_CHECKING:  # the names for type checkers and editors
    from .classifiers import (BNClassifier, EqualFrequencyDiscretizer, EqualWidthDiscretizer, MDLDiscretizer,
                              evaluate, evaluate_domains, learn_skdb, sign_test, win_draw_loss)
    from .counting import ContextTree
    from .data import NA_LABEL, Schema, encode, read_table
    from .datasets import list_datasets, load_dataset
    from .estimators import Estimator, available_methods, make_estimator
    from .frontends.api import fit
    from .interop import from_pgmpy, from_pyagrum, read_network, write_network
    from .learning import CPDAG, compare, cpdag, hc, score, shd, tabu
    from .model import FittedNetwork
    from .structure import DAG
    from .structure.learning import learn_structure


def __getattr__(name: str) -> object:
    """The names of :data:`_LAZY` and the subpackages, imported on first use (then kept
    as module attributes)."""
    if name == "__version__":  # (importlib.metadata: imported when asked for)
        from importlib.metadata import PackageNotFoundError, version

        try:
            value: object = version("pybncsmooth")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            value = "0+unknown"
        globals()[name] = value
        return value
    from importlib import import_module
    from importlib.util import find_spec

    where = _LAZY.get(name)
    if where is None:  # a subpackage or module (``pybncsmooth.model``), as after an eager import
        if name.startswith("__") or find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module 'pybncsmooth' has no attribute {name!r}")
        where = name
    module = import_module(f".{where}", __name__)
    value = module if name == where else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})


def modelstring(obj: "DAG | FittedNetwork") -> str:
    """The bnlearn model string of a DAG or a fitted network."""
    if not hasattr(obj, "modelstring"):
        raise errors.StructureError(f"modelstring() takes a DAG or a fitted network, not a {type(obj).__name__}")
    return obj.modelstring()


__all__ = [
    "fit",
    "learn_structure",
    "score",
    "hc",
    "tabu",
    "cpdag",
    "shd",
    "compare",
    "CPDAG",
    "learn_skdb",
    "BNClassifier",
    "EqualWidthDiscretizer",
    "EqualFrequencyDiscretizer",
    "MDLDiscretizer",
    "evaluate",
    "evaluate_domains",
    "win_draw_loss",
    "sign_test",
    "DAG",
    "FittedNetwork",
    "ContextTree",
    "Schema",
    "NA_LABEL",
    "Estimator",
    "encode",
    "read_table",
    "read_network",
    "from_pgmpy",
    "from_pyagrum",
    "write_network",
    "modelstring",
    "available_methods",
    "make_estimator",
    "load_dataset",
    "list_datasets",
    "errors",
    "__version__",
]

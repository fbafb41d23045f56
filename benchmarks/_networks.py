"""The networks the coverage benchmarks sample from: the bnlearn repository's, as pgmpy
ships them (``pgmpy/utils/example_models/*.bif.gz``), or a file.

``load("alarm")`` reads ``alarm.bif.gz`` from pgmpy's copy of the repository when pgmpy
is importable (any environment with pgmpy 1.1.2), else
``tests/data/bnlearn/alarm.bif``; ``load("path/to/net.bif")`` reads that file.  A file
our reader refuses (``child.bif`` writes levels such as ``<7.5``) is read by pgmpy's
``BIFReader`` and converted table by table (same levels, same numbers): this needs
pgmpy, and the error says so where it is missing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

import pybncsmooth as bs
from pybncsmooth.errors import FileFormatError

ROOT = Path(__file__).resolve().parents[1]
LOCAL = ROOT / "tests" / "data" / "bnlearn"
#: the networks the done-when of the uncertainty round names
LISTED = ("alarm", "insurance", "win95pts", "andes", "child", "water", "hailfinder")


def pgmpy_models() -> Path | None:
    """pgmpy's folder of the bnlearn repository's networks, or ``None``."""
    try:
        import pgmpy
    except ImportError:
        return None
    p = Path(pgmpy.__file__).parent / "utils" / "example_models"
    return p if p.is_dir() else None


def locate(name: str) -> Path:
    """The file of a network name (or the path itself)."""
    if os.sep in name or name.endswith((".bif", ".gz", ".dsc", ".net")):
        return Path(name)
    models = pgmpy_models()
    if models is not None and (models / f"{name}.bif.gz").exists():
        return models / f"{name}.bif.gz"
    if (LOCAL / f"{name}.bif").exists():
        return LOCAL / f"{name}.bif"
    raise FileNotFoundError(f"network {name!r}: not in tests/data/bnlearn, and pgmpy (which ships the bnlearn "
                            "repository) is not importable: run with an interpreter that has pgmpy 1.1.2")


def _from_pgmpy(path: Path) -> Any:
    """A network read by pgmpy's BIF reader as a FittedNetwork of fixed tables."""
    from pgmpy.readwrite import BIFReader

    from pybncsmooth.data.schema import Schema
    from pybncsmooth.model.cpd import TableCPD
    from pybncsmooth.model.network import FittedNetwork
    from pybncsmooth.structure.dag import DAG

    if str(path).endswith(".gz"):
        import gzip

        model = BIFReader(string=gzip.open(path, "rt").read()).get_model()
    else:
        model = BIFReader(str(path)).get_model()
    nodes = list(model.nodes())
    cpds = {c.variable: c for c in model.get_cpds()}
    parents = {v: list(cpds[v].variables[1:]) for v in nodes}
    levels = {v: tuple(cpds[v].state_names[v]) for v in nodes}
    tables = {v: TableCPD(v, parents[v], np.asarray(cpds[v].values, dtype=np.float64)) for v in nodes}
    dag = DAG(parents, nodes=nodes)
    return FittedNetwork(dag, Schema(levels, frozenset(nodes)), tables, info={"source": str(path)})


def load(name: str) -> tuple[str, Any]:
    """``(short name, network)``."""
    path = locate(name)
    short = path.name.split(".")[0]
    try:
        return short, bs.read_network(path)
    except FileFormatError as e:
        try:
            return short, _from_pgmpy(path)
        except ImportError:
            raise FileFormatError(f"{e}; pgmpy, which reads it, is not importable", str(path)) from None

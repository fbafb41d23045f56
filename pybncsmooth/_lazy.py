"""Names a package gives from one of its modules, imported when first asked for.

A package that replaced a module of the same name (``pybncsmooth.estimators.hmd`` was a
module before it was a package) keeps giving that module's public names, so that
``from pybncsmooth.estimators.hmd import fit_hmd_matrix`` works as before; importing them
only when first asked for (a module ``__getattr__``, PEP 562) lets the package's own
modules import one another's internals without a cycle through the package's
``__init__``.
"""

from __future__ import annotations

import sys
from importlib import import_module
from typing import Any, Callable

__all__ = ["lazy_names"]


def lazy_names(package: str, module: str, names: list[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the package named ``package``: each of
    ``names`` is the attribute of that name of ``module`` (relative to the package, e.g.
    ``".estimator"``), imported when first read; any other name is an ``AttributeError``."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(module, package), name)

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__

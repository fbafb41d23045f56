"""Front ends: the Python API (``fit``) and the command line.  They check what the
user typed and call the fit pipeline (:mod:`pybncsmooth.pipeline`) or the classifier
builders (:mod:`pybncsmooth.classifiers`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .api import fit

__all__ = ["fit"]


def __getattr__(name: str) -> object:
    """``fit``, imported when first asked for (the command line's parser needs none of it)."""
    if name != "fit":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .api import fit

    return fit

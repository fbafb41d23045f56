"""Front ends: the Python API (``fit``) and the command line."""

from .api import fit, resolve_structure

__all__ = ["fit", "resolve_structure"]

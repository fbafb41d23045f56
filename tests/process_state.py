"""The package's process-wide caches, emptied: a test's stand-in for a fresh process.

Every ``functools`` cache of a loaded ``pybncsmooth`` module and every module-level
dictionary of cached values (a name holding ``CACHE``, and the counting's ``_PLANS``) is
cleared, so that the calls that follow see what they would see first thing in a new
process.  Caches kept on an object (a fitted network's query plans) go with the object.
"""

from __future__ import annotations

import sys

__all__ = ["clear_caches", "process_caches"]


def process_caches() -> list[tuple[str, str, object]]:
    """``(module, name, cache)`` of every process-wide cache of the loaded modules."""
    out = []
    for modname, mod in list(sys.modules.items()):
        if mod is None or not (modname == "pybncsmooth" or modname.startswith("pybncsmooth.")):
            continue
        for name, value in list(vars(mod).items()):
            if callable(getattr(value, "cache_clear", None)) and getattr(value, "__module__", None) == modname:
                out.append((modname, name, value))
            elif isinstance(value, dict) and name.startswith("_") and ("CACHE" in name or name == "_PLANS"):
                out.append((modname, name, value))
    return out


def clear_caches() -> int:
    """Empty every cache of :func:`process_caches`; returns how many there were."""
    caches = process_caches()
    for _, _, cache in caches:
        if isinstance(cache, dict):
            cache.clear()
        else:
            cache.cache_clear()
    return len(caches)

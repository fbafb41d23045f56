"""numba's ``njit``, imported when a kernel is first called.

Importing numba costs more than importing pandas and NumPy together, and a script
that reads a network and answers a few queries, or the command line's ``--help``,
may never call a compiled kernel.  So every kernel module decorates with this
module's :func:`njit` (same arguments as numba's): the decorator keeps the Python
function and returns a :class:`_Kernel`, a stand-in that imports numba and makes
the real dispatcher (``numba.njit(**options)(function)``, ``cache=True`` loading
the compiled kernel from :func:`~pybncsmooth._cache.cache_dir`) when it is first
called.

Kernels call kernels, and numba types a callee only when it is a dispatcher: when
the first kernel is called, every stand-in made so far gets its dispatcher, and in
each kernel's module every name bound to a stand-in (its own kernels and those it
imported from another module) or to a numba name (:data:`uint64`) is rebound to the
real object, so compiled code never meets a stand-in.  Python callers that
imported a stand-in keep it; it passes each call to the dispatcher (and numba,
compiling a function of another module that calls it, types it as the dispatcher).
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable

__all__ = ["njit", "uint64", "numba_module", "numba_loaded"]

#: stand-ins whose module names are not rebound yet (:func:`_bind`)
_PENDING: list["_Kernel"] = []
#: held while numba is imported and the stand-ins bound: threads that call their first
#: kernels at once (a threaded counting) wait for one binding
_LOCK = threading.RLock()


def numba_loaded() -> bool:
    """Whether a kernel was called in this process (numba imported and the kernels
    bound): a NumPy twin of a kernel, used for small inputs before this, costs a script
    that calls the kernel once far less than numba's start."""
    return _LOADED


_LOADED = False


def numba_module() -> Any:
    """numba, imported (after :func:`~pybncsmooth._cache.configure_numba_cache` pointed
    its cache at the user cache folder) and every stand-in made so far bound."""
    global _LOADED
    with _LOCK:
        import numba

        _bind(numba)
        _LOADED = True
    return numba


class _NumbaName:
    """A numba attribute (``uint64``) named in a kernel module: numba's own object
    once a kernel is called (:func:`_bind` rebinds the module's name); called from
    Python before that, it imports numba and passes the call on."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any) -> Any:
        return getattr(numba_module(), self.name)(*args)

    def __repr__(self) -> str:
        return f"<numba.{self.name}, imported when first used>"


uint64 = _NumbaName("uint64")


class _Kernel:
    """A function ``numba.njit(**options)`` compiles, the dispatcher made on first call."""

    def __init__(self, fn: Callable, options: dict[str, Any]) -> None:
        self.py_func = fn
        self.options = options
        self.dispatcher: Any = None
        functools.update_wrapper(self, fn)
        _PENDING.append(self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        d = self.dispatcher
        if d is None:
            numba_module()
            d = self.dispatcher
        return d(*args, **kwargs)

    def _make(self, numba: Any) -> Any:
        with _LOCK:
            if self.dispatcher is None:
                self.dispatcher = numba.njit(**self.options)(self.py_func)
        return self.dispatcher

    @property
    def _numba_type_(self) -> Any:
        """numba's type of the dispatcher: what numba reads of an object it cannot type,
        so a function compiled outside the package (its own ``numba.njit``) that calls a
        stand-in it imported compiles as if it had imported the dispatcher."""
        numba = numba_module()
        return numba.core.types.Dispatcher(self._make(numba))

    def __getattr__(self, name: str) -> Any:  # the dispatcher's own (signatures, overloads, ...)
        if name.startswith("__") or name in ("py_func", "options", "dispatcher"):
            raise AttributeError(name)
        return getattr(self._make(numba_module()), name)

    def __repr__(self) -> str:
        return f"<kernel {self.__module__}.{self.__qualname__}, compiled when first called>"


def _bind(numba: Any) -> None:
    """Every pending stand-in's dispatcher made, and in its module every name bound to
    a stand-in or a numba name rebound to the real object."""
    while _PENDING:
        kernel = _PENDING.pop()
        kernel._make(numba)
        space = kernel.py_func.__globals__
        for name, value in list(space.items()):
            if isinstance(value, _Kernel):
                space[name] = value._make(numba)
            elif isinstance(value, _NumbaName):
                space[name] = getattr(numba, value.name)


def njit(*args: Any, **options: Any) -> Any:
    """numba's ``njit`` (``@njit`` or ``@njit(cache=True, ...)``), made lazy: the
    function becomes a :class:`_Kernel`, compiled (or loaded from the cache) when first
    called."""
    if args and callable(args[0]) and len(args) == 1 and not options:
        return _Kernel(args[0], {})
    if args:
        raise TypeError("njit takes keyword options only (no signatures)")
    return lambda fn: _Kernel(fn, options)

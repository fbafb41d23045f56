"""Where numba keeps the compiled kernels (``cache=True``).

numba's default writes the cache next to the source files, in the installed
package's ``__pycache__`` folders.  That fails on a read-only site-packages, and the
files outlive an uninstall: after ``pip install .`` then ``pip install -e .`` the
leftover ``site-packages/pybncsmooth/`` (cache files only) is imported as a
namespace package that shadows the editable install.  So the caches go to the
user's cache folder instead:

* ``NUMBA_CACHE_DIR`` if the user set it (numba's own setting, left alone);
* else ``PYBNCSMOOTH_CACHE_DIR``;
* else the platform's user cache folder: ``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux,
  ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows, under ``pybncsmooth/numba``;
* a temporary folder when none of these is writable.

Developers: numba's cache does not notice edits to functions inlined from another
module; clear this folder (``python -c "import pybncsmooth._cache as c;
print(c.cache_dir())"`` prints it) after editing shared kernels.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

__all__ = ["cache_dir", "configure_numba_cache"]


def _platform_cache_root() -> Path:
    home = Path.home()
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    if sys.platform == "darwin":
        return home / "Library" / "Caches"
    return Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache")


def _writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
        return True
    except OSError:
        return False


def cache_dir() -> Path:
    """The folder numba caches pybncsmooth's kernels in (see the module doc)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"])
    own = os.environ.get("PYBNCSMOOTH_CACHE_DIR")
    candidates = [Path(own)] if own else []
    try:
        candidates.append(_platform_cache_root() / "pybncsmooth" / "numba")
    except RuntimeError:  # no home directory
        pass
    candidates.append(Path(tempfile.gettempdir()) / f"pybncsmooth-numba-{os.getuid() if hasattr(os, 'getuid') else 0}")
    for c in candidates:
        if _writable(c):
            return c
    return candidates[-1]


def configure_numba_cache() -> None:
    """Point numba's cache at :func:`cache_dir` unless the user chose one; called when
    pybncsmooth is imported, before any kernel is compiled."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    path = str(cache_dir())
    os.environ["NUMBA_CACHE_DIR"] = path
    if "numba" in sys.modules:  # numba read its configuration already
        from numba.core import config

        config.CACHE_DIR = path

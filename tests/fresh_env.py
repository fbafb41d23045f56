"""Fresh virtual environments for the tests that install the package, seeing the packages
of the interpreter that runs the tests.

``python -m venv --system-site-packages`` run from inside a virtual environment makes an
environment over the *base* Python's site-packages, not the running environment's: the
dependencies the tests need are then missing (or other versions).  Here the new
environment gets a ``.pth`` file listing the running interpreter's own site-packages
folders (``site.getsitepackages()``, in its order, after the new environment's own), so
that it sees the same dependencies whether the tests run from the system's Python or from
a virtual environment, and installs nothing from the network.  The folders are listed as
plain paths, so their own ``.pth`` files (an editable install of this checkout among them)
are not run: the package the new environment imports is the one installed into it."""

from __future__ import annotations

import os
import site
import subprocess
import sys
from pathlib import Path

__all__ = ["running_site_dirs", "see_running_packages", "make_venv", "clean_env"]


def running_site_dirs() -> list[str]:
    """The site-packages folders of the interpreter running the tests, in its order."""
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [d for d in dict.fromkeys(dirs) if os.path.isdir(d)]


def see_running_packages(venv: Path) -> Path:
    """Write the ``.pth`` file into ``venv``'s site-packages; returns its path."""
    py = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=120, env=clean_env(),
    ).stdout.strip()
    pth = Path(purelib) / "_pybncsmooth_tests_running_interpreter.pth"
    pth.write_text("\n".join(running_site_dirs()) + "\n")
    return pth


def make_venv(path: Path) -> Path:
    """A new virtual environment at ``path`` that sees the running interpreter's packages
    (no ``--system-site-packages``); returns its ``python``."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=300, env=clean_env())
    see_running_packages(path)
    return path / "bin" / "python"


def clean_env(**extra: str) -> dict[str, str]:
    """The environment for a process in a fresh virtual environment: no ``PYTHONPATH``
    (which would put a checkout before the installed package), no active environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(extra)
    return env

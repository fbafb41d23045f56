"""The README's two set-up commands, in order, in a fresh virtual environment, then the
package imported and the demo run from outside the repository (issue: an editable
install over a regular one was shadowed by numba cache files left in site-packages)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from fresh_env import clean_env, make_venv

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


@pytest.mark.skipif(shutil.which("Rscript") is None, reason="the second command installs R (needs apt)")
def test_readme_commands_in_order_then_import_from_elsewhere(tmp_path):
    venv = tmp_path / "venv"
    # the environment sees the running interpreter's packages (a virtual environment's
    # too, tests/fresh_env.py): the dependencies are already installed, so no downloads
    make_venv(venv)
    env = clean_env(VIRTUAL_ENV=str(venv))
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    env["PYBNCSMOOTH_CACHE_DIR"] = str(tmp_path / "cache")  # a cold cache, like a new user
    env.pop("NUMBA_CACHE_DIR", None)

    def run(cmd: str, cwd: Path) -> subprocess.CompletedProcess:
        out = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=1200)
        assert out.returncode == 0, f"{cmd}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
        return out

    # README, first command (the demo compiles and caches every kernel)
    run("python3 -m pip install -q . && pybncsmooth demo --repeats 1", ROOT)
    site = run("python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'", tmp_path).stdout.strip()
    # no compiled caches inside the installed package
    assert not list((Path(site) / "pybncsmooth").rglob("*.nbi"))
    # README, second command's install step (the test run itself is this suite)
    run("bash .ci/install", ROOT)
    out = run("python3 -c 'import pybncsmooth.frontends, pybncsmooth; print(pybncsmooth.__file__)'", tmp_path)
    assert str(ROOT) in out.stdout
    demo = run("pybncsmooth demo --repeats 1", tmp_path)
    assert "no estimator is named best" in demo.stdout

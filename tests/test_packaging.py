"""The package as users get it: a wheel and an sdist that ``twine check`` accepts, whose
wheel installs into a fresh virtual environment and runs the demo on the bundled data.

The virtual environment sees the dependencies of the interpreter running the tests (the
system's Python or a virtual environment alike: ``tests/fresh_env.py``), so installing
needs no network (building does: ``python -m build`` fetches setuptools into its isolated
build environment from PyPI); the wheel is installed with ``--no-deps`` and the test checks
that the package imported is the wheel's, not the development checkout's, and that its
dependencies are the running interpreter's."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from fresh_env import clean_env, make_venv, running_site_dirs

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("build")
pytest.importorskip("twine")


def _version() -> str:
    """The version, from its one place: ``pyproject.toml``."""
    m = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert m, "pyproject.toml has no version"
    return m.group(1)


def _tracked_copy(dest: Path) -> Path:
    """The files git tracks or would track (working-tree versions) copied to ``dest``: a build there
    leaves no ``build/`` or ``*.egg-info`` in the checkout."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout")
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for rel in files.splitlines():
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    src = _tracked_copy(tmp_path_factory.mktemp("src"))
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(src)], capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return out


def test_wheel_and_sdist_pass_twine_and_carry_the_data(dist):
    version = _version()
    wheel = dist / f"pybncsmooth-{version}-py3-none-any.whl"
    sdist = dist / f"pybncsmooth-{version}.tar.gz"
    assert wheel.exists() and sdist.exists(), sorted(p.name for p in dist.iterdir())
    check = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
                           capture_output=True, text=True, timeout=300)  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    names = zipfile.ZipFile(wheel).namelist()
    for data in ("asia", "housevotes84", "learning_test"):
        assert f"pybncsmooth/datasets/files/{data}.csv.gz" in names
    assert any(n.endswith("/licenses/LICENSE") for n in names)
    with tarfile.open(sdist) as tar:
        members = tar.getnames()
    assert f"pybncsmooth-{version}/pybncsmooth/datasets/files/asia.csv.gz" in members
    assert f"pybncsmooth-{version}/LICENSE" in members


def test_the_wheel_runs_the_demo_from_a_fresh_virtual_environment(dist, tmp_path):
    wheel = next(dist.glob("*.whl"))
    venv = tmp_path / "venv"
    py = make_venv(venv)
    env = clean_env()
    inst = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", str(wheel)],
                          capture_output=True, text=True, timeout=600, env=env)  # fmt: skip
    assert inst.returncode == 0, inst.stderr[-2000:]
    where = subprocess.run(
        [str(py), "-c", "import numpy, pybncsmooth; print(pybncsmooth.__file__, pybncsmooth.__version__, numpy.__file__)"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env,
    )
    assert where.returncode == 0, where.stderr[-2000:]
    path, version, numpy_path = where.stdout.split()
    assert Path(path).is_relative_to(venv), path  # the wheel's copy, not the checkout
    assert version == _version()
    # the dependencies are the running interpreter's (from a virtual environment too)
    assert any(Path(numpy_path).is_relative_to(d) for d in running_site_dirs()), numpy_path
    demo = subprocess.run([str(venv / "bin" / "pybncsmooth"), "demo", "--repeats", "1"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=900, env=env)  # fmt: skip
    assert demo.returncode == 0, demo.stderr[-2000:]
    assert "pybncsmooth demo: asia" in demo.stdout and "no estimator is named best" in demo.stdout

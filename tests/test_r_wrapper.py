"""The R package in r-wrapper/: its testthat suite and R CMD check, run against this
Python (RETICULATE_PYTHON = the interpreter running the tests)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fresh_env import clean_env, running_site_dirs, see_running_packages

ROOT = Path(__file__).resolve().parents[1]
WRAPPER = ROOT / "r-wrapper"

pytestmark = pytest.mark.r


def _r_ready() -> bool:
    if shutil.which("Rscript") is None:
        return False
    probe = subprocess.run(
        ["Rscript", "-e", "library(reticulate); library(testthat); library(bncsmooth)"],
        capture_output=True,
        text=True,
    )
    return probe.returncode == 0


needs_r = pytest.mark.skipif(not _r_ready(), reason="R with reticulate, testthat and bncsmooth is not installed")


def _env() -> dict:
    env = dict(os.environ)
    env["RETICULATE_PYTHON"] = sys.executable
    return env


@needs_r
def test_testthat_suite_passes():
    code = (
        "library(testthat); library(bncsmooth); "
        "r <- as.data.frame(test_dir('testthat', reporter = 'silent', stop_on_failure = FALSE)); "
        "cat('RESULT', sum(r$failed), sum(r$error), sum(r$skipped), sum(r$nb), '\\n')"
    )
    out = subprocess.run(
        ["Rscript", "-e", code], cwd=WRAPPER / "tests", capture_output=True, text=True, env=_env(), timeout=900
    )
    assert out.returncode == 0, out.stdout + out.stderr
    line = [l for l in out.stdout.splitlines() if l.startswith("RESULT")][-1]
    failed, errors, skipped, expectations = map(int, line.split()[1:])
    assert failed == 0 and errors == 0, out.stdout
    assert expectations >= 100  # the suite really ran (its expectations, not just its files)
    assert skipped <= 1  # only the bnlearn test skips, where bnlearn is absent


@needs_r
def test_r_cmd_check_has_no_error_or_warning(tmp_path):
    build = subprocess.run(
        ["R", "CMD", "build", "--no-build-vignettes", str(WRAPPER)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    tarball = next(tmp_path.glob("bncsmooth_*.tar.gz"))
    check = subprocess.run(
        ["R", "CMD", "check", "--no-manual", tarball.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=1200,
    )
    log = check.stdout + check.stderr
    status = [l for l in log.splitlines() if l.startswith("Status:")]
    assert status, log
    assert "ERROR" not in status[-1] and "WARNING" not in status[-1], log
    assert "checking examples ... OK" in log and "checking tests ..." in log


@needs_r
def test_bncs_install_makes_the_environment_the_package_then_finds(tmp_path):
    # bncs.install(): a virtual environment with pybncsmooth in it (here from this source
    # folder, without its dependencies); to keep the test short and offline the environment
    # then sees the running interpreter's packages (tests/fresh_env.py: the system's Python
    # or a virtual environment alike); a new R session then finds the environment by itself
    env = clean_env()
    for name in ("RETICULATE_PYTHON", "BNCSMOOTH_PYTHON"):
        env.pop(name, None)
    env["RETICULATE_VIRTUALENV_ROOT"] = env["WORKON_HOME"] = str(tmp_path / "venvs")
    install = (
        f'bncsmooth::bncs.install(package = "{ROOT}", python = "{sys.executable}", extras = character(), '
        'pip_options = c("--no-deps", "--ignore-installed", "--quiet"))'
    )
    out = subprocess.run(["Rscript", "-e", install], capture_output=True, text=True, env=env, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Restart R: library(bncsmooth) then finds it by itself" in out.stderr
    venv = tmp_path / "venvs" / "r-bncsmooth"
    assert (venv / "bin" / "python").exists()
    see_running_packages(venv)
    check = (
        "library(bncsmooth); stopifnot(bncs.available()); "
        "cat('PY', reticulate::py_config()$python, '\\n'); "
        "cat('FILE', reticulate::py_to_r(bncs.python()$`__file__`), '\\n'); "
        "cat('PANDAS', reticulate::py_to_r(reticulate::import('pandas', convert = FALSE)$`__file__`), '\\n')"
    )
    # run away from this checkout: an embedded Python puts the working directory on its path
    out = subprocess.run(["Rscript", "-e", check], capture_output=True, text=True, env=env, timeout=300,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    py = [l for l in out.stdout.splitlines() if l.startswith("PY")][0].split(maxsplit=1)[1].strip()
    assert py.startswith(str(venv)), py
    where = [l for l in out.stdout.splitlines() if l.startswith("FILE")][0].split(maxsplit=1)[1].strip()
    assert where.startswith(str(venv)), where  # the environment's own copy, not this checkout
    # a dependency (reticulate's virtualenv_create installs numpy itself; pandas it does not)
    pandas_path = [l for l in out.stdout.splitlines() if l.startswith("PANDAS")][0].split(maxsplit=1)[1].strip()
    assert any(pandas_path.startswith(d) for d in running_site_dirs()), pandas_path
    out = subprocess.run(["Rscript", "-e", 'bncsmooth::bncs.install(package = "")'], capture_output=True,
                         text=True, env=env, timeout=120)
    assert out.returncode != 0 and "package must be one requirement" in out.stderr

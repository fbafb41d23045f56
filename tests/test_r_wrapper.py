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


# the testthat files that use bnlearn where it is installed (and skip those checks where not)
_BNLEARN_FILES = sorted(p.name for p in (WRAPPER / "tests" / "testthat").glob("test-*.R") if "bnlearn" in p.read_text())


def _r_has(package: str, env: dict) -> bool:
    probe = subprocess.run(["Rscript", "-e", f'quit(status = !requireNamespace("{package}", quietly = TRUE))'],
                           capture_output=True, text=True, env=env)
    return probe.returncode == 0


def _library_without(package: str, lib: Path) -> dict:
    """An environment whose R sees every installed package but ``package``: a library of
    links to the others (the first of each name in R's search order), the site and user
    libraries pointed at it, R's Renviron files (which add the site libraries back) unread."""
    paths = subprocess.run(["Rscript", "-e", "cat(.libPaths(), sep = '\\n')"], capture_output=True, text=True,
                           env=_env(), check=True).stdout.split()
    lib.mkdir()
    for path in paths[:-1]:  # the last one is R's own library (.Library), always searched
        for pkg in Path(path).iterdir():
            if pkg.name != package and (pkg / "DESCRIPTION").exists() and not (lib / pkg.name).exists():
                (lib / pkg.name).symlink_to(pkg)
    env = _env()
    empty = lib.parent / "Renviron"
    empty.write_text("")
    env.update(R_LIBS=str(lib), R_LIBS_USER=str(lib), R_LIBS_SITE=str(lib),
               R_ENVIRON=str(empty), R_ENVIRON_SITE=str(empty), R_ENVIRON_USER=str(empty))
    return env


@needs_r
@pytest.mark.parametrize("bnlearn", ["as installed", "hidden"])
def test_testthat_suite_passes(bnlearn, tmp_path):
    """The R package's testthat suite passes with bnlearn installed (no test skips) and on
    a machine without it (CRAN not reachable): only the checks that call bnlearn skip,
    each saying so. Without bnlearn only the files that use it run again."""
    env, files = _env(), None
    if bnlearn == "hidden":
        env, files = _library_without("bnlearn", tmp_path / "lib"), _BNLEARN_FILES
        if _r_has("bnlearn", env):
            pytest.skip("bnlearn is in R's own library, which cannot be left out of the search path")
        assert files and _r_has("bncsmooth", env) and _r_has("testthat", env)
    has_bnlearn = _r_has("bnlearn", env)
    select = "NULL" if files is None else "'^(" + "|".join(f[5:-2] for f in files) + ")$'"
    code = (
        "library(testthat); library(bncsmooth); "
        f"res <- test_dir('testthat', filter = {select}, reporter = 'silent', stop_on_failure = FALSE); "
        "r <- as.data.frame(res); "
        "for (t in res) for (e in t$results) if (inherits(e, 'expectation_skip')) "
        "cat('SKIP', t$file, t$test, ':', conditionMessage(e), '\\n'); "
        "cat('RESULT', sum(r$failed), sum(r$error), sum(r$skipped), sum(r$nb), '\\n')"
    )
    out = subprocess.run(
        ["Rscript", "-e", code], cwd=WRAPPER / "tests", capture_output=True, text=True, env=env, timeout=900
    )
    assert out.returncode == 0, out.stdout + out.stderr
    line = [l for l in out.stdout.splitlines() if l.startswith("RESULT")][-1]
    failed, errors, skipped, expectations = map(int, line.split()[1:])
    assert failed == 0 and errors == 0, out.stdout
    assert expectations >= (100 if files is None else 50)  # the suite really ran (its expectations, not just its files)
    skips = [l.strip() for l in out.stdout.splitlines() if l.startswith("SKIP")]
    assert len(skips) == skipped, out.stdout
    if has_bnlearn:
        assert skipped == 0, skips
    else:  # every skip is a bnlearn check, and each file that uses bnlearn skipped some
        assert skips and all(l.endswith("bnlearn cannot be loaded") for l in skips), skips
        assert {l.split()[1] for l in skips} == set(_BNLEARN_FILES), skips


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

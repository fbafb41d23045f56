"""The R package in r-wrapper/: its testthat suite and R CMD check, run against this
Python (RETICULATE_PYTHON = the interpreter running the tests)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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

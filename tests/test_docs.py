"""The documentation site (docs/) builds with warnings as errors: a broken reference, a
docstring Sphinx cannot parse or a page left out of the tree fails the suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import pybncsmooth as bs
import pybncsmooth.estimators as est

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")


def test_docs_build_with_warnings_as_errors(tmp_path):
    html = tmp_path / "html"
    out = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html", "docs", str(html)],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    gen = html / "generated"
    # every public name has its page (the errors module documents its classes on the API page)
    public = [n for n in bs.__all__ if n not in ("errors", "__version__")] + list(est.__all__)
    missing = [n for n in public if not (gen / f"pybncsmooth.{n}.html").exists()
               and not (gen / f"pybncsmooth.estimators.{n}.html").exists()]
    assert not missing, missing
    api = (html / "api.html").read_text()
    assert all(f"pybncsmooth.errors.{n}" in api for n in bs.errors.__all__)
    # the user guide's pages and every vignette as an example, with its recorded output
    for page in ("getting_started", "guide/estimators", "guide/multidomain", "guide/data", "guide/r"):
        assert (html / f"{page}.html").stat().st_size > 5000, page
    for v in sorted((ROOT / "vignettes").glob("[0-9][0-9]_*.py")):
        assert (html / "examples" / f"{v.stem}.html").exists(), v.name
    fit_page = (gen / "pybncsmooth.fit.html").read_text()
    assert "em_draws" in fit_page and "Parameters" in fit_page

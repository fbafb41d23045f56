"""Sphinx configuration of pybncsmooth's documentation site.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (the test suite builds it with
warnings as errors, ``tests/test_docs.py``).  The theme is furo (the ``docs`` extra).  The
examples are the vignettes' recorded runs (``vignettes/*.md``, written by
``vignettes/run.py``) and their figures, copied in at build time."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pybncsmooth

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE / "_ext"))

project = "pybncsmooth"
author = "pybncsmooth developers"
copyright = "2026, pybncsmooth developers"
release = version = pybncsmooth.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "myst_parser",
    "tablecells",  # a Markdown table row that loses cells to an unescaped '|' is a warning
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "generated/*.md", "_ext"]
templates_path = ["_templates"]

# API reference from the numpydoc docstrings
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True  # a dataclass's "Attributes" as fields: autodoc documents the members themselves

# Markdown pages (the guide, the recorded vignettes)
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
# The vignettes' sections may jump a level below the page's title: intended, not a
# broken structure
suppress_warnings = ["myst.header"]

html_theme = "furo"
html_title = f"pybncsmooth {release}"
# furo's light and dark palettes, with its defaults for everything else
html_theme_options = {"navigation_with_keys": True}
pygments_style = "friendly"
pygments_dark_style = "monokai"


def _skip_foreign(app, what, name, obj, skip, options):  # noqa: ARG001 - Sphinx's signature
    """Leave out what scikit-learn's base classes add to ours (``score``, the metadata
    routing's ``set_*_request``): documented by scikit-learn, in its own glossary's terms."""
    module = getattr(obj, "__module__", None) or ""
    if module.startswith("sklearn") or (name.startswith("set_") and name.endswith("_request")):
        return True
    return None


def setup(app) -> None:
    app.connect("autodoc-skip-member", _skip_foreign)


def _copy_examples() -> None:
    """The vignettes' recorded runs (code and output) and their figures, as the examples."""
    out = HERE / "examples"
    out.mkdir(exist_ok=True)
    for md in sorted((ROOT / "vignettes").glob("[0-9][0-9]_*.md")):
        shutil.copyfile(md, out / md.name)
    figs = ROOT / "vignettes" / "figures"
    if figs.is_dir():
        shutil.copytree(figs, out / "figures", dirs_exist_ok=True)


_ENTRY_NAMES = {"fit": "fit", "classifier": "BNClassifier", "evaluate": "evaluate",
                "evaluate_domains": "evaluate_domains", "adapt": "adapt"}


def _options_table() -> None:
    """The options of a fit as a Markdown table, from their declarations in
    :mod:`pybncsmooth.options` (the guide includes it: one source for code and docs)."""
    import dataclasses

    from pybncsmooth.options import Options

    rows = ["| option | default | taken by | what it does |", "|---|---|---|---|"]
    for f in dataclasses.fields(Options):
        spec = f.metadata.get("spec")
        if spec is None:
            continue
        default = "; ".join(f"`{v!r}` ({_ENTRY_NAMES.get(e, e)})" for e, v in spec.defaults.items())
        default = default or f"`{f.default!r}`"
        entries = ", ".join(f"`{_ENTRY_NAMES.get(e, e)}`" for e in spec.entries)
        doc = spec.doc.replace("|", "\\|")
        rows.append(f"| `{f.name}` | {default} | {entries} | {doc} |")
    out = HERE / "generated"
    out.mkdir(exist_ok=True)
    (out / "options.md").write_text("\n".join(rows) + "\n")


_copy_examples()
_options_table()

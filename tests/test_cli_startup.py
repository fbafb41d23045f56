"""The command line starts without the package's weight: ``--help`` of the command and
of each subcommand, and ``--version``, build the parser from the written-out rows of
:mod:`pybncsmooth.frontends._cli_specs` and import neither pandas nor NumPy; those rows
equal their sources (the estimators' registry, the option declarations)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pybncsmooth.estimators import available_methods
from pybncsmooth.frontends import _cli_specs
from pybncsmooth.options import ENTRY_POINTS, option_specs

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ["fit", "learn", "update", "predict", "query", "evaluate", "info", "options", "methods", "demo"]
#: imported by a command, never by its parser
HEAVY = ("pandas", "numpy", "numba", "scipy", "sklearn", "pybncsmooth.options", "pybncsmooth.estimators",
         "pybncsmooth.data", "pybncsmooth.model", "pybncsmooth.frontends.api")


def _run_main(argv: list[str]) -> tuple[int, str, set[str]]:
    """Exit status, standard output and the modules held after ``main(argv)`` in a fresh
    interpreter (this checkout's package)."""
    code = ("import json, sys\nfrom pybncsmooth.frontends.cli import main\n"
            f"try:\n    rc = main({argv!r})\nexcept SystemExit as e:\n    rc = e.code\n"
            "print(json.dumps([rc, sorted(sys.modules)]), file=sys.stderr)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    rc, modules = json.loads(out.stderr.splitlines()[-1])
    return rc, out.stdout, set(modules)


@pytest.mark.parametrize("argv", [["--help"], ["--version"]] + [[c, "--help"] for c in COMMANDS])
def test_help_and_version_leave_pandas_and_numpy_unimported(argv):
    rc, out, modules = _run_main(argv)
    assert rc == 0
    assert out.startswith("usage: pybncsmooth") or out.startswith("pybncsmooth "), out[:200]
    assert not [m for m in HEAVY if m in modules], sorted(m for m in HEAVY if m in modules)


def test_a_command_still_imports_what_it_runs():
    """The check above can fail: running a command (here ``options``) imports the declarations."""
    rc, out, modules = _run_main(["options"])
    assert rc == 0 and "random_state  [seed;" in out
    assert {"numpy", "pybncsmooth.options"} <= modules


def test_the_written_methods_are_the_registry():
    assert _cli_specs.METHODS == tuple(available_methods()), \
        "rewrite pybncsmooth/frontends/_cli_specs.py: python -m pybncsmooth.frontends._cli_specs"


@pytest.mark.parametrize("entry", ["fit", "update", "evaluate"])
def test_the_written_option_flags_are_the_declarations(entry):
    assert _cli_specs.OPTION_FLAGS[entry] == _cli_specs.option_flags(entry), \
        "rewrite pybncsmooth/frontends/_cli_specs.py: python -m pybncsmooth.frontends._cli_specs"
    assert [row[0] for row in _cli_specs.OPTION_FLAGS[entry]] == list(option_specs(entry))
    assert entry in ENTRY_POINTS


def test_the_written_file_is_what_its_writer_writes():
    """The file as committed equals a fresh rewrite: nothing edited by hand, nothing stale."""
    assert Path(_cli_specs.__file__).read_text() == _cli_specs._source()

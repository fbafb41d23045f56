"""The command line starts without the package's weight: ``--help`` of the command and
of each subcommand, and ``--version``, build the parser from the written-out rows of
:mod:`pybncsmooth.frontends._cli_specs` and import nothing beyond what ``import
pybncsmooth`` imports (NumPy, pandas and the reading and querying of a network: a
script's first read and query are then no slower than pyAgrum's) and the command line's
own modules: not the fit pipeline, the estimators' fitting, numba, SciPy or
scikit-learn; those rows equal their sources (the estimators' registry, the option
declarations)."""

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
HEAVY = ("numba", "scipy", "sklearn", "pybncsmooth.frontends.api", "pybncsmooth.pipeline", "pybncsmooth.classifiers",
         "pybncsmooth.learning", "pybncsmooth.structure.learning")
#: the command line's own modules, beside what ``import pybncsmooth`` imports
CLI_MODULES = {"pybncsmooth.frontends", "pybncsmooth.frontends.cli", "pybncsmooth.frontends.cli_options",
               "pybncsmooth.frontends._cli_specs"}


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
    own = {m for m in modules if m.startswith("pybncsmooth")}
    assert own - CLI_MODULES <= _package_modules(), sorted(own - CLI_MODULES - _package_modules())


def _package_modules() -> set[str]:
    """The package's modules a fresh ``import pybncsmooth`` holds."""
    code = "import json, sys\nimport pybncsmooth\nprint(json.dumps(sorted(sys.modules)), file=sys.stderr)"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return {m for m in json.loads(out.stderr.splitlines()[-1]) if m.startswith("pybncsmooth")}


def test_a_command_still_imports_what_it_runs(tmp_path):
    """The check above can fail: running a command (here ``fit`` of a small file)
    imports the fit pipeline."""
    data = tmp_path / "d.csv"
    data.write_text("A,B\na,x\nb,y\na,y\nb,x\n")
    rc, out, modules = _run_main(["fit", str(data), "-s", "[A][B|A]", "-o", str(tmp_path / "n.bif")])
    assert rc == 0 and (tmp_path / "n.bif").exists()
    assert {"pybncsmooth.frontends.api", "pybncsmooth.pipeline"} <= modules


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

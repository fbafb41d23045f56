"""The BIF reader's quick path (one compiled pass over a small plain file) gives what the
general reader gives, table for table and byte for byte, and leaves every other form and
every error to the general reader (its messages and lines unchanged)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from pybncsmooth.errors import FileFormatError
from pybncsmooth.interop.bif import format as bif_module
from pybncsmooth.interop.bif._quick import quick_parts
from pybncsmooth.interop.io import read_text
from conftest import BNLEARN, DATA


def _general(text, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(bif_module, "quick_parts", lambda text, path: None)
        return bif_module.parse_bif(text, "x.bif")


def _assert_same(quick, general):
    assert quick is not None
    assert list(quick.levels) == list(general.levels) and quick.levels == general.levels
    assert list(quick.parents) == list(general.parents) and quick.parents == general.parents
    assert quick.checked and quick.format == "bif"
    for node, want in general.tables.items():
        got = quick.tables[node]
        assert got.shape == want.shape and got.strides == want.strides
        assert got.tobytes() == want.tobytes()  # the same doubles, laid out alike


@pytest.mark.parametrize("path", [BNLEARN / "asia.bif", BNLEARN / "alarm.bif", BNLEARN / "insurance.bif",
                                  DATA / "repository" / "child.bif.gz"])
def test_the_quick_path_reads_the_fixtures_as_the_general_reader(path, monkeypatch):
    text = read_text(str(path))
    _assert_same(quick_parts(text, "x.bif"), _general(text, monkeypatch))
    net = bif_module.read_bif(str(path))  # and the reader takes it
    assert net.max_abs_diff(_general(text, monkeypatch).network()) == 0.0


HEAD = "network unknown {\n}\n"
A = "variable A {\n  type discrete [ 3 ] { <7.5, >=7.5, a b };\n}\n"
B = "variable B {\n  type discrete [ 2 ] = { yes, no };\n}\n"
PA = "probability ( A ) {\n  table 0.2, 0.3, 0.5;\n}\n"
PB = "probability ( B | A ) {\n  (>=7.5) 0.4, 0.6;\n  (<7.5) 0.1 0.9;\n  (a b) 0.25, 0.75;\n}\n"

PLAIN = {
    "levels with signs and spaces, rows out of order": HEAD + A + B + PA + PB,
    "windows line ends and tabs": (HEAD + A + B + PA + PB).replace("\n", "\r\n").replace("  ", "\t"),
    "tables before declarations, semicolons between blocks": HEAD + PB + ";" + PA + A + ";\n" + B,
    "a table row for a node with parents": HEAD + A + B + PA
    + "probability ( B | A ) {\n  table 0.1, 0.4, 0.25, 0.9, 0.6, 0.75;\n}\n",
    "a table row then a configuration row": HEAD + A + B + PA
    + "probability ( B | A ) {\n  table 0.1, 0.4, 0.25, 0.9, 0.6, 0.75;\n  (a b) 0.5, 0.5;\n}\n",
    "two parents, sums renormalised": HEAD + A + B + PA + "variable C {\n  type discrete [ 2 ] { c1, c2 };\n}\n"
    + PB + "probability ( C | B, A ) {\n" + "".join(f"  ({b}, {a}) 0.3, 0.705;\n" for a in ("<7.5", ">=7.5", "a b")
                                                   for b in ("yes", "no")) + "}\n",
}


@pytest.mark.parametrize("case", list(PLAIN))
def test_the_quick_path_reads_plain_variants_as_the_general_reader(case, monkeypatch):
    text = PLAIN[case]
    _assert_same(quick_parts(text, "x.bif"), _general(text, monkeypatch))


OTHER = {
    "quoted level": HEAD + A.replace("a b", '"a b"') + B + PA + PB,
    "comment": "// made by hand\n" + HEAD + A + B + PA + PB,
    "default row": HEAD + A + B + PA + "probability ( B | A ) {\n  default 0.5, 0.5;\n  (a b) 0.25, 0.75;\n}\n",
    "property": HEAD + A + B + PA.replace("{\n", "{\n  property x;\n") + PB,
    "levels separated by spaces": HEAD + A + B.replace("yes, no", "yes no") + PA + PB,
    "old header": HEAD + A + B + PA + PB.replace("B | A", "B A"),
    "sanitised label": HEAD + A.replace("a b", "a#b") + B + PA + PB.replace("(a b)", "(a_b)"),
    "many digits": HEAD + A + B + PA.replace("0.2, 0.3, 0.5", "0.2000000000000000001, 0.3, 0.5") + PB,
    # issue 56 case 16: once refused ("expected 'variable' or 'probability'")
    "no blank before the parenthesis": HEAD + A + B + PA.replace("probability ( A )", "probability(A)") + PB,
}


@pytest.mark.parametrize("case", list(OTHER))
def test_other_forms_are_left_to_the_general_reader(case):
    text = OTHER[case]
    assert quick_parts(text, "x.bif") is None
    assert bif_module.parse_bif(text, "x.bif").tables["B"].shape == (2, 3)  # which reads them


BAD = [
    HEAD + A + A + B + PA + PB,  # declared twice
    HEAD + A + B + PA + PB + PA,  # two tables
    HEAD + A + B + PA,  # no table
    HEAD + A + B + PA + PB.replace("(a b)", "(c)"),  # not a level
    HEAD + A + B + PA + PB.replace("(a b) 0.25", "(a b) 0.5, 0.25"),  # a number too many
    HEAD + A + B + PA.replace("0.5;", "0.6;") + PB,  # sums to 1.1
    HEAD + A + B + PA.replace("0.5;", "-0.5;") + PB,  # negative
    HEAD + A + B + PA + PB.replace("B | A", "B | A, A"),  # a parent twice
    HEAD + A + B + PA + PB.replace("B | A", "B | Z"),  # an undeclared parent
    HEAD + A.replace("a b", "a, a") + B + PA + PB,  # a level twice
    HEAD + A + B + PA + PB.replace("0.1 0.9;", "0.1 0.9"),  # no ';'
    HEAD + A + B + PA + PB + "}\n",  # unbalanced
    HEAD + A.replace("[ 3 ]", "[ 4 ]") + B + PA + PB,  # levels miscounted
    HEAD + A + B.replace("discrete", "continuous") + PA + PB,
    HEAD + A + B + PA + PB + "junk\n",
]


@pytest.mark.parametrize("text", BAD)
def test_files_with_errors_are_reported_by_the_general_reader(text, monkeypatch):
    assert quick_parts(text, "x.bif") is None
    with pytest.raises(FileFormatError) as quick_or_not:
        bif_module.parse_bif(text, "x.bif")
    with pytest.raises(FileFormatError) as general:
        _general(text, monkeypatch)
    assert str(quick_or_not.value) == str(general.value) and quick_or_not.value.line == general.value.line


def test_the_repository_files_read_as_the_general_reader_reads_them(monkeypatch):
    """Every file pgmpy ships (a benchmark venv): the quick path takes the small ones."""
    pgmpy = pytest.importorskip("pgmpy")
    folder = Path(pgmpy.__file__).parent / "utils" / "example_models"
    taken = []
    for gz in sorted(folder.glob("*.bif.gz")):
        with gzip.open(gz, "rt") as fh:
            text = fh.read()
        quick = quick_parts(text, "x.bif")
        if quick is not None:
            _assert_same(quick, _general(text, monkeypatch))
            taken.append(gz.name[: -len(".bif.gz")])
    assert {"asia", "cancer", "earthquake", "survey", "sachs", "alarm", "child", "win95pts"} <= set(taken)


CYCLE = (HEAD + A + B + "probability ( A | B ) {\n  (yes) 0.2, 0.3, 0.5;\n  (no) 0.2, 0.3, 0.5;\n}\n" + PB,
         {"A": ["B"], "B": ["A"]})
SELF = (HEAD + A + B + PA + "probability ( B | B ) {\n  table 0.1, 0.2, 0.9, 0.8;\n}\n", {"A": [], "B": ["B"]})


@pytest.mark.parametrize("text,parents", [CYCLE, SELF], ids=["cycle", "own parent"])
def test_a_cycle_in_a_file_is_the_dags_error(text, parents):
    """A cycle (and a node its own parent) raise the DAG constructor's error, naming
    the same nodes, though the reader builds its DAG without re-checking the names."""
    from pybncsmooth.errors import CycleError
    from pybncsmooth.structure.dag import DAG

    with pytest.raises(CycleError) as got:
        bif_module.parse_bif(text, "x.bif").network()
    with pytest.raises(CycleError) as want:
        DAG(parents, nodes=["A", "B"])
    assert str(got.value) == str(want.value)


def test_a_read_network_is_the_one_the_checking_constructor_makes():
    """The reader assembles its network without the constructor's per-node checks: the
    same attributes as the constructor gives."""
    from pybncsmooth.model.network import FittedNetwork

    net = bif_module.read_bif(str(BNLEARN / "alarm.bif"))
    made = FittedNetwork(net.dag, net.schema, {n: net.cpd(n) for n in net.nodes}, info=net.info)
    assert vars(net).keys() == vars(made).keys()
    for key in ("dag", "schema", "domain", "_prefix", "estimator", "info", "options", "transformer", "_cpds"):
        assert getattr(net, key) == getattr(made, key), key
    assert net.max_abs_diff(made) == 0.0

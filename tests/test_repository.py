"""The bnlearn repository's files and their neighbours' formats: BIF levels as bnlearn and
pgmpy read them, numbers parsed exactly, XMLBIF and UAI both ways, pgmpy and pyAgrum
objects (their absence named), and what short decimals become when written."""

from __future__ import annotations

import json
import random
import sys

import numpy as np
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import FileFormatError, HyperparameterError
from pybncsmooth.interop.reading.numbers import BadNumber, parse_number_rows
from pybncsmooth.interop._rformat import probability_digits
from conftest import BNLEARN, DATA

REPO = DATA / "repository"


@pytest.fixture(scope="module")
def child():
    return bs.read_network(REPO / "child.bif.gz")


@pytest.fixture(scope="module")
def asia():
    return bs.read_network(BNLEARN / "asia.bif")


def test_child_reads_as_bnlearn_reads_it(child):
    gold = json.loads((REPO / "child.bnlearn.json").read_text())
    assert set(child.nodes) == set(gold["meta"]["node_order"]) and len(child.nodes) == 20
    assert child.levels("CO2Report") == ["<7.5", ">=7.5"]
    assert child.levels("ChestXray")[-1] == "Asy/Patch" and child.levels("Age")[0] == "0-3_days"
    for node, g in gold["nodes"].items():
        dims = g["dims"] or [node]
        assert child.levels(node) == g["levels"][0]
        parents = [g["parents"]] if isinstance(g["parents"], str) else g["parents"]  # R's unboxed vectors
        assert sorted(child.parents(node)) == sorted(parents)
        want = np.array(g["prob"]).reshape(np.atleast_1d(g["shape"]), order="F")
        got = np.transpose(child.cpt(node), [([node] + child.parents(node)).index(v) for v in dims])
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-15, err_msg=node)


def test_child_writes_its_levels_bare_and_reads_back_exactly(child, tmp_path):
    path = tmp_path / "child.bif"
    child.write(path)
    text = path.read_text()
    assert "type discrete [ 2 ] { <7.5, >=7.5 };" in text
    assert "type discrete [ 3 ] { <5, 5-12, 12+ };" in text and "(Asy/Patch) " in text
    assert '"' not in text  # every level reads back bare, as bnlearn writes them
    back = bs.read_network(path)
    assert back.nodes == child.nodes and back.max_abs_diff(child) <= 1e-15


def test_short_decimals_are_written_with_the_digits_they_need(tmp_path):
    assert probability_digits([1 / 3, 2 / 3]) == 7  # bnlearn's 7 significant digits
    assert probability_digits([0.5, 0.5]) == 7
    assert probability_digits(np.array([0.29777033, 0.38556142, 0.26557329, 0.05109496]) / 0.9999999999999999) == 8
    assert probability_digits([0.016698319, 0.983301681]) == 9
    t = np.array([[0.123456789, 0.5], [0.876543211, 0.5]])
    net = bs.FittedNetwork(bs.DAG({"B": ["A"]}), bs.Schema({"A": ("a0", "a1"), "B": ("b0", "b1")}),
                           {"A": bs.model.cpd.TableCPD("A", [], np.array([0.25, 0.75])),
                            "B": bs.model.cpd.TableCPD("B", ["A"], t)})
    for ext in ("bif", "dsc", "net"):
        net.write(tmp_path / f"n.{ext}")
        assert bs.read_network(tmp_path / f"n.{ext}").max_abs_diff(net) == 0.0, ext
    assert "0.123456789" in (tmp_path / "n.bif").read_text()


VARIANTS = """// levels as bnlearn and pgmpy read them
network "x" { property version "1 // not a comment"; }
variable A { type discrete [ 3 ] { "a, 1", "say \\"hi\\"", a(b) }; }
variable B { type discrete [ 2 ] { yes no }; property position = (1, 2); }
variable "C c" { type discrete[2]{ lo w , >=7.5 }; }
probability ( A ) { table 0.2, 0.3, 0.5; }
probability ( B | A ) {
  ("a, 1") 0.1, 0.9;
  ("say \\"hi\\"") 0.2 0.8;
  (a_b_) 0.3, 0.7;   /* bnlearn's write.bif sanitises ( and ) in a configuration */
}
probability ( "C c" | A, B ) {
  default 0.5, 0.5;
  table 0.1, 0.2, 0.3, 0.4, 0.5, 0.6,  0.9, 0.8, 0.7, 0.6, 0.5, 0.4;
  ("a, 1", no) 0.25, 0.75;
}
"""


def test_bif_variants_levels_quotes_escapes_tables(tmp_path):
    path = tmp_path / "v.bif"
    path.write_text(VARIANTS)
    net = bs.read_network(path)
    assert net.nodes == ["A", "B", "C c"]
    assert net.levels("A") == ["a, 1", 'say "hi"', "a(b)"]
    assert net.levels("B") == ["yes", "no"] and net.levels("C c") == ["lo w", ">=7.5"]
    np.testing.assert_allclose(net.cpt("B"), [[0.1, 0.2, 0.3], [0.9, 0.8, 0.7]])
    c = net.cpt("C c")  # table: the node slowest, the last parent fastest; the row after it wins
    np.testing.assert_allclose(c[0], [[0.1, 0.25], [0.3, 0.4], [0.5, 0.6]])
    np.testing.assert_allclose(c[1], [[0.9, 0.75], [0.7, 0.6], [0.5, 0.4]])
    with pytest.raises(FileFormatError, match="contains a double quote"):  # bnlearn could not read it back
        net.write(tmp_path / "w.bif")
    (tmp_path / "q.bif").write_text(VARIANTS.replace('\\"hi\\"', "hi"))
    renamed = bs.read_network(tmp_path / "q.bif")
    renamed.write(tmp_path / "w.bif")
    text = (tmp_path / "w.bif").read_text()
    assert '{ "a, 1", say hi, "a(b)" }' in text and "{ lo w, >=7.5 }" in text
    assert "variable C c {" in text and "probability ( C c | A, B )" in text  # as bnlearn writes and reads
    assert bs.read_network(tmp_path / "w.bif").max_abs_diff(renamed) == 0.0


@pytest.mark.parametrize("text,message,line", [
    ("network x {\n}\nvariable A {\n  type discrete [ 2 ] { a, b };\n}\nprobability ( A ) {\n  table 0.5, 0.5\n}\n",
     "expected ';' at the end of a row", 7),
    ("network x {\n}\nvariable A {\n  type discrete [ 2 ] { a, b };\n}\nvariable B {\n  type discrete [ 2 ] { u, v };\n}\n"
     "probability ( A ) {\n  table 0.5, 0.5;\n}\nprobability ( B | A ) {\n  (a) 0.5, 0.5;\n  (b) 0.5, 0.25, 0.25;\n}\n",
     "the distribution of 'B' for (b) has 3 numbers, expected 2", 14),
    ("network x {\n}\nvariable A {\n  type discrete [ 2 ] { a, b };\n}\nprobability ( A ) {\n  table 0.5, -0.5;\n}\n",
     "-0.5 is not a probability", 7),
    ("network x {\n}\nvariable A {\n  type continuous [ 2 ] { a, b };\n}\n", "only discrete networks", 4),
    ("network x {\n}\nvariable A {\n  type discrete [ 2 ] { a, b };\n}\nprobability ( A ) {\n  table 0.5,, 0.5;\n}\n",
     "expected a probability but found ','", 7),
    ("network x {\n}\nvariable A {\n  type discrete [ 2 ] { a, b };\n}\n}\n", "unbalanced '}'", 6),
    ("network x {\n}\nvariable A {\n  type discrete [ 2 ] { a, b };\n\n", "never closed", 3),
])
def test_bad_bif_rows_name_the_problem_and_line(text, message, line, tmp_path):
    path = tmp_path / "bad.bif"
    path.write_text(text)
    with pytest.raises(FileFormatError) as e:
        bs.read_network(path)
    assert message in str(e.value) and e.value.line == line


def test_numbers_parse_to_the_doubles_float_gives():
    rng = random.Random(3)
    texts = []
    for _ in range(3000):
        x = rng.random() * 10.0 ** rng.randint(-30, 2)
        form = rng.choice(["{:.17g}", "{:.3f}", "{:e}", "{:.9e}", "{:.25f}", "{!r}", "+{:g}", "{:.12E}"])
        texts.append(form.format(x))
    texts += ["0", "1", "1.", ".5", "0.000000000", "1e-320", "123456789012345678901234567890e-40", "7E+2"]
    rows = [", ".join(texts[i : i + 7]) for i in range(0, len(texts), 7)]
    values, counts = parse_number_rows(rows)
    assert counts.tolist() == [len(r.split(",")) for r in rows]
    assert values.tolist() == [float(t) for t in texts]  # bit for bit
    v, c = parse_number_rows(["0.1 0.2\n0.7", ""])  # white space separates too; an empty row is empty
    assert v.tolist() == [0.1, 0.2, 0.7] and c.tolist() == [3, 0]
    for bad, token in [("0.1, x", "x"), ("0.1,", "end of the row"), ("1e", "1e"), ("0.5; ", None), ("-", "-")]:
        with pytest.raises(BadNumber) as e:
            parse_number_rows(["0.5", bad]) if ";" not in bad else parse_number_rows(["0.5", "0.1,,0.2"])
        assert e.value.row == 1 and (token is None or e.value.token == token)


# ----------------------------------------------------------------------------- XMLBIF and UAI


def _same(a, b, exact: bool = True):
    assert a.nodes == b.nodes and [a.parents(v) for v in a.nodes] == [b.parents(v) for v in b.nodes]
    assert [a.levels(v) for v in a.nodes] == [b.levels(v) for v in b.nodes]
    assert a.max_abs_diff(b) <= (0.0 if exact else 1e-15)


@pytest.mark.parametrize("ext", ["xmlbif", "bifxml", "xml"])
def test_xmlbif_round_trip_is_exact(child, ext, tmp_path):
    child.write(tmp_path / f"c.{ext}")
    assert "&lt;7.5" in (tmp_path / f"c.{ext}").read_text()
    _same(bs.read_network(tmp_path / f"c.{ext}"), child, exact=False)


@pytest.mark.parametrize("name,tol", [("asia.pyagrum.bifxml", 5e-7), ("asia.pgmpy.xml", 1e-15)])
def test_xmlbif_written_by_pyagrum_and_pgmpy_reads(asia, name, tol):
    # pyAgrum 3.3 writes XMLBIF numbers with 6 significant digits (5e-7 is its printed precision)
    net = bs.read_network(REPO / name)
    assert net.nodes == asia.nodes and [net.parents(v) for v in net.nodes] == [asia.parents(v) for v in asia.nodes]
    assert net.max_abs_diff(asia) <= tol


@pytest.mark.parametrize("layout", ["uai", "pyagrum", "pgmpy"])
def test_uai_round_trip_in_every_layout(asia, layout, tmp_path):
    asia.write(tmp_path / "a.uai", layout=layout)
    back = bs.read_network(tmp_path / "a.uai", layout=layout)
    assert back.nodes == asia.nodes  # the names ride along as pyAgrum's '# name' comments
    assert [back.levels(v) for v in back.nodes] == [[0, 1]] * 8
    assert all(np.array_equal(back.cpt(v), asia.cpt(v)) for v in asia.nodes)


def test_uai_layouts_differ_only_where_they_should(asia, tmp_path):
    texts = {}
    for layout in ("uai", "pyagrum", "pgmpy"):
        asia.write(tmp_path / f"{layout}.uai", layout=layout)
        texts[layout] = (tmp_path / f"{layout}.uai").read_text()
    d_uai = texts["uai"].split("\n\n")[3]  # D | B, E: the node fastest, then E (the last parent)
    assert d_uai.split("\n")[1].split()[:4] == [repr(float(x)) for x in asia.cpt("D")[:, 0, :].T.ravel()[:4]]
    assert texts["uai"].split("\n\n")[1] == texts["pyagrum"].split("\n\n")[1]  # one parent: the same
    # pyAgrum's reading of a two-parent table is not the format's: a file read with the wrong layout differs
    wrong = bs.read_network(tmp_path / "pyagrum.uai", layout="uai")
    assert np.abs(wrong.cpt("D") - asia.cpt("D")).max() > 0.06  # D's configurations (B, E) = (no, yes), (yes, no)


def test_uai_written_by_pyagrum_and_pgmpy_reads(asia):
    gum = bs.read_network(REPO / "asia.pyagrum.uai", layout="pyagrum")
    assert gum.nodes == asia.nodes  # pyAgrum writes the names as comments
    for v in asia.nodes:  # pyAgrum 3.3 writes UAI numbers with 6 significant digits
        np.testing.assert_allclose(gum.cpt(v), asia.cpt(v), rtol=0, atol=5e-7)
    pg = bs.read_network(REPO / "asia.pgmpy.uai")  # pgmpy's layout told from its tables
    assert pg.info["layout"] == "pgmpy" and pg.nodes == [f"var_{i}" for i in range(8)]
    for i, v in enumerate(asia.nodes):  # pgmpy numbers the variables in sorted order: A..X here
        order = [asia.nodes[int(p[4:])] for p in pg.parents(f"var_{i}")]
        want = np.transpose(asia.cpt(v), [0] + [1 + asia.parents(v).index(p) for p in order])
        np.testing.assert_allclose(pg.cpt(f"var_{i}"), want, rtol=0, atol=1e-15)


@pytest.mark.parametrize("text,message", [
    ("MARKOV\n1\n2\n1\n1 0\n2\n0.5 0.5\n", "starts with 'BAYES'"),
    ("BAYES\n2\n2 2\n2\n1 0\n1 0\n2\n0.5 0.5\n2\n0.5 0.5\n", "last of exactly one function"),
    ("BAYES\n1\n2\n1\n1 0\n3\n0.5 0.5 0.1\n", "has 3 numbers, expected 2"),
    ("BAYES\n2\n2 2\n2\n1 0\n2 0 1\n2\n0.5 0.5\n4\n0.3 0.3 0.3 0.3\n", "not a distribution over it"),
    ("BAYES\n1\n2\n1\n1 0\n2\n0.5 x\n", "found 'x'"),
])
def test_bad_uai_files_are_refused_by_name(text, message, tmp_path):
    (tmp_path / "b.uai").write_text(text)
    with pytest.raises(FileFormatError, match=message):
        bs.read_network(tmp_path / "b.uai")


def test_format_options_are_checked(asia, tmp_path):
    with pytest.raises(HyperparameterError, match="the bif format has no option 'layout'"):
        asia.write(tmp_path / "a.bif", layout="uai")
    with pytest.raises(HyperparameterError, match="layout must be one of"):
        asia.write(tmp_path / "a.uai", layout="hugin")
    with pytest.raises(HyperparameterError, match="the xmlbif format has no option 'digits'"):
        bs.read_network(REPO / "asia.pgmpy.xml", digits=3)


# ----------------------------------------------------------------------------- the neighbours' objects


@pytest.mark.parametrize("lib,module", [("pgmpy", "pgmpy"), ("pyagrum", "pyagrum")])
def test_a_missing_neighbour_is_named(asia, lib, module, monkeypatch):
    for name in list(sys.modules):
        if name == module or name.startswith(module + ".") or name == "pyAgrum":
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    monkeypatch.setitem(sys.modules, "pyAgrum", None)
    with pytest.raises(ImportError, match=f"to_{lib}\\(\\) needs {lib}, which is not installed: pip install {lib}"):
        getattr(asia, f"to_{lib}")()


def test_multi_domain_networks_convert_one_domain_at_a_time():
    df = bs.load_dataset("asia").assign(site=lambda d: np.where(np.arange(len(d)) % 2, "s1", "s2"))
    net = bs.fit("[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]", df, method="bayes", domain="site")
    with pytest.raises(bs.errors.DataError, match="one domain at a time"):
        net.to_pgmpy()

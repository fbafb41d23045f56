"""BIF / DSC / NET as bnlearn writes and reads them; the native format."""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import FileFormatError
from pybncsmooth.interop._rformat import format_r
from conftest import BNLEARN, load_golden, load_reference_csv, modelstring_of

NETS = ["asia", "insurance", "alarm"]
FORMATS = ["bif", "dsc", "net"]
# bnlearn prints 7 significant digits; its own read-back differs from the fitted
# values by at most 4.94e-8 (bnlearn_run_info.json), so 5e-8 is the tightest
# tolerance the files allow
PRINT_TOL = 5e-8


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", NETS)
def test_reference_file_loads_to_golden_tables(name, fmt):
    net = bs.read_network(BNLEARN / f"{name}.{fmt}")
    ref = load_golden(f"{name}.bayes_iss1.json")
    assert net.nodes == ref["meta"]["node_order"]
    for node, nd in ref["nodes"].items():
        assert net.parents(node) == nd["parents"]
        assert net.children(node) == nd["children"]
        assert net.levels(node) == nd["levels"][0]
        np.testing.assert_allclose(net.cpt(node), nd["table"], rtol=0, atol=PRINT_TOL, err_msg=node)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", NETS)
def test_written_file_is_byte_identical_to_bnlearn(name, fmt, tmp_path):
    df = load_reference_csv(name)
    net = bs.fit(modelstring_of(name), df, method="bayes", iss=1)
    out = tmp_path / f"{name}.{fmt}"
    net.write(out)
    assert out.read_bytes() == (BNLEARN / f"{name}.{fmt}").read_bytes()


def _printed_precision_bound(net) -> float:
    """A value printed with 7 significant digits moves by at most 5e-8 (values < 1);
    renormalising a column whose r printed values sum to 1 +- r * 5e-8 (as bnlearn's
    readers do) moves it by at most r * 5e-8 more."""
    return max((1 + len(net.levels(n))) * PRINT_TOL for n in net.nodes)


@pytest.mark.parametrize("fmt", FORMATS)
def test_read_write_read_is_lossless_to_printed_precision(fmt, tmp_path):
    net = bs.read_network(BNLEARN / f"alarm.{fmt}")
    out = tmp_path / f"again.{fmt}"
    net.write(out)
    back = bs.read_network(out)
    assert back.nodes == net.nodes
    assert all(back.parents(n) == net.parents(n) for n in net.nodes)
    assert back.max_abs_diff(net) <= _printed_precision_bound(net)


@pytest.mark.parametrize("fmt", FORMATS)
def test_fit_write_read_round_trip_to_printed_precision(fmt, learning_test, tmp_path):
    net = bs.fit(modelstring_of("learning_test"), learning_test, method="mestimate", m=2)
    path = tmp_path / f"lt.{fmt}"
    net.write(path)
    back = bs.read_network(path)
    assert back.nodes == net.nodes
    assert back.max_abs_diff(net) <= _printed_precision_bound(net)


def test_native_round_trip_is_exact(asia, tmp_path):
    net = bs.fit(modelstring_of("asia"), asia, method="bayes", iss=3)
    path = tmp_path / "asia.pbn"
    net.write(path)
    back = bs.read_network(path)
    assert back.nodes == net.nodes
    assert back.method == "bayes" and back.estimator == net.estimator
    assert back.info["n_rows"] == 5000
    for n in net.nodes:
        assert back.parents(n) == net.parents(n)
        assert np.array_equal(back.cpt(n), net.cpt(n))  # bit-identical
        assert back.tree(n) == net.tree(n)
    # a network read from a text file round-trips too (dense tables)
    bif = bs.read_network(BNLEARN / "insurance.bif")
    bif.write(tmp_path / "ins.pbn")
    assert bs.read_network(tmp_path / "ins.pbn").max_abs_diff(bif) == 0.0


def test_native_keeps_level_types(tmp_path):
    df = pd.DataFrame({"a": [1, 2, 2, 3], "b": [True, False, True, True]})
    net = bs.fit("b ~ a", df, method="mle")
    net.write(tmp_path / "x.pbn")
    back = bs.read_network(tmp_path / "x.pbn")
    assert back.levels("a") == [1, 2, 3]
    assert back.levels("b") == [False, True]


def test_format_r_matches_r_rules():
    # values and R's output (format(x, nsmall = 1) with digits = 7)
    assert format_r([0.9915017, 0.0084983]) == ["0.9915017", "0.0084983"]
    assert format_r([0.999973, 2.699638e-05]) == ["9.999730e-01", "2.699638e-05"]
    assert format_r([0.0003831418, 0.9996168582]) == ["0.0003831418", "0.9996168582"]
    assert format_r([1.0, 0.0]) == ["1.0", "0.0"]
    assert format_r([0.5, 0.5]) == ["0.5", "0.5"]
    assert format_r([1 / 3, 2 / 3]) == ["0.3333333", "0.6666667"]


# ----------------------------------------------------------------------------- bad files

BAD = [
    (
        "bif",
        "network x {\n}\nvariable A {\n  type discrete [ 2 ] { a, b };\n}\nprobability ( A ) {\n  table 0.5, 0.6;\n}\n",
        "sums to 1.1",
        7,
    ),
    ("bif", "network x {\n}\nvariable A {\n  type discrete [ 3 ] { a, b };\n}\n", "declares 3 levels", 4),
    ("bif", "network x {\n}\nvariable A {\n  type discrete [ 2 ] { a, b };\n}\n", "no probability table", 3),
    (
        "bif",
        "network x {\n}\nvariable A {\n  type discrete [ 2 ] { a, b };\n}\nprobability ( A | B ) {\n  (a) 0.5, 0.5;\n}\n",
        "'B'",
        6,
    ),
    (
        "bif",
        "network x {\n}\nvariable A {\n  type discrete [ 2 ] { a, b };\n}\nvariable B {\n  type discrete [ 2 ] { u, v };\n}\n"
        "probability ( A ) {\n  table 0.5, 0.5;\n}\nprobability ( B | A ) {\n  (a) 0.5, 0.5;\n  (c) 0.1, 0.9;\n}\n",
        "'c' is not a level of 'A'",
        14,
    ),
    (
        "bif",
        "network x {\n}\nvariable A {\n  type discrete [ 2 ] { a, b };\n}\nvariable B {\n  type discrete [ 2 ] { u, v };\n}\n"
        "probability ( A ) {\n  table 0.5, 0.5;\n}\nprobability ( B | A ) {\n  (a) 0.5, 0.5;\n}\n",
        "no distribution for parent configuration (A=b)",
        12,
    ),
    (
        "bif",
        "network x {\n}\nvariable A {\n  type discrete [ 2 ] { a, b };\n}\nprobability ( A ) {\n  table 0.5, x;\n}\n",
        "expected a probability but found 'x'",
        7,
    ),
    ("bif", "variable A {\n}", "starts with 'network'", 1),
    (
        "dsc",
        'belief network "u"\nnode A {\n  type : discrete [ 2 ] = { "a", "b" };\n}\nprobability ( A ) {\n   0.2, 0.2;\n}\n',
        "sums to 0.4",
        6,
    ),
    (
        "net",
        'net\n{\n}\nnode A\n{\n  states = ( "a" "b" );\n}\npotential ( A )\n{\n  data = ( 0.5 0.5 0.5 );\n}\n',
        "3 numbers, expected 2",
        10,
    ),
    ("net", "net\n{\n}\ncontinuous node A\n{\n}\n", "continuous nodes are not supported", 4),
]


@pytest.mark.parametrize("fmt,text,message,line", BAD)
def test_malformed_files_name_the_problem_and_line(fmt, text, message, line, tmp_path):
    path = tmp_path / f"bad.{fmt}"
    path.write_text(text)
    with pytest.raises(FileFormatError) as e:
        bs.read_network(path)
    assert message in str(e.value)
    assert e.value.line == line
    assert str(path) in str(e.value)


def test_cycle_in_file_is_a_structure_error(tmp_path):
    text = (
        "network x {\n}\nvariable A {\n  type discrete [ 2 ] { a, b };\n}\nvariable B {\n  type discrete [ 2 ] { u, v };\n}\n"
        "probability ( A | B ) {\n  (u) 0.5, 0.5;\n  (v) 0.5, 0.5;\n}\nprobability ( B | A ) {\n  (a) 0.5, 0.5;\n  (b) 0.1, 0.9;\n}\n"
    )
    (tmp_path / "c.bif").write_text(text)
    with pytest.raises(bs.errors.CycleError, match="A -> B -> A|B -> A -> B"):
        bs.read_network(tmp_path / "c.bif")


def test_bif_variants_comments_properties_table_default(tmp_path):
    text = """// a comment
network "test" { property version 1.0; }
variable A { type discrete [ 2 ] { a0, a1 }; property position = (1, 2); }
variable B { type discrete [ 3 ] { b0, b1, b2 }; }
variable C { type discrete [ 2 ] { c0, c1 }; }
/* block
   comment */
probability ( A ) { table 0.3, 0.7; }
probability ( B | A ) { table 0.1, 0.2,  0.3, 0.4,  0.6, 0.4; }
probability ( C | A, B ) {
  default 0.5, 0.5;
  (a1, b2) 0.9, 0.1;
}
"""
    path = tmp_path / "v.bif"
    path.write_text(text)
    net = bs.read_network(path)
    assert net.nodes == ["A", "B", "C"]
    # table: node level slowest, last parent fastest
    np.testing.assert_allclose(net.cpt("B"), [[0.1, 0.2], [0.3, 0.4], [0.6, 0.4]])
    c = net.cpt("C")
    np.testing.assert_allclose(c[:, 1, 2], [0.9, 0.1])
    np.testing.assert_allclose(c[:, 0, 0], [0.5, 0.5])


def test_net_with_hugin_attributes(tmp_path):
    text = """net { node_size = (80 40); }
% comment
node A { label = "A"; position = (10 10); states = ("a" "b"); }
node B { states = ("u" "v" "w"); }
potential ( B | A ) { data = ((0.2 0.3 0.5) (0.1 0.1 0.8)); }
potential ( A ) { data = ( 0.4 0.6 ); }
"""
    (tmp_path / "h.net").write_text(text)
    net = bs.read_network(tmp_path / "h.net")
    np.testing.assert_allclose(net.cpt("B")[:, 1], [0.1, 0.1, 0.8])
    np.testing.assert_allclose(net.cpt("A"), [0.4, 0.6])


def test_unknown_extension_and_missing_file(tmp_path):
    with pytest.raises(FileFormatError, match="extension"):
        bs.read_network(tmp_path / "x.xyz")
    with pytest.raises(FileNotFoundError):
        bs.read_network(tmp_path / "missing.bif")


def test_native_rejects_other_files(tmp_path):
    (tmp_path / "junk.pbn").write_bytes(b"not a zip")
    with pytest.raises(FileFormatError, match="not a pybncsmooth network"):
        bs.read_network(tmp_path / "junk.pbn")


def test_gzipped_bif(tmp_path):
    import gzip

    with gzip.open(tmp_path / "asia.bif.gz", "wb") as fh:
        fh.write((BNLEARN / "asia.bif").read_bytes())
    net = bs.read_network(tmp_path / "asia.bif.gz")
    assert net.max_abs_diff(bs.read_network(BNLEARN / "asia.bif")) == 0.0


def test_writes_are_atomic(tmp_path, asia, monkeypatch):
    """A writer that fails midway leaves no partial file, and an existing file intact."""
    import pybncsmooth.interop.bif.format as bif_module

    net = bs.fit("[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]", asia, method="bayes")
    target = tmp_path / "net.bif"
    net.write(target)
    before = target.read_bytes()

    def broken(net, fh):
        fh.write("network unknown {\n")
        raise RuntimeError("disk full")

    monkeypatch.setattr(bif_module, "write_bif", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        net.write(target)
    assert target.read_bytes() == before
    fresh = tmp_path / "new.bif"
    with pytest.raises(RuntimeError):
        net.write(fresh)
    assert not fresh.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["net.bif"]  # no temporary left behind

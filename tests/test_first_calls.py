"""A fresh process's first calls run without numba's start: the NumPy and Python twins
of the compiled kernels (the plain counting, the BDeu cells, the number parser and the
tables' placement of the BIF reader) give what the kernels give, bit for bit, and the
same errors; unusual input goes to the kernels.  (Each twin is used while no kernel
has been loaded in the process; here each test forces one side, then the other.)"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from pybncsmooth.errors import FileFormatError
from pybncsmooth.interop.bif import _tables as _bif_tables
from pybncsmooth.interop.reading import numbers as _numbers
from pybncsmooth.interop.bif import format as bif_module
from pybncsmooth.interop.reading._number_kernels import _POW10, parse_rows
from pybncsmooth.interop.reading._number_twins import parse_rows_python
from conftest import BNLEARN, DATA
from test_bif_quick import BAD, OTHER, PLAIN


def _loaded(monkeypatch: pytest.MonkeyPatch, loaded: bool) -> None:
    """The readers behave as in a process that has (or has not) loaded a kernel."""
    for module in (bif_module, _numbers, _bif_tables):
        monkeypatch.setattr(module, "numba_loaded", lambda: loaded)


def _parse(text: str, monkeypatch: pytest.MonkeyPatch, loaded: bool):
    with monkeypatch.context() as m:
        _loaded(m, loaded)
        return bif_module.parse_bif(text, "x.bif")


def _kernel_rows(rows: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The compiled pass alone (the few numbers it leaves to float() converted)."""
    text = ";".join(rows)
    buf = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    out, counts = np.empty(len(buf) // 2 + 1), np.empty(len(rows), dtype=np.int64)
    slow = np.empty((2, len(out)), dtype=np.int64)
    status, k, n_slow, _ = parse_rows(buf, _POW10, out, counts, slow[0], slow[1])
    assert status == 0
    out = out[:k]
    for j, s, e in zip(np.flatnonzero(np.isnan(out)), slow[0][:n_slow], slow[1][:n_slow]):
        out[j] = float(buf[s:e].tobytes())
    return out, counts


ROWS = [["0.1, 0.9", "0.25 0.75", "1e-3,\t0.999", " .5 , 5. ", "+0.2,0.8", "1E+0 0.0"],
        ["0.3333333333333333333333, 0.6666666666666666666667", "0.1000000000000000055511151231257827"],
        ["9.999999999999999e-01 1.0000000000000002e-16", "123456789012345678901234567890e-30"]]


@pytest.mark.parametrize("rows", ROWS, ids=range(len(ROWS)))
def test_the_python_number_parser_gives_the_kernel_s_doubles(rows):
    mine = parse_rows_python(rows)
    assert mine is not None
    values, counts = _kernel_rows(rows)
    assert np.array_equal(mine[1], counts) and mine[0].tobytes() == values.tobytes()


@pytest.mark.parametrize("row", ["0.1,,0.9", ", 0.1", "0.1 ,", "", "   ", "0.1; 0.9", "nan 0.5", "inf", "1e",
                                 "0x1p-3", "1_000", "0.1.2", "+-1", "0,5 e"])
def test_the_python_number_parser_leaves_anything_unusual_to_the_kernel(row):
    assert parse_rows_python(["0.5 0.5", row]) is None


FILES = [BNLEARN / "asia.bif", BNLEARN / "alarm.bif", BNLEARN / "insurance.bif", DATA / "repository" / "child.bif.gz"]


def _text(path: Path) -> str:
    return gzip.open(path, "rt").read() if path.suffix == ".gz" else path.read_text()


@pytest.mark.parametrize("text", [_text(p) for p in FILES] + list(PLAIN.values()) + list(OTHER.values()),
                         ids=[p.name for p in FILES] + [f"plain {k}" for k in PLAIN] + [f"other {k}" for k in OTHER])
def test_a_first_read_gives_the_tables_the_kernels_give(text, monkeypatch):
    first, kernels = _parse(text, monkeypatch, False), _parse(text, monkeypatch, True)
    assert first.levels == kernels.levels and first.parents == kernels.parents
    for node, want in kernels.tables.items():
        got = first.tables[node]
        assert got.shape == want.shape and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("text", BAD + [BAD[0].replace("a b", "a, b") + "probability ( A ) {\n  default 0.2, 0.3;\n}\n",
                                        PLAIN["two parents, sums renormalised"].replace("0.705", "0.8")])
def test_a_first_read_reports_the_kernels_errors(text, monkeypatch):
    with pytest.raises(FileFormatError) as first:
        _parse(text, monkeypatch, False)
    with pytest.raises(FileFormatError) as kernels:
        _parse(text, monkeypatch, True)
    assert str(first.value) == str(kernels.value) and first.value.line == kernels.value.line


def test_the_repository_files_read_first_as_the_kernels_read_them(monkeypatch):
    """Every file pgmpy ships (a benchmark venv), barley and pathfinder among them."""
    pgmpy = pytest.importorskip("pgmpy")
    folder = Path(pgmpy.__file__).parent / "utils" / "example_models"
    for gz in sorted(folder.glob("*.bif.gz")):
        text = _text(gz)
        if len(text) > 1 << 22:
            continue
        try:
            kernels = _parse(text, monkeypatch, True)
        except FileFormatError as e:
            with pytest.raises(FileFormatError) as first:
                _parse(text, monkeypatch, False)
            assert str(first.value) == str(e)
            continue
        first = _parse(text, monkeypatch, False)
        for node, want in kernels.tables.items():
            assert first.tables[node].tobytes() == want.tobytes(), (gz.name, node)

"""The documentation: the site (docs/) builds with warnings as errors (a broken reference,
a docstring Sphinx cannot parse or a page left out of the tree fails the suite), every
public name has its page, citations resolve to the References page, the README stays a
short front page whose set-up commands and first fit work as written, and code blocks
fit the theme's column."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pybncsmooth as bs
import pybncsmooth.datasets as datasets
import pybncsmooth.estimators as est

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SETUP_LINES = ("python3 -m pip install . && pybncsmooth demo", "bash .ci/install && python3 -m pytest")
# the pages a reader can land on besides the generated API pages and the examples
PAGES = (
    "index", "getting_started", "benchmarks", "contributing", "references",
    "guide/python", "guide/structure", "guide/classifiers", "guide/estimators", "guide/multidomain", "guide/data",
    "guide/scale", "guide/r", "guide/cli", "guide/correctness",
)
# works the package implements or matches: each needs an entry with its anchor
REQUIRED_REFERENCES = (
    "petitjean2018", "azzimonti2019", "zhang2020", "cooper2025", "scutari2010", "sahami1996",
    "fayyad1993", "friedman1997", "chowliu1968", "heckerman1995", "cestnik1990", "ferri2003",
    "martinez2016", "teh2006", "polson2013", "devroye2009", "vehtari2021", "talts2018",
    "lauritzen1988", "provost2000", "demsar2006",
)
# furo's article is 46em wide less 2 x 3em of padding at the root font size (16px at the
# default width); code is 81.25% of it with 0.875rem of padding each side, and a
# monospace character is about 0.6em wide: (640 - 28) / (13 * 0.6) = 78 characters
CODE_COLUMNS = 78


def _own_markdown() -> list[Path]:
    """The README and the site's hand-written pages (not the vignettes copied in)."""
    pages = [p for p in DOCS.rglob("*.md") if "_build" not in p.parts and "generated" not in p.parts]
    pages = [p for p in pages if not (p.parent.name == "examples" and p.name[:1].isdigit())]
    return [ROOT / "README.md", *sorted(pages)]


def _code_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, body) of every fenced code block."""
    return re.findall(r"^```([^\n]*)\n(.*?)^```", text, flags=re.M | re.S)


@pytest.fixture(scope="module")
def html(tmp_path_factory) -> Path:
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    pytest.importorskip("furo")
    out = tmp_path_factory.mktemp("docs") / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html", "docs", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def test_docs_build_with_warnings_as_errors(html):
    gen = html / "generated"
    # every public name has its page (the errors module documents its classes on the API page)
    public = [n for n in bs.__all__ if n not in ("errors", "__version__")] + list(est.__all__)
    missing = [n for n in public if not (gen / f"pybncsmooth.{n}.html").exists()
               and not (gen / f"pybncsmooth.estimators.{n}.html").exists()]
    missing += [n for n in datasets.__all__ if not (gen / f"pybncsmooth.datasets.{n}.html").exists()
                and not (gen / f"pybncsmooth.{n}.html").exists()]
    assert not missing, missing
    api = (html / "api.html").read_text()
    assert all(f"pybncsmooth.errors.{n}" in api for n in bs.errors.__all__)
    # the user guide's pages and every vignette as an example, with its recorded output
    for page in PAGES:
        assert (html / f"{page}.html").stat().st_size > 5000, page
    for v in sorted((ROOT / "vignettes").glob("[0-9][0-9]_*.py")):
        assert (html / "examples" / f"{v.stem}.html").exists(), v.name
    figures = {m for md in (ROOT / "vignettes").glob("[0-9][0-9]_*.md")
               for m in re.findall(r"\]\((figures/[^)]+)\)", md.read_text())}
    assert figures and all((html / "_images" / Path(f).name).exists() for f in figures), figures
    fit_page = (gen / "pybncsmooth.fit.html").read_text()
    assert "em_draws" in fit_page and "Parameters" in fit_page
    assert "furo" in (html / "index.html").read_text()
    # the options table, generated from the declarations, names every option
    from pybncsmooth.options import option_names

    guide = (html / "guide" / "python.html").read_text()
    assert not [n for n in option_names() if f'<span class="pre">{n}</span>' not in guide]


def test_references_have_anchors_and_citations_resolve(html):
    refs = (html / "references.html").read_text()
    ids = set(re.findall(r'id="([^"]+)"', refs))
    assert not [a for a in REQUIRED_REFERENCES if a not in ids]
    # every citation link of the guide lands on an entry that exists
    cited = set()
    for page in PAGES:
        cited |= set(re.findall(r'href="(?:\.\./)?references\.html#([^"]+)"', (html / f"{page}.html").read_text()))
    assert len(cited) >= 15 and cited <= ids, cited - ids


def test_no_file_number_or_issue_citations():
    """Readers cannot resolve "paper 000", "thesis 002" or an issue number: cite by
    author, year and section (the References page lists the works)."""
    pattern = re.compile(r"paper 00[0-9]|thesis 00[0-9]|\b00[0-4] Sec|issue [0-9]+", re.I)
    files = [p for d in ("docs", "vignettes", "benchmarks", "r-wrapper") for p in (ROOT / d).rglob("*")
             if p.is_file() and p.suffix in (".md", ".py", ".rst", ".R", ".Rd", ".txt")
             and "_build" not in p.parts and "generated" not in p.parts
             and not (p.parent == DOCS / "examples" and p.name[:1].isdigit())]  # build-time copies of vignettes/
    files.append(ROOT / "README.md")
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in files for i, line in enumerate(p.read_text().splitlines(), 1)
            if pattern.search(line)]
    assert not hits, hits


def test_readme_is_a_short_front_page_with_the_setup_commands():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 220
    blocks = [body.strip() for _, body in _code_blocks(readme)]
    started = [body.strip() for _, body in _code_blocks((DOCS / "getting_started.md").read_text())]
    for line in SETUP_LINES:  # verbatim, each its own block: tests/test_install.py and CI run them
        assert line in blocks and line in started, line
    # the links to the docs resolve in the repository (as GitHub follows them)
    links = re.findall(r"\]\(((?:docs|vignettes)/[^)#]*)", readme)
    assert len(links) >= 10 and all((ROOT / link).exists() for link in links)
    # the guide holds its own text, and the figures live on the benchmarks page
    for page in (DOCS / "guide").glob("*.md"):
        text = page.read_text()
        assert not re.search(r"\{include\}\s*\S*README", text), page.name
        figures = re.findall(r"\b\d+(?:\.\d+)? ?(?:s|ms|MB|GB)\b|\b\d+(?:\.\d+)?x\b|\b\d+-\d+-\d+\b", text)
        assert not figures, (page.name, figures)


def test_code_blocks_fit_the_column():
    wide = [f"{p.relative_to(ROOT)}: {line}" for p in _own_markdown() for _, body in _code_blocks(p.read_text())
            for line in body.splitlines() if len(line) > CODE_COLUMNS]
    assert not wide, wide


def test_getting_started_and_readme_first_fits_run(tmp_path, monkeypatch):
    """The snippets a newcomer pastes first: the getting-started page's and the README's
    first fit and classifier, run as written (figures aside)."""
    monkeypatch.chdir(tmp_path)  # they write asia.bif
    for page, titles in ((DOCS / "getting_started.md", ("A first fit", "A first classifier")),
                         (ROOT / "README.md", ("A first fit",))):
        text = page.read_text()
        ns: dict = {}
        for title in titles:
            section = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
            code = [body for info, body in _code_blocks(section) if info.strip() == "python"]
            assert code, (page.name, title)
            exec(compile("\n".join(code), f"{page.name}: {title}", "exec"), ns)
        assert (tmp_path / "asia.bif").exists()
        assert isinstance(ns["net"], bs.FittedNetwork)


def _page_text(markup: str) -> str:
    """The text of HTML markup, whitespace collapsed."""
    import html as _html

    return " ".join(_html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def test_api_pages_type_their_arguments_state_defaults_once_and_group_the_sidebar(html):
    fit_page = _page_text((html / "generated" / "pybncsmooth.fit.html").read_text())
    clf_page = _page_text((html / "generated" / "pybncsmooth.BNClassifier.html").read_text())
    for page, names in ((fit_page, ("spec", "data", "method", "**settings")), (clf_page, ("structure", "**settings"))):
        for name in names:
            typed = re.search(re.escape(name) + r" \(([^)]*)\)", page)
            assert typed and "Any" not in typed.group(1), (name, typed and typed.group(1))
        # an option whose doc says its default in words does not get a second "(default None)"
        assert not re.search(r"\(default[^)]*\) \(default", page)
    # the sidebar: the API reference's groups, each with its names by their short titles
    side = (html / "api.html").read_text()
    start = side.index("sidebar-tree")
    # the sidebar ends with its </nav> or, in furo's newer templates, its </aside>
    end = min(i for i in (side.find("</nav>", start), side.find("</aside>", start)) if i >= 0)
    side = _page_text(side[start:end])
    api = side[side.index("API reference"):]
    for group, first in (("Fitting networks", "fit FittedNetwork DAG"), ("Estimators", "make_estimator available_methods")):
        assert f"{group} {first}" in api, api[:400]
    assert "pybncsmooth." not in api


def test_markdown_table_rows_keep_their_cells():
    """An unescaped '|' inside a table cell (in a code span too) splits the row and the
    parser drops the extra cells silently: the docs build's ``tablecells`` extension makes
    it a warning (an error under -W); every Markdown page passes it."""
    sys.path.insert(0, str(DOCS / "_ext"))
    import tablecells

    broken = "| a | b |\n|---|---|\n| `s = |X|` | c |\n| `s = \\|X\\|` | c |\n```\n| x | y | z |\n```\n"
    assert tablecells.table_cell_mismatches(broken) == [(3, 4, 2)]
    assert "tablecells" in (DOCS / "conf.py").read_text()
    pages = _own_markdown() + sorted((ROOT / "vignettes").glob("[0-9][0-9]_*.md"))
    bad = {p.name: tablecells.table_cell_mismatches(p.read_text()) for p in pages}
    assert not {k: v for k, v in bad.items() if v}


def test_queries_guide_example_runs(tmp_path, monkeypatch):
    """The queries guide's first example, as written (every name it uses defined)."""
    monkeypatch.chdir(tmp_path)
    text = (DOCS / "guide" / "queries.md").read_text()
    code = next(body for info, body in _code_blocks(text) if info.strip() == "python")
    ns: dict = {}
    exec(compile(code, "queries.md", "exec"), ns)
    assert set(ns["multi"].query("vote", {"education": "PS"}, domain="M").index) == {"A", "N", "U", "Y"}


# a figure: a speed ratio ("12.9x", "15.6-23.4x"), a time or a size ("6.2 s", "416 MB"), a
# win-draw-loss count ("9-0-1"); dates are taken out first
FIGURE = re.compile(r"\b\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?x\b|\b\d+(?:\.\d+)? ?(?:s|ms|MB|GB)\b|\b\d+-\d+-\d+\b")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def _sections(text: str) -> dict[str, str]:
    """A Markdown page's sections (## and ###) by title."""
    return dict(re.findall(r"^#{2,3} ([^\n]+)\n(.*?)(?=^#{2,3} |\Z)", text, flags=re.M | re.S))


def test_readme_figures_are_the_benchmarks_pages_with_their_dates():
    """Every figure the README's "How fast, how accurate" quotes is on the benchmarks page,
    in a section recorded on the date the README gives beside it."""
    readme = _sections((ROOT / "README.md").read_text())["How fast, how accurate"]
    bench = _sections((DOCS / "benchmarks.md").read_text())
    items = [b for b in re.split(r"\n(?=\* )", readme) if b.startswith("* ")]
    assert len(items) >= 5
    for item in items:
        item = " ".join(item.split())
        dates, figures = DATE.findall(item), FIGURE.findall(DATE.sub(" ", item))
        assert dates and figures, item
        numbers = [re.sub(r" ?(?:s|ms|MB|GB)$", "", f) for f in figures]  # a table's cells carry no unit
        homes = [title for title, body in bench.items() if all(n in " ".join(body.split()) for n in numbers)]
        assert homes, (item, figures)
        assert any(d in DATE.findall(bench[h]) for h in homes for d in dates), (item, homes)


def test_benchmark_figures_from_a_vignette_are_its_recorded_run():
    """A benchmarks section that quotes a vignette's run quotes its recorded full output,
    with the date of that run. A vignette whose recorded output is a reduced run
    (``--record --quick``) has no full output to check against: the section must say so,
    and the check waits (a skip naming the vignette) until it is recorded in full."""
    quoted, waiting = 0, []
    for title, body in _sections((DOCS / "benchmarks.md").read_text()).items():
        m = re.search(r"vignettes/run\.py[^`]*vignettes/(\d\d_\w+)\.py", body)
        if not m:
            continue
        quoted += 1
        recorded = (ROOT / "vignettes" / f"{m.group(1)}.md").read_text()
        record = json.loads((ROOT / "vignettes" / f"{m.group(1)}.claims.json").read_text())
        if record.get("reduced"):
            assert "reduced run" in " ".join(body.split()) and DATE.search(body), (title, "quotes a reduced run")
            waiting.append(m.group(1))
            continue
        assert record["date"] in DATE.findall(body), title
        text = " ".join(recorded.split())
        missing = [f for f in FIGURE.findall(DATE.sub(" ", body)) if f not in text]
        assert not missing, (title, missing)
    assert quoted >= 1
    if waiting:
        pytest.skip(f"recorded as reduced runs, figures not checkable until recorded in full: {waiting}")


# the pages whose Python blocks a reader runs in order: every guide page and getting started
RUNNABLE_PAGES = sorted(p.relative_to(DOCS).as_posix() for p in [*(DOCS / "guide").glob("*.md"),
                                                                 DOCS / "getting_started.md"]
                        if any(info.strip() == "python" for info, _ in _code_blocks(p.read_text())))
# a block for optional packages says so on its first line: "# needs: pgmpy, pyagrum"
NEEDS = re.compile(r"# needs: ([\w, ]+)$")


@pytest.mark.parametrize("page", RUNNABLE_PAGES)
def test_guide_page_blocks_run_in_order_from_an_empty_folder(page, tmp_path, monkeypatch):
    """Every Python block of the page, in page order, in one namespace, from an empty
    folder: the page loads a bundled data set or makes the data and files it uses. A
    block that needs optional packages names them on its first line (``# needs: ...``)
    and runs where they are installed; nothing later may depend on it."""
    import importlib.util
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)
    assert not list(tmp_path.iterdir())
    blocks = [body for info, body in _code_blocks((DOCS / page).read_text()) if info.strip() == "python"]
    ns: dict = {}
    left_out = []
    try:
        for i, body in enumerate(blocks):
            needs = NEEDS.match(body.splitlines()[0])
            if needs and not all(importlib.util.find_spec(m.strip()) for m in needs.group(1).split(",")):
                left_out.append(i)
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # what a block prints or warns is not checked here
                exec(compile(body, f"{page}, Python block {i + 1}", "exec"), ns)
    finally:
        plt.close("all")
    assert len(left_out) < len(blocks)
    if left_out:
        pytest.skip(f"{page}: blocks {[i + 1 for i in left_out]} need optional packages not installed")


def test_guide_pages_run_blocks_and_document_new_type():
    """The pages above are the guide's (a page whose blocks cannot run is not left out by
    having none); the multi-domain page documents adapt's ``new_type=`` with an example."""
    assert {"getting_started.md", "guide/classifiers.md", "guide/estimators.md", "guide/multidomain.md",
            "guide/python.md", "guide/queries.md", "guide/scale.md", "guide/updating.md"} <= set(RUNNABLE_PAGES)
    text = (DOCS / "guide" / "multidomain.md").read_text()
    code = "\n".join(body for info, body in _code_blocks(text) if info.strip() == "python")
    assert "new_type=1" in code and "`new_type=`" in text

"""The vignettes (``vignettes/NN_name.py``), every one and any added later:

* each runs end to end in its reduced mode and still computes what its recorded output
  claims: every number its prose quotes is a template (``{{expr}}``) whose value the
  quick run must reproduce from ``NN_name.claims.json`` (written by ``python
  vignettes/run.py --record``), so a change of the code that changes a quoted number
  fails here until the recorded outputs are regenerated;
* the recorded ``NN_name.md`` is the script's latest full run: its code cells as the
  script has them, its prose with the recorded full run's values, its figures present
  (or, recorded with ``--record --quick``, its latest quick run, saying at its top and in
  its last line that it is a reduced run);
* the prose quotes this run's results only through templates, says how long the full
  run takes and what it needs;
* ``run.py`` writes nothing tracked unless asked (``--record``), runs the cells in a
  scratch folder, and a traceback or a broken template names the script's own line.
"""

from __future__ import annotations

import json
import re
import sys
import traceback
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VIGNETTES = ROOT / "vignettes"
sys.path.insert(0, str(VIGNETTES))
import run as runner  # noqa: E402

SCRIPTS = runner.vignettes()
REGENERATE = "python vignettes/run.py --record vignettes/{name}"

# result-like numbers in prose: win-draw-loss, "9 of 10", "13 years of 20", decimals,
# ratios ("2.8x"), percentages (but not a setting: "at 5%", "a 90% interval", "20% of cells")
RESULT_NUMBER = re.compile(
    r"\b\d+-\d+-\d+\b|\b\d+ (?:\w+ )?of (?:the )?\d+\b|(?<![\w.])\d+\.\d+(?![\w.])|\b\d+(?:\.\d+)?x\b"
    r"|(?<!at )(?<!above )\b\d+(?:\.\d+)?%(?! (?:credible |query )?intervals?| MCAR| MAR| of (?:the )?cells)"
)
# what is not a result of the run: code spans, templates, link targets, citations
NOT_RESULTS = re.compile(
    r"`[^`]*`|\{\{.*?\}\}|\]\([^)]*\)|(?:Sec\.|Secs\.|Section|Ch\.|App\.|Table|Tables|Fig\.|Figs\.|eq\.|eqs\.)"
    r" ?[A-Z]?\d+(?:\.\d+)*(?:-\d+(?:\.\d+)*)?",
    re.S,
)
DURATION = re.compile(r"full run takes about (a|an|\d+) (seconds?|minutes?)")


def _ids(p: Path) -> str:
    return p.name


@pytest.mark.parametrize("script", SCRIPTS, ids=_ids)
def test_vignette_runs_quick_and_still_computes_its_recorded_claims(script, tmp_path):
    pytest.importorskip("matplotlib")
    record = runner.load_record(script)
    assert record is not None, f"no {runner.record_path(script).name}: {REGENERATE.format(name=script.name)}"
    result = runner.run(script, tmp_path, quick=True)
    text = result.markdown.read_text()
    assert text.count("```python") >= 3
    problems = runner.compare(record["quick"], result.claims)
    assert not problems, (
        f"{script.name}: the code no longer computes what the recorded output claims (a quick rerun differs "
        f"from the recorded quick run):\n  " + "\n  ".join(problems)
        + f"\nIf the change is intended, regenerate the recorded output: {REGENERATE.format(name=script.name)}"
    )


def _recorded_run(record: dict) -> str:
    """Which run the recorded Markdown shows: "full", or "quick" for a reduced record."""
    return "quick" if record.get("reduced") else "full"


def _expected_blocks(script: Path, record: dict) -> list[tuple[int, str]]:
    """(line, text) of every cell as the recorded Markdown must show it (a reduced record:
    the note that says so below the introduction)."""
    values = iter(record[_recorded_run(record)])
    out = []
    for cell in runner.cells(script.read_text()):
        if cell.kind == "code":
            out.append((cell.line, "```python\n" + cell.text + "\n```\n"))
        else:
            out.append((cell.line, runner.TEMPLATE.sub(lambda m: next(values)["value"], cell.text)))
            if record.get("reduced") and len(out) == 1:
                out.append((cell.line, runner.REDUCED_NOTE.format(name=script.name)))
    return out


@pytest.mark.parametrize("script", SCRIPTS, ids=_ids)
def test_recorded_output_is_the_scripts_latest_run(script):
    record = runner.load_record(script)
    md_path = script.with_suffix(".md")
    hint = f"regenerate it: {REGENERATE.format(name=script.name)}"
    assert record is not None and md_path.exists(), hint
    kind = _recorded_run(record)
    exprs = [e for c in runner.cells(script.read_text()) if c.kind == "markdown" for _, e in runner.templates(c.text)]
    assert exprs == [c["expr"] for c in record[kind]] == [c["expr"] for c in record["quick"]], (
        f"{script.name}'s templates are not the recorded ones: {hint}")
    md = md_path.read_text()
    pos = 0
    for line, block in _expected_blocks(script, record):
        found = md.find(block, pos)
        assert found >= 0, f"{md_path.name} does not show the cell at {script.name}:{line} as recorded: {hint}"
        pos = found + len(block)
    footer = (" (a reduced run)" if kind == "quick" else "") + f" in {record['seconds'][kind]:.0f} s"
    assert footer in md[pos:], hint
    assert ("--quick " in md[pos:]) == (kind == "quick"), hint
    figures = re.findall(r"\]\((figures/[^)]+)\)", md)
    assert all((VIGNETTES / f).exists() for f in figures), figures


def test_vignette_prose_quotes_results_only_through_templates():
    """A number a sentence quotes from the run is a template, so that the quick rerun above
    checks it; literal numbers are the vignette's own settings or citations."""
    found = []
    for script in SCRIPTS:
        seen_code = False
        for cell in runner.cells(script.read_text()):
            seen_code |= cell.kind == "code"
            if cell.kind != "markdown" or not seen_code:  # the introduction describes the protocol
                continue
            text = NOT_RESULTS.sub(" ", " ".join(cell.text.split()))
            found += [f"{script.name}:{cell.line}: {m.group(0)!r}" for m in RESULT_NUMBER.finditer(text)]
    assert not found, "numbers quoted without a template ({{expression}}):\n" + "\n".join(found)


def test_vignettes_say_how_long_they_take_and_what_they_need():
    for script in SCRIPTS:
        intro = runner.cells(script.read_text())[0].text
        m = DURATION.search(" ".join(intro.split()))
        assert m and "--quick" in intro, f"{script.name}: its introduction says how long the full run takes"
        n = 1 if m.group(1) in ("a", "an") else int(m.group(1))
        said = n * (60 if m.group(2).startswith("minute") else 1)
        record = runner.load_record(script)
        full = record.get("last_full") if record.get("reduced") else {"cpu_seconds": record["cpu_seconds"]["full"]}
        # processor time of the recorded full run (steadier than the clock on a shared machine):
        # the stated time within a factor of 3 (a reduced record keeps the last full run's time;
        # without one there is no full run to compare with)
        if full is not None:
            recorded = full["cpu_seconds"]
            assert recorded / 3 <= said <= recorded * 3 or (said <= 10 and recorded <= 10), (script.name, said,
                                                                                             recorded)
        if re.search(r"^import matplotlib|^from matplotlib", script.read_text(), re.M):
            assert '".[plot]"' in intro, f"{script.name} needs matplotlib: its introduction says so"
        # a vignette finds its files beside itself, never through the installed package
        assert not re.search(r"(bs|pybncsmooth)\.__file__", script.read_text()), script.name
    examples = (ROOT / "docs" / "examples" / "index.md").read_text()
    assert '".[plot]"' in examples and "--quick" in examples and "--record" in examples


_TOY = '''# %% [markdown]
# # A toy vignette
#
# The full run takes about 1 second; `--quick` is quicker.

# %%
import os
import time
from pathlib import Path

import matplotlib.pyplot as plt

QUICK = os.environ.get("PYBNCSMOOTH_VIGNETTE_QUICK") == "1"
VALUE = {value} if QUICK else 10 * {value}
t0 = time.perf_counter()
Path("stray.txt").write_text("a file the vignette writes")
Path("figures").mkdir(exist_ok=True)
plt.plot([1, 2], [VALUE, VALUE])
plt.savefig("figures/toy.png")
print("value", VALUE)

# %% [markdown]
# The run computed {{{{VALUE}}}} in {{{{~time.perf_counter() - t0:.6f}}}} s.
'''


def _toy(folder: Path, value: int = 3) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "01_toy.py"
    script.write_text(_TOY.format(value=value))
    return script


def test_run_py_writes_an_output_folder_and_records_only_when_asked(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    script = _toy(tmp_path / "vignettes")
    monkeypatch.chdir(tmp_path)
    assert runner.main([str(script)]) == 0  # a full run, into ./vignette-output
    out = tmp_path / "vignette-output"
    assert "The run computed 30 in" in (out / "01_toy.md").read_text()
    assert (out / "figures" / "toy.png").exists()
    # nothing beside the script, and the files the cells wrote stayed in their scratch folder
    assert sorted(p.name for p in script.parent.iterdir()) == ["01_toy.py"]
    assert not (tmp_path / "stray.txt").exists() and not (out / "stray.txt").exists()
    assert runner.main(["--quick", "--out", str(tmp_path / "q"), str(script)]) == 0
    assert "The run computed 3 in" in (tmp_path / "q" / "01_toy.md").read_text()
    # --record: the recorded .md, its figure and the claims of both runs, beside the script
    assert runner.main(["--record", str(script)]) == 0
    assert sorted(p.name for p in script.parent.iterdir()) == ["01_toy.claims.json", "01_toy.md", "01_toy.py",
                                                               "figures"]
    rec = json.loads((script.parent / "01_toy.claims.json").read_text())
    assert [(c["expr"], c["machine"]) for c in rec["full"]] == [("VALUE", False), ("time.perf_counter() - t0:.6f", True)]
    assert rec["full"][0]["value"] == "30" and rec["quick"][0]["value"] == "3"
    assert runner.check(script) == []  # the code computes what was recorded (the time is not compared)
    # the code changes what it computes: the check fails, naming the template and both values
    script.write_text(_TOY.format(value=4))
    problems = runner.check(script)
    assert len(problems) == 1 and "{{VALUE}} recorded '3', now '4'" in problems[0]
    assert runner.main(["--check", str(script)]) == 1
    # --record --quick: the quick run alone, and the recorded .md says that it is a reduced run
    assert runner.main(["--record", "--quick", str(script)]) == 0
    rec = json.loads((script.parent / "01_toy.claims.json").read_text())
    assert rec["reduced"] is True and "full" not in rec and rec["quick"][0]["value"] == "4"
    assert rec["last_full"]["seconds"] > 0  # the full run recorded above
    md = (script.parent / "01_toy.md").read_text()
    assert "The run computed 4 in" in md and "**This recorded output is a reduced run**" in md
    assert md.rstrip().endswith(".*") and "--quick vignettes/01_toy.py` (a reduced run) in" in md
    assert runner.check(script) == []


def test_run_py_tracebacks_and_template_errors_name_the_scripts_line(tmp_path):
    script = tmp_path / "01_broken.py"
    script.write_text("# %% [markdown]\n# # Broken\n\n# %%\nx = 1\n\n# %%\ny = 2\nraise ValueError('boom')\n")
    with pytest.raises(ValueError) as err:
        runner.run(script, tmp_path / "out")
    last = traceback.extract_tb(err.tb)[-1]
    assert (last.filename, last.lineno, last.line) == (str(script), 9, "raise ValueError('boom')")
    script.write_text("# %%\nx = 1\n\n# %% [markdown]\n# Fine {{x}},\n# broken {{y + 1}}.\n")
    with pytest.raises(runner.VignetteError, match=rf"{re.escape(str(script))}:6: template \{{\{{y \+ 1\}}\}}: NameError"):
        runner.run(script, tmp_path / "out")

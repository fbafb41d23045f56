"""Run vignette scripts and keep their output as Markdown.

A vignette is a Python script cut into cells by lines starting with ``# %%``; a cell
headed ``# %% [markdown]`` holds Markdown in comment lines.  Code cells run in one
namespace, in a scratch working folder; what they print is kept under them, and the
figures they save under ``figures/`` are copied beside the Markdown output.

A number the prose quotes from the run is written as a template, ``{{expression}}`` or
``{{expression:format}}`` (an f-string field evaluated in the vignette's namespace when
the cell is reached), so the sentence shows what this run computed.  ``{{~expression}}``
marks a measurement of the machine (a time), which a rerun elsewhere does not
reproduce.

    python vignettes/run.py vignettes/05_hls.py         # full run, into ./vignette-output/
    python vignettes/run.py --quick vignettes/*.py       # reduced runs (what the tests run)
    python vignettes/run.py --record                     # regenerate every recorded output
    python vignettes/run.py --check vignettes/05_hls.py  # does the code still compute the record?

``--quick`` sets ``PYBNCSMOOTH_VIGNETTE_QUICK=1``, which vignettes read to shrink their
loops.  ``--record`` (all vignettes, or the scripts named) runs each one quick, then in
full, and rewrites the recorded files beside the script: ``NN_name.md``, its figures in
``figures/`` and ``NN_name.claims.json``, the value of every template in both runs and
their times.  The test suite reruns each vignette quick and fails where a template's
value differs from the recorded quick run's: the code and the recorded claims have
parted ways, and ``--record`` brings them together again.  Nothing tracked is written
without ``--record``.

``--record --quick`` records the quick run alone, for when there is no time for the full
one: the recorded ``NN_name.md`` then says at its top and in its last line that it is a
reduced run, and ``NN_name.claims.json`` has ``"reduced": true`` and no full run (it
keeps the last full run's date and times, if there was one, under ``"last_full"``).  The
tests hold a reduced record to the same checks against the quick run; a page that quotes
a vignette's figures (the benchmarks page) refuses a reduced one.

    python vignettes/run.py --record --quick vignettes/05_hls.py  # a reduced record
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUICK_ENV = "PYBNCSMOOTH_VIGNETTE_QUICK"
#: ``{{expr}}``, ``{{expr:fmt}}``, ``{{~expr}}`` (a measurement of the machine)
TEMPLATE = re.compile(r"\{\{(~?)\s*(.+?)\s*\}\}", re.S)


@dataclass(frozen=True)
class Cell:
    kind: str  # "code" or "markdown"
    text: str  # the code, or the Markdown without its comment marks
    line: int  # line of the script where the cell's text starts (1-based)


@dataclass
class Run:
    """What one run of a vignette produced."""

    markdown: Path
    seconds: float  # wall-clock
    cpu_seconds: float  # the process's processor time (all its threads)
    claims: list[dict] = field(default_factory=list)  # {"expr", "machine", "value", "line"}


class VignetteError(RuntimeError):
    """A template of a vignette's prose that does not evaluate."""


def vignettes() -> list[Path]:
    """Every vignette beside this runner."""
    return sorted(HERE.glob("[0-9][0-9]_*.py"))


def cells(text: str) -> list[Cell]:
    """The cells of a vignette script, each with the line its text starts on."""
    raw: list[tuple[str, int, list[str]]] = []
    kind, start, buf = "code", 1, []
    for i, line in enumerate(text.splitlines(), start=1):
        if line.startswith("# %%"):
            raw.append((kind, start, buf))
            kind, start, buf = ("markdown" if "[markdown]" in line else "code"), i + 1, []
        else:
            buf.append(line)
    raw.append((kind, start, buf))
    out = []
    for kind, start, lines in raw:
        while lines and not lines[0].strip():  # leading blank lines: the cell starts below them
            lines, start = lines[1:], start + 1
        if not any(l.strip() for l in lines):
            continue
        if kind == "markdown":
            body = "\n".join(l[2:] if l.startswith("# ") else l.lstrip("#") for l in lines).strip()
        else:
            body = "\n".join(lines).rstrip()
        out.append(Cell(kind, body, start))
    return out


def templates(text: str) -> list[tuple[bool, str]]:
    """``(machine, expression)`` of every template of a Markdown text, in order."""
    return [(m.group(1) == "~", m.group(2)) for m in TEMPLATE.finditer(text)]


def _compiles(code: str) -> bool:
    try:
        compile(code, "<template>", "eval")
    except SyntaxError:
        return False
    return True


def _field(code: str) -> tuple[str, str | None] | None:
    """``(expression, conversion)`` of an f-string field's head, or None if it is not one."""
    conv = re.fullmatch(r"(.*)!([rsa])\s*", code, re.S)
    if conv and _compiles(conv.group(1)):
        return conv.group(1), conv.group(2)
    return (code, None) if _compiles(code) else None


def evaluate(expr: str, ns: dict, where: str = "<template>") -> str:
    """A template's text: ``expr`` as an f-string field (``expression[!conversion][:format]``)
    evaluated in ``ns``; the expression may hold quotes of both kinds."""
    head, spec = expr, ""
    for i in range(len(expr) - 1, -1, -1):  # the last ':' after a whole expression starts the format
        if expr[i] == ":" and _field(expr[:i]) is not None:
            head, spec = expr[:i], expr[i + 1 :]
            break
    code, conv = _field(head) or (head, None)
    value = eval(compile(code, where, "eval"), ns)  # noqa: S307
    if conv:
        value = {"r": repr, "s": str, "a": ascii}[conv](value)
    return format(value, spec)


def render(cell: Cell, ns: dict, path: Path) -> tuple[str, list[dict]]:
    """A Markdown cell with its templates evaluated in ``ns``, and their values."""
    claims: list[dict] = []

    def value(m: re.Match) -> str:
        expr = m.group(2)
        line = cell.line + cell.text[: m.start()].count("\n")
        try:
            text = evaluate(expr, ns, f"{path}:{line}")
        except Exception as exc:  # a template that does not evaluate names its line
            raise VignetteError(f"{path}:{line}: template {{{{{m.group(1)}{expr}}}}}: "
                                f"{type(exc).__name__}: {exc}") from exc
        claims.append({"expr": expr, "machine": m.group(1) == "~", "value": text, "line": line})
        return text

    return TEMPLATE.sub(value, cell.text), claims


@contextlib.contextmanager
def _quick_mode(quick: bool):
    old = os.environ.get(QUICK_ENV)
    os.environ[QUICK_ENV] = "1" if quick else "0"
    os.environ.setdefault("MPLBACKEND", "Agg")
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(QUICK_ENV, None)
        else:
            os.environ[QUICK_ENV] = old


REDUCED_NOTE = (
    "> **This recorded output is a reduced run** (`--quick`: the smaller settings the introduction "
    "describes), not the full run: its figures and numbers are not the full run's. "
    "`python vignettes/run.py vignettes/{name}` runs it in full.\n"
)


def run(path: Path, out_dir: Path, *, quick: bool = False, reduced_note: bool = False) -> Run:
    """Run the vignette ``path`` and write ``out_dir/NN_name.md`` (and its figures).

    The cells run in a scratch folder, so files a vignette writes stay out of the
    repository; a traceback points at the script's own lines. ``reduced_note`` (a quick
    run recorded as the vignette's output) says so below the introduction."""
    path = Path(path).resolve()
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    ns: dict = {"__name__": "__vignette__", "__file__": str(path)}
    md: list[str] = []
    claims: list[dict] = []
    t0, c0 = time.perf_counter(), time.process_time()
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="vignette-") as scratch, _quick_mode(quick):
        os.chdir(scratch)
        try:
            for cell in cells(path.read_text()):
                if cell.kind == "markdown":
                    text, found = render(cell, ns, path)
                    md.append(text + "\n")
                    claims += found
                    if reduced_note and len(md) == 1:
                        md.append(REDUCED_NOTE.format(name=path.name))
                    continue
                md.append("```python\n" + cell.text + "\n```\n")
                buf = io.StringIO()
                with contextlib.redirect_stdout(buf):
                    # padded to the cell's first line: tracebacks name the script's lines
                    exec(compile("\n" * (cell.line - 1) + cell.text, str(path), "exec"), ns)  # noqa: S102
                text = buf.getvalue().rstrip()
                if text:
                    md.append("```\n" + text + "\n```\n")
        finally:
            os.chdir(cwd)
        figures = Path(scratch) / "figures"
        if figures.is_dir():
            shutil.copytree(figures, out_dir / "figures", dirs_exist_ok=True)
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    how = "--quick " if quick else ""
    what = " (a reduced run)" if quick else ""
    md.append(f"\n*Generated by `python vignettes/run.py {how}vignettes/{path.name}`{what} in {secs:.0f} s "
              f"on {datetime.date.today().isoformat()}.*\n")
    out = out_dir / (path.stem + ".md")
    out.write_text("\n".join(md))
    return Run(out, secs, cpu, claims)


def record_path(script: Path) -> Path:
    """The recorded claims of a vignette: ``NN_name.claims.json`` beside it."""
    return script.with_name(script.stem + ".claims.json")


def load_record(script: Path) -> dict | None:
    path = record_path(script)
    return json.loads(path.read_text()) if path.exists() else None


def _values(claims: list[dict]) -> list[dict]:
    return [{k: c[k] for k in ("expr", "machine", "value")} for c in claims]


def _last_full(old: dict | None) -> dict | None:
    """The date and times of the last full run a record knows of."""
    if old is None:
        return None
    if not old.get("reduced"):
        return {"date": old["date"], "seconds": old["seconds"]["full"], "cpu_seconds": old["cpu_seconds"]["full"]}
    return old.get("last_full")


def record(script: Path, *, reduced: bool = False) -> Path:
    """Regenerate a vignette's recorded output: a quick run (its claims, and a check that
    every template evaluates before the long run), then the full run into the script's
    folder, then ``NN_name.claims.json``. ``reduced``: the quick run alone is recorded,
    and its output says that it is a reduced run."""
    script = Path(script).resolve()
    today = datetime.date.today().isoformat()
    if reduced:
        quick = run(script, script.parent, quick=True, reduced_note=True)
        data = {"script": script.name, "date": today, "reduced": True,
                "seconds": {"quick": quick.seconds}, "cpu_seconds": {"quick": quick.cpu_seconds},
                "quick": _values(quick.claims), "last_full": _last_full(load_record(script))}
    else:
        with tempfile.TemporaryDirectory(prefix="vignette-quick-") as tmp:
            quick = run(script, Path(tmp), quick=True)
        full = run(script, script.parent, quick=False)
        data = {
            "script": script.name,
            "date": today,
            "seconds": {"full": full.seconds, "quick": quick.seconds},
            "cpu_seconds": {"full": full.cpu_seconds, "quick": quick.cpu_seconds},
            "full": _values(full.claims),
            "quick": _values(quick.claims),
        }
    path = record_path(script)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return path


def compare(recorded: list[dict], now: list[dict]) -> list[str]:
    """Where a run's templates differ from the recorded ones: another expression, or
    another value (measurements of the machine, ``{{~...}}``, are not compared)."""
    if [c["expr"] for c in recorded] != [c["expr"] for c in now]:
        return [f"the templates changed: recorded {[c['expr'] for c in recorded]}, "
                f"now {[c['expr'] for c in now]}"]
    return [f"line {c.get('line', '?')}: {{{{{c['expr']}}}}} recorded {r['value']!r}, now {c['value']!r}"
            for r, c in zip(recorded, now) if not c["machine"] and r["value"] != c["value"]]


def check(script: Path) -> list[str]:
    """A quick run of ``script`` compared with its recorded quick run."""
    rec = load_record(script)
    if rec is None:
        return [f"{script.name} has no {record_path(script).name}: run `python vignettes/run.py --record "
                f"vignettes/{script.name}`"]
    with tempfile.TemporaryDirectory(prefix="vignette-check-") as tmp:
        now = run(script, Path(tmp), quick=True)
    return compare(rec["quick"], now.claims)


def _announce(script: Path, quick: bool) -> None:
    rec = load_record(script)
    full = None if rec is None else (rec.get("last_full") if rec.get("reduced") else
                                     {"cpu_seconds": rec["cpu_seconds"]["full"]})
    if full is not None:
        print(f"{script.name}: the last recorded full run took {full['cpu_seconds']:.0f} s of processor time, "
              f"the quick one {rec['cpu_seconds']['quick']:.0f} s"
              f" ({'quick run' if quick else 'full run; --quick for the reduced one'})", file=sys.stderr,
              flush=True)


def _one(script: Path, args: argparse.Namespace) -> int:
    if args.record:
        print(f"wrote {record(script, reduced=args.quick)}", flush=True)
        return 0
    if args.check:
        problems = check(script)
        for p in problems:
            print(f"{script.name}: {p}", flush=True)
        if problems:
            print(f"{script.name}: the code no longer computes what the recorded output claims; "
                  f"`python vignettes/run.py --record vignettes/{script.name}` regenerates it", flush=True)
        return 1 if problems else 0
    _announce(script, args.quick)
    print(f"wrote {run(script, args.out, quick=args.quick).markdown}", flush=True)
    return 0


def _in_processes(scripts: list[Path], args: argparse.Namespace) -> int:
    """Each script in a process of its own, ``args.jobs`` at a time."""
    flags = [f"--{name}" for name in ("quick", "record", "check") if getattr(args, name)]

    def one(script: Path) -> int:
        cmd = [sys.executable, str(Path(__file__).resolve()), *flags, "--out", str(args.out), str(script)]
        return subprocess.run(cmd).returncode

    with ThreadPoolExecutor(args.jobs) as pool:
        return max(pool.map(one, scripts), default=0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scripts", nargs="*", type=Path, help="vignette scripts (default: every vignette)")
    ap.add_argument("--quick", action="store_true", help=f"reduced run (sets {QUICK_ENV}=1)")
    ap.add_argument("--out", type=Path, default=Path("vignette-output"),
                    help="folder for the .md and its figures (default: ./vignette-output)")
    ap.add_argument("--record", action="store_true",
                    help="regenerate the recorded .md, figures and .claims.json beside each script "
                         "(with --quick: the quick run alone, marked in the .md as a reduced run)")
    ap.add_argument("--check", action="store_true",
                    help="rerun quick and compare the templates' values with the recorded quick run")
    ap.add_argument("--jobs", type=int, default=1, help="scripts run in this many processes at once")
    args = ap.parse_args(argv)
    if args.record and args.check:
        ap.error("--record writes the recorded output, --check compares a run with it: one or the other")
    scripts = [s.resolve() for s in args.scripts] or vignettes()
    if args.jobs > 1 and len(scripts) > 1:
        return _in_processes(scripts, args)
    return max(_one(s, args) for s in scripts)


if __name__ == "__main__":
    sys.exit(main())

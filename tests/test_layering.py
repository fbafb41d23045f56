"""The package's layering, read from its source: imports flow down the pipeline
(data, structure, counting, estimators, model, interop, pipeline and structure
learning, classifiers, front ends), no private name crosses a package, no function
outside the compiled kernels is longer than 60 lines (docstrings aside), and comments and
docstrings cite papers by author and year, never by a file number or an issue.  These are
the architecture's rules: a test so that they stay true."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "pybncsmooth"

# bottom first; a module may import its own layer and the layers below it
LAYERS = [
    {"errors", "_cache", "_jit", "_atomic", "_lazy", "validation", "options"},
    {"data"},
    {"structure"},
    {"counting"},
    {"estimators"},
    {"model"},
    {"interop"},
    {"pipeline", "datasets", "learning"},
    {"classifiers"},
    {"frontends"},
]
LAYER = {name: i for i, names in enumerate(LAYERS) for name in names}


def _modules() -> dict[str, Path]:
    mods = {}
    for p in PKG.rglob("*.py"):
        parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    return mods


MODULES = _modules()


def _imports(mod: str, path: Path) -> list[tuple[str, str, int]]:
    """(imported module, imported name, line) of every package-internal import,
    module-level and function-level alike."""
    tree = ast.parse(path.read_text())
    base = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                target = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("pybncsmooth"):
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    out.append((full if full in MODULES else target, alias.name, node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, "", node.lineno) for a in node.names if a.name.startswith("pybncsmooth")]
    return out


def _layer(mod: str) -> int | None:
    parts = mod.split(".")
    return LAYER.get(parts[1]) if len(parts) > 1 else None


def test_every_subpackage_has_a_layer():
    tops = {m.split(".")[1] for m in MODULES if m.count(".") >= 1}
    assert tops <= set(LAYER), f"modules outside the layering: {sorted(tops - set(LAYER))}"


def test_no_import_runs_up_the_layering():
    up = []
    for mod, path in MODULES.items():
        here = _layer(mod)
        if here is None:  # the package's own __init__ gathers the public names
            continue
        for target, _, line in _imports(mod, path):
            there = _layer(target)
            if there is not None and there > here:
                up.append(f"{mod}:{line} imports {target}")
    assert not up, "imports running up the layering:\n" + "\n".join(up)


def test_no_private_name_crosses_a_package():
    bad = []
    for mod, path in MODULES.items():
        for target, name, line in _imports(mod, path):
            if name.startswith("_") and not name.startswith("__") and target.split(".")[:2] != mod.split(".")[:2]:
                bad.append(f"{mod}:{line} imports {name} from {target}")
    assert not bad, "\n".join(bad)


def _cycles() -> list[set[str]]:
    graph = {m: {t for t, _, _ in _imports(m, p) if t in MODULES and t != m} for m, p in MODULES.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_at_most_the_dag_constructors_circle():
    # DAG.from_modelstring / from_formulas / modelstring() call the parsers, which build DAGs
    allowed = {"pybncsmooth.structure.dag", "pybncsmooth.structure.formula", "pybncsmooth.structure.modelstring"}
    cycles = _cycles()
    assert all(c <= allowed for c in cycles), [sorted(c) for c in cycles]
    assert len(cycles) <= 1


def _compiled(node: ast.AST) -> bool:
    """A numba kernel: a function decorated with ``njit`` / ``jit`` (and the like)."""
    return any("jit" in ast.unparse(d) or "intrinsic" in ast.unparse(d) for d in node.decorator_list)


def _length(node: ast.AST) -> int:
    """Lines of a function, its docstring aside."""
    n = node.end_lineno - node.lineno + 1
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        n -= body[0].end_lineno - body[0].lineno + 1
    return n


@pytest.mark.parametrize("mod", sorted(MODULES))
def test_functions_are_at_most_60_lines(mod):
    tree = ast.parse(MODULES[mod].read_text())
    long = [
        f"{node.name} ({_length(node)} lines)"
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _compiled(node) and _length(node) > 60
    ]
    assert not long, f"{mod}: " + ", ".join(long)


def test_citations_resolve_and_comments_say_what_not_when():
    """No "paper 001" / "thesis 002" (files no reader of the package has), no issue
    numbers; and no docstring holds a control character (a ``\\t`` of ``\\theta`` read as
    a tab in a string that is not raw)."""
    import re

    bad = []
    pattern = re.compile(r"\b(?:paper|thesis)\s+00[0-9]\b|\bissue\s+[0-9]+|\b00[0-4]\s+Sec\b|\bpapers? 00[0-4]")
    for mod, path in MODULES.items():
        text = path.read_text()
        for i, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                bad.append(f"{mod}:{i}: {line.strip()[:80]}")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Module, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False) or ""
                if any(ord(c) < 32 and c != "\n" for c in doc):
                    bad.append(f"{mod}: a control character in the docstring of {getattr(node, 'name', 'the module')}")
    assert not bad, "\n".join(bad)


def test_classifier_wrapper_is_small():
    assert len((PKG / "classifiers" / "classifier.py").read_text().splitlines()) <= 450


#: what ``import pybncsmooth`` must leave unimported: each costs a large part of a second
#: (numba more than pandas and NumPy together) and is imported when first used
HEAVY = ("sklearn", "scipy", "scipy.stats", "scipy.special", "scipy.optimize", "statsmodels", "matplotlib", "rpy2",
         "numba", "tqdm", "networkx", "pgmpy", "pyagrum", "xml.etree.ElementTree", "importlib.metadata")


def _fresh_modules(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code`` (this checkout's package)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PKG.parent), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, env=env, check=True)
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_importing_the_package_leaves_the_heavy_modules_unimported():
    """A fresh ``import pybncsmooth`` (and its public names, its command line's parser)
    imports none of :data:`HEAVY`; the lazy public names still arrive when asked for."""
    loaded = _fresh_modules("import pybncsmooth as bs\nassert callable(bs.fit) and bs.DAG and bs.read_network\n"
                            "from pybncsmooth.frontends import cli")
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
    assert "pybncsmooth.classifiers" not in loaded and "pybncsmooth.data.discretize" not in loaded
    used = _fresh_modules("import pybncsmooth as bs\nassert bs.BNClassifier.__name__ == 'BNClassifier'\n"
                          "assert isinstance(bs.__version__, str)\nassert 'EqualWidthDiscretizer' in dir(bs)\n"
                          "assert bs.classifiers.BNClassifier is bs.BNClassifier\n"
                          "from pybncsmooth import MDLDiscretizer, learn_skdb")
    assert {"sklearn", "pybncsmooth.classifiers"} <= used


def test_a_formula_fit_of_a_classifier_structure_imports_neither_scikit_learn_nor_scipy_stats():
    """``bs.fit("Class ~ .", df, structure="kdb")`` (no discretiser) needs neither
    scikit-learn nor ``scipy.stats``: a fresh process fitting one pays neither import
    (about 1 s together); asking for the classifier or a discretiser still brings them."""
    fit = ("import pandas as pd, pybncsmooth as bs\n"
           "df = pd.DataFrame({'Class': list('ab') * 10, 'A': list('xyz') * 6 + ['x', 'y'], 'B': list('uv') * 10})\n"
           "net = bs.fit('Class ~ .', df, structure='kdb', k=1)\n"
           "assert net.parents('B') == ['Class', 'A'] or net.parents('B') == ['Class']\n")
    loaded = _fresh_modules(fit)
    assert loaded.isdisjoint({"sklearn", "scipy.stats", "statsmodels"}), sorted(loaded & {"sklearn", "scipy.stats"})
    assert "pybncsmooth.classifiers.formula" in loaded
    assert "sklearn" in _fresh_modules(fit + "net2 = bs.fit('Class ~ .', df.assign(N=range(20)), discretize='equal_frequency')")


def test_a_kernel_is_compiled_when_first_called_and_then_is_numba_s():
    """The compiled kernels load numba on their first call: before it, a kernel module's
    names are stand-ins; after it, the module's names (its own kernels, those it
    imported, ``uint64``) are numba's objects, so compiled code calls compiled code."""
    loaded = _fresh_modules(
        "import numpy as np, pybncsmooth as bs, sys\n"
        "from pybncsmooth.estimators import _rng\n"
        "from pybncsmooth.estimators.hls import bayes as hls_bayes\n"
        "assert 'numba' not in sys.modules and type(_rng.uniform).__name__ == '_Kernel'\n"
        "s = np.array([1, 2, 3, 4], dtype=np.uint64)\n"
        "x = _rng.uniform(s)\n"
        "assert 0.0 <= x < 1.0 and 'numba' in sys.modules\n"
        "from numba.core.registry import CPUDispatcher\n"
        "assert isinstance(_rng.uniform, CPUDispatcher) and isinstance(hls_bayes.reseed, CPUDispatcher)\n"
        "import numba\nassert hls_bayes.uint64 is numba.uint64")
    assert "numba" in loaded


def test_a_function_compiled_outside_the_package_calls_a_kernel_not_yet_loaded():
    """numba compiling the caller's own function, which calls a package kernel imported
    before numba was, types that kernel as its dispatcher: the draws equal the kernel's
    own, called from Python, on the same generator state."""
    _fresh_modules(
        "import numpy as np\n"
        "from pybncsmooth.estimators._rng import new_state, uniform\n"
        "from numba import njit\n"
        "@njit(cache=False)\n"
        "def two(s):\n"
        "    return uniform(s), uniform(s)\n"
        "a, b = two(new_state(7))\n"
        "s = new_state(7)\n"
        "assert (a, b) == (uniform(s), uniform(s)) and a != b and 0.0 <= min(a, b) < max(a, b) < 1.0")


def test_threads_calling_their_first_kernels_at_once_wait_for_one_binding():
    """Eight threads call a kernel of a fresh process at the same moment: each gets the
    kernel's answer (none meets a stand-in whose dispatcher another thread is still making)."""
    _fresh_modules(
        "import threading\n"
        "import numpy as np\n"
        "from pybncsmooth.estimators._rng import new_state, reseed\n"
        "from pybncsmooth.estimators.closed._kernels import cell_ratio\n"
        "start, out, errors = threading.Barrier(8), [None] * 8, []\n"
        "def run(i):\n"
        "    start.wait()\n"
        "    try:\n"
        "        out[i] = cell_ratio(np.array([0, 2]), np.array([1, 3]), np.array([1.0]), np.array([6.0]))\n"
        "    except Exception as e:\n"
        "        errors.append(repr(e))\n"
        "threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]\n"
        "[t.start() for t in threads]\n"
        "[t.join() for t in threads]\n"
        "assert not errors, errors\n"
        "assert all(o[1].tolist() == [2 / 6, 4 / 6] and o[0].tolist() == [1 / 6] for o in out)")

#: the most modules a folder of the package may hold (``__init__`` counted): past it a
#: reader finds files by prefix, and the folder is split into packages
MAX_MODULES = 15


def _folders() -> dict[str, list[str]]:
    """Every folder of the package: the modules it holds directly."""
    out: dict[str, list[str]] = {}
    for p in PKG.rglob("*.py"):
        if "__pycache__" in p.parts:
            continue
        out.setdefault(str(p.parent.relative_to(PKG.parent)), []).append(p.stem)
    return out


def test_no_folder_holds_more_than_15_modules():
    big = {f: len(m) for f, m in _folders().items() if len(m) > MAX_MODULES}
    assert not big, f"folders past {MAX_MODULES} modules: {big}"


def module_map() -> str:
    """The package's map: each folder's modules and lines, the imports between the
    layers (``from -> to: count``) and how many run up.  ``python tests/test_layering.py``
    prints it."""
    lines = [f"{'folder':<34}{'modules':>8}{'lines':>8}"]
    for folder, mods in sorted(_folders().items()):
        n = sum(len((PKG.parent / folder / f"{m}.py").read_text().splitlines()) for m in mods)
        lines.append(f"{folder + '/':<34}{len(mods):>8}{n:>8}")
    arrows: dict[tuple[str, str], int] = {}
    up = 0
    for mod, path in MODULES.items():
        here = _layer(mod)
        for target, _, _ in _imports(mod, path):
            there = _layer(target)
            if here is None or there is None or target.split(".")[1] == mod.split(".")[1]:
                continue
            key = (mod.split(".")[1], target.split(".")[1])
            arrows[key] = arrows.get(key, 0) + 1
            up += there > here
    lines.append("")
    lines.append("imports between layers (importer -> imported: statements):")
    order = {name: i for i, names in enumerate(LAYERS) for name in sorted(names)}
    for (a, b), n in sorted(arrows.items(), key=lambda kv: (-order[kv[0][0]], -order[kv[0][1]])):
        lines.append(f"  {a} -> {b}: {n}")
    lines.append(f"imports running up the layering: {up}")
    lines.append(f"import cycles: {[sorted(c) for c in _cycles()]}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(module_map())

"""Every option at every entry point: it has its observable effect, or it is refused with
an error naming it.  Parametrised over the declarations (:func:`option_specs`): an
option added tomorrow is tested here without a line of this file changed.

For each option the declaration gives an example value, the other settings it shows its
effect under (``needs``) and its kind of effect: ``"result"`` (the fitted object
differs from the same call without the option: its tables, levels, structure, fit
report or predictions; or the call refuses the value with an error naming the option),
``"same"`` (the result is identical: threads, chunks) or ``"display"`` (a progress bar
appears).  ``random_state`` is checked as a seed: the same value gives the same
result, another value another one.  An option an entry point does not take is refused
with an error naming the option and the entry point's alternative.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import PyBNCSmoothError
from pybncsmooth.frontends.cli import main
from pybncsmooth.options import ENTRY_POINTS, Options, option_specs

DAG_SPEC = "[A][B|A][C|B][Class|A:C][x|Class]"
FORMULA = "Class ~ A + B + C + x"
FEATURES = ["A", "B", "C", "x"]


def _scenario(n: int = 240, seed: int = 0) -> pd.DataFrame:
    """Rows where every option can show itself: missing values in A, an integer column x
    for the discretisers, three sites (domains), integer row weights w."""
    rng = np.random.default_rng(seed)
    A = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    B = np.where(rng.random(n) < 0.7, np.where(A == "a", "x", "y"), rng.choice(["x", "y", "z"], n))
    C = np.where(rng.random(n) < 0.75, np.where(B == "x", "p", "q"), rng.choice(["p", "q"], n))
    site = rng.choice(["s1", "s2", "s3"], n)
    logit = (A == "a") * 1.2 - (C == "q") * 1.0 + (site == "s2") * 0.8
    cls = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "u", "v")
    x = np.clip(np.round(rng.normal(np.where(cls == "u", 1.5, 3.5), 1.2)), 0, 5).astype(np.int64)
    df = pd.DataFrame({"A": A, "B": B, "C": C, "x": x, "Class": cls, "site": site,
                       "w": rng.integers(1, 4, n)})
    df["A"] = df["A"].astype(object)
    df.loc[rng.choice(n, 12, replace=False), "A"] = None
    return df


DATA = _scenario()
UNSEEN = DATA.iloc[:5].copy().assign(B="never")  # a level no fit has seen


def _split(opts: dict) -> tuple[str, dict]:
    """The method (``needs`` may name one) and the remaining settings."""
    opts = dict(opts)
    return opts.pop("method", "bayes"), opts


def _net_fingerprint(net: Any) -> Any:
    """What a fitted network shows: structure, levels, tables, fit report, and how it
    answers rows with an unseen level of B (its on_unseen)."""
    tables = {n: np.round(np.asarray(net.cpt(n)), 12).tolist() for n in net.nodes}
    info = {k: v for k, v in net.info.items() if k in ("n_rows", "n_dropped", "em", "selection", "na_label")}
    target = next((v for v in ("C", "Class") if v in net.nodes and "B" in net.dag.markov_blanket(v)), "Class")
    try:
        unseen = np.round(net.predict_proba(UNSEEN[[c for c in UNSEEN if c in net.nodes]], target), 12)
        unseen = unseen.to_numpy().tolist()
    except PyBNCSmoothError as e:
        unseen = type(e).__name__
    levels = {v: list(map(str, net.levels(v))) for v in [*net.nodes, *([net.domain] if net.domain else [])]}
    return json.dumps([net.modelstring(), levels, tables, info, unseen, _elsewhere(net.predict_proba, target)],
                      sort_keys=True, default=str)


def _elsewhere(predict: Callable, *args: Any) -> Any:
    """How rows of a site no fit has seen are answered (its on_unseen_domain)."""
    rows = DATA.iloc[:5].assign(site="elsewhere").drop(columns=["w", "Class"])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bs.errors.UnseenDomainWarning)
            return np.round(np.asarray(predict(rows.assign(A=rows["A"].fillna("a")), *args)), 12).tolist()
    except PyBNCSmoothError as e:
        return type(e).__name__


def run_fit(opts: dict) -> Any:
    method, rest = _split(opts)
    spec = FORMULA if rest.get("structure") is not None else DAG_SPEC
    return _net_fingerprint(bs.fit(spec, DATA, method, **rest))


def run_classifier(opts: dict) -> Any:
    method, rest = _split(opts)
    X = DATA[[*FEATURES, "site"]]
    clf = bs.BNClassifier(method=method, **rest).fit(X, DATA["Class"])
    try:
        unseen = np.round(clf.predict_proba(UNSEEN[[*FEATURES, "site"]]), 12).tolist()
    except PyBNCSmoothError as e:
        unseen = type(e).__name__
    nets = [_net_fingerprint(n) for n in clf.estimators_]
    return json.dumps([nets, np.round(clf.predict_proba(X), 12).tolist(), unseen, _elsewhere(clf.predict_proba)])


def run_evaluate(opts: dict) -> Any:
    method, rest = _split(opts)
    hyper = {"iterations": rest.pop("iterations")} if "iterations" in rest else {}
    models = {"nb": bs.BNClassifier(structure="nb", method=method, random_state=0, **hyper)}
    res = bs.evaluate(models, DATA[[*FEATURES, "Class"]], "Class", cv="2x2", **rest)
    return res[["repeat", "fold", "zero_one", "rmse", "log_loss"]].round(12).to_json()


def run_evaluate_domains(opts: dict) -> Any:
    method, rest = _split(opts)
    hyper = {"iterations": rest.pop("iterations")} if "iterations" in rest else {}
    settings = {"pooled": {"mode": "pooled", "method": method, **hyper},
                "hier": {"mode": "domain", "method": method, **hyper}}
    ev = bs.evaluate_domains(DAG_SPEC, DATA.drop(columns=[] if "weights" in rest else ["w"]), "site", settings,
                             k_grid=(0, 10), **rest)
    return ev.results.drop(columns=[]).round(12).to_json()


_POPULATION = bs.fit(DAG_SPEC, DATA, "bayes", na="available", domain="site")


def run_adapt(opts: dict) -> Any:
    _, rest = _split(opts)
    rest.pop("iterations", None)  # adapt runs no estimator
    rows = DATA[DATA.site == "s1"].iloc[:30].drop(columns="site")
    new = _POPULATION.adapt(rows, "s9", **rest)
    try:
        odd = _POPULATION.adapt(UNSEEN.drop(columns="site"), "s8", **rest).for_domain("s8").cpt("B").tolist()
    except PyBNCSmoothError as e:
        odd = type(e).__name__
    return json.dumps([_net_fingerprint(new.for_domain("s9")), odd], default=str)


def run_update(opts: dict) -> Any:
    """A network fitted on the first 160 rows (the method ``needs`` names), updated with
    the others under the options."""
    method, rest = _split(opts)
    hyper = {"iterations": rest.pop("iterations")} if "iterations" in rest else {}
    net = bs.fit(DAG_SPEC, DATA.iloc[:160], method, na="available", random_state=0, **hyper)
    return _net_fingerprint(net.update(DATA.iloc[160:], **rest))


RUNNERS: dict[str, Callable[[dict], Any]] = {
    "fit": run_fit,
    "classifier": run_classifier,
    "evaluate": run_evaluate,
    "evaluate_domains": run_evaluate_domains,
    "adapt": run_adapt,
    "update": run_update,
}
#: what every call of an entry point passes (the scenario has missing values)
BASE = {
    "fit": {"na": "available", "random_state": 0},
    "classifier": {"random_state": 0},
    "evaluate": {"random_state": 0},
    "evaluate_domains": {"na": "available", "random_state": 0},
    "adapt": {},
    "update": {},
}
CASES = [(entry, name) for entry in ENTRY_POINTS for name in option_specs()]


@pytest.fixture(autouse=True, scope="module")
def _example_files(tmp_path_factory):
    """An option whose example value names a file (``prior="expert.bif"``) finds it: the
    tests run in a folder holding it (an expert network over the scenario's variables)."""
    folder = tmp_path_factory.mktemp("examples")
    bs.fit(DAG_SPEC + "[site]", DATA, "bayes", na="level").write(folder / "expert.bif")
    here = os.getcwd()
    os.chdir(folder)
    yield
    os.chdir(here)


def test_every_entry_point_has_a_runner():
    assert set(RUNNERS) == set(ENTRY_POINTS) == set(BASE)


def _needs(spec: Any, entry: str) -> dict:
    """The settings the example shows its effect under, those the entry point takes."""
    takes = option_specs(entry)
    return {k: v for k, v in spec.needs.items() if k in takes or k in ("method", "iterations")}


#: an entry point's own parameter whose name is an option's (the option cannot be given there)
SHADOWED = {("adapt", "domain"): "adapt(rows, domain=label) names the new domain; its column is the fit's"}


@pytest.mark.parametrize("entry,name", CASES, ids=[f"{e}-{n}" for e, n in CASES])
def test_option_has_its_effect_or_is_refused(entry, name, capsys):
    if (entry, name) in SHADOWED:
        pytest.skip(SHADOWED[entry, name])
    spec = option_specs()[name]
    run = RUNNERS[entry]
    base = {**BASE[entry], **_needs(spec, entry)}  # the option itself at its entry's base value, if any
    if entry not in spec.entries:
        base.pop(name, None)
        with pytest.raises(PyBNCSmoothError, match=f"{name} does not apply to {entry}"):
            run({**base, name: spec.example})
        return
    with_option = {**base, name: spec.example}
    if spec.kind == "seed":  # the same seed, the same result; another seed, another one
        first = run(with_option)
        assert run(with_option) == first
        assert run({**base, name: spec.example + 1}) != first
        return
    capsys.readouterr()
    before = run(base)
    quiet = capsys.readouterr().err
    try:
        after = run(with_option)
    except PyBNCSmoothError as e:  # refused: the message names the option
        assert spec.effect == "result" and name in str(e), (name, str(e))
        return
    shown = capsys.readouterr().err
    if spec.effect == "result":
        assert after != before, f"{name}={spec.example!r} changed nothing at {entry}"
    elif spec.effect == "same":
        assert after == before, f"{name}={spec.example!r} changed the result at {entry}"
    else:
        assert after == before and len(shown) > len(quiet), f"{name}={spec.example!r} showed nothing at {entry}"


@pytest.mark.parametrize("name", sorted(option_specs("fit")))
def test_the_command_line_takes_every_option_of_fit(name, tmp_path):
    """``pybncsmooth fit --NAME VALUE`` (and ``-p NAME=VALUE``) gives what ``bs.fit``
    gives with the option: the flags come from the declarations."""
    spec = option_specs()[name]
    if spec.kind in ("seed",) or spec.effect == "display":
        pytest.skip("seeds and bars are checked where they apply: the option test above")
    csv = tmp_path / "d.csv"
    DATA.to_csv(csv, index=False)
    base = {**BASE["fit"], **_needs(spec, "fit")}
    base.pop(name, None)
    method, rest = _split({**base, name: spec.example})
    hyper = {"iterations": rest.pop("iterations")} if "iterations" in rest else {}
    spec_arg = FORMULA if rest.get("structure") is not None else DAG_SPEC
    argv = ["fit", str(csv), "-s", spec_arg, "-m", method, "-o", str(tmp_path / "n.pbn")]
    argv += [a for k, v in hyper.items() for a in ("-p", f"{k}={v}")]
    for k, v in rest.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    frame = pd.read_csv(csv, keep_default_na=False, na_values=["", "NA"])
    try:
        ref = bs.fit(spec_arg, frame, method, **rest, **hyper)
    except PyBNCSmoothError:  # refused by the command line too, with status 2
        try:
            status = main(argv)
        except SystemExit as exc:
            status = exc.code
        assert status == 2
        return
    assert main(argv) == 0
    got = bs.read_network(tmp_path / "n.pbn")
    assert got.modelstring() == ref.modelstring() and got.max_abs_diff(ref) < 1e-12
    # the same through -p, given once
    argv_p = [a for a in argv if not a.startswith(f"--{name.replace('_', '-')}")]
    flag = argv.index(f"--{name.replace('_', '-')}")
    del argv_p[argv_p.index(argv[flag + 1])]
    assert main([*argv_p, "-p", f"{name}={spec.example}"]) == 0
    assert bs.read_network(tmp_path / "n.pbn").max_abs_diff(ref) < 1e-12


def test_options_are_built_once_and_carried_whole():
    """The options a fit ends with are those its entry point built: the network keeps
    them (with the column an array of weights became), and so do a classifier's members."""
    net = bs.fit(DAG_SPEC, DATA, "bayes", na="level", na_label="MISSING", max_levels=50, n_jobs=2)
    assert net.options == Options.build("fit", na="level", na_label="MISSING", max_levels=50, n_jobs=2)
    assert "MISSING" in net.levels("A")
    clf = bs.BNClassifier(structure="eskdb", n_estimators=2, method="bayes", na_label="MISSING", n_jobs=2,
                          random_state=0).fit(DATA[FEATURES], DATA["Class"])
    assert all(m.options.na_label == "MISSING" and "MISSING" in m.levels("A") for m in clf.estimators_)
    assert clf.get_params()["na_label"] == "MISSING"
    from sklearn.base import clone

    assert clone(clf).get_params() == clf.get_params()


def test_n_jobs_gives_the_same_result_for_every_method():
    """n_jobs is an option of every method: 1 and 2 threads give the same classifier,
    ESKDB's members fitted in parallel for any estimator."""
    from pybncsmooth.estimators import available_methods

    X, y = DATA[FEATURES], DATA["Class"]
    for method in available_methods():
        hyper = {"iterations": 40} if method in ("hdp", "hls-bayes") else {}
        kw = dict(structure="eskdb", n_estimators=2, k=2, method=method, random_state=3, na="level", **hyper)
        one = bs.BNClassifier(n_jobs=1, **kw).fit(X, y).predict_proba(X)
        two = bs.BNClassifier(n_jobs=2, **kw).fit(X, y).predict_proba(X)
        np.testing.assert_array_equal(one, two, err_msg=method)
        single = dict(structure="kdb", k=2, method=method, random_state=3, na="level", **hyper)
        np.testing.assert_array_equal(bs.BNClassifier(n_jobs=1, **single).fit(X, y).predict_proba(X),
                                      bs.BNClassifier(n_jobs=2, **single).fit(X, y).predict_proba(X), err_msg=method)


def test_the_issue_snippets_honour_their_options():
    """The reproducers: na_label with a naive Bayes formula, max_levels with naive Bayes,
    n_jobs with a closed-form estimator in BNClassifier."""
    d = bs.load_dataset("housevotes84")
    assert bs.fit("Class ~ .", d, na="level", na_label="MISSING", structure="tan").levels("V1")[-1] == "MISSING"
    assert bs.fit("Class ~ .", d, structure="nb", na="level", na_label="MISSING").levels("V1")[-1] == "MISSING"
    wide = pd.DataFrame({"y": np.arange(300) % 2, "x": np.arange(300)})
    for kw in ({}, {"structure": "nb"}):
        with pytest.raises(bs.errors.TooManyLevelsError, match="max_levels=10"):
            bs.fit("y ~ x", wide, max_levels=10, **kw)
    clf = bs.BNClassifier(structure="tan", method="bayes", n_jobs=2).fit(d, "Class")
    assert clf.options_.n_jobs == 2

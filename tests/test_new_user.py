"""What a new user meets first: ``pybncsmooth --version``, a command line that keeps its
progress bars out of redirected output, and a summary that warns when the sampler's
recorded states hold few effective draws."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings

import pytest

import pybncsmooth as bs
from pybncsmooth.errors import ConvergenceWarning
from pybncsmooth.frontends.cli import main
from pybncsmooth.model.draws import posterior_of
from pybncsmooth.model.summary import MIN_EFFECTIVE_DRAWS, _chains_draws, _node_draws


def test_version_flag_prints_the_installed_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"pybncsmooth {bs.__version__}"
    # the console entry point too, without a command
    out = subprocess.run([sys.executable, "-m", "pybncsmooth.frontends.cli", "--version"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == f"pybncsmooth {bs.__version__}", out.stderr


def test_evaluate_keeps_its_progress_bar_out_of_redirected_output(tmp_path, capsys):
    """Standard error captured (not a terminal): no bar, as ``demo`` and ``fit``; ``--progress true``
    still asks for one."""
    path = tmp_path / "asia.csv"
    bs.load_dataset("asia").head(400).to_csv(path, index=False)
    args = ["evaluate", str(path), "--class", "E", "--models", "nb", "tan", "--cv", "2x2"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "2x2 cross-validation" in captured.out
    assert captured.err == "", captured.err  # main's default drew a bar of 8 fits here
    assert main([*args, "--progress", "true"]) == 0
    assert "/8 [" in capsys.readouterr().err


def test_summary_warns_when_the_sampler_has_few_effective_draws():
    """200 sweeps keep 90 correlated states: their hyperparameters hold fewer than
    MIN_EFFECTIVE_DRAWS effective draws. The warning and the summary's note give the
    number, the node, the states and the threshold; a long well-mixed run does not warn."""
    asia = bs.load_dataset("asia").head(1000)
    net = bs.fit("[S][B|S][L|S]", asia, method="hdp", random_state=1, iterations=200)
    ess = _chains_draws(net)
    assert ess < MIN_EFFECTIVE_DRAWS == 100
    with pytest.warns(ConvergenceWarning) as caught:
        text = net.summary().as_text()
    assert len(caught) == 1
    message = str(caught[0].message)
    m = re.search(r"(\d+) recorded states hold (\d+) effective draws at node '(\w+)'.*fewer than 100", message)
    assert m and int(m.group(2)) == round(ess), message
    states, node = int(m.group(1)), m.group(3)
    assert states == len(posterior_of(net.cpd(node)).state_c) == 90  # of the 100 kept, those after the burn-in
    assert min(_node_draws(posterior_of(net.cpd(node)))) == pytest.approx(ess)  # the node with the fewest
    assert f"Warning: the sampler's 90 recorded states hold {round(ess)} effective draws" in " ".join(text.split())
    assert caught[0].filename == __file__  # points at the caller's line
    long = bs.fit("[S][B|S][L|S]", asia, method="hdp", random_state=1, iterations=20000, record_states=1000,
                  concentration_every=1)
    assert _chains_draws(long) >= MIN_EFFECTIVE_DRAWS
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert "Warning:" not in long.summary().as_text()


def test_ci_install_prints_a_line_per_stage(tmp_path):
    """``.ci/install`` (the README's second command) says what it is doing before each
    slow stage and how long it took: run here with stand-ins for apt-get, pip, R and
    Rscript that only say they ran (a machine without R's packages, nor bnlearn)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    (repo / "r-wrapper").mkdir()
    (repo / ".ci" / "install").write_text((root / ".ci" / "install").read_text())
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    fakes = {
        # file descriptor 3 is the test's pipe, whatever the script sends to /dev/null
        "apt-get": 'echo "RAN apt-get $1" >&3',
        "sudo": '"$@"',
        "python3": 'if [ "$1" = "-" ]; then cat >/dev/null; echo "RAN python3 -" >&3; '
                   'else echo "RAN python3 $1 $2 $3" >&3; fi',
        "R": 'echo "RAN R $1 $2" >&3',
        # R is there without reticulate, testthat or bnlearn
        "Rscript": "exit 1",
    }
    for name, body in fakes.items():
        (bin_ / name).write_text(f"#!/bin/bash\n{body}\n")
        (bin_ / name).chmod(0o755)
    env = {"PATH": f"{bin_}:/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run(["/bin/bash", "-c", f"/bin/bash {repo / '.ci' / 'install'} 3>&1"], capture_output=True,
                         text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    order = [
        "install: R, reticulate and testthat from Debian's packages (apt-get) ...",
        "RAN apt-get update",
        "RAN apt-get install",
        "install: leftovers of earlier installs of pybncsmooth",
        "RAN python3 -",
        "install: pybncsmooth (editable) with its test, r and docs extras (pip) ...",
        "RAN python3 -m pip install",
        "install: bnlearn: not installed and no source package beside the project (its R checks skip)",
        "install: the R package bncsmooth from r-wrapper/ (R CMD INSTALL) ...",
        "RAN R CMD INSTALL",
    ]
    at = [next((i for i, l in enumerate(lines) if l == want), None) for want in order]
    assert None not in at and at == sorted(at), lines
    assert sum(bool(re.fullmatch(r"install:   done \(\d+ s\)", l)) for l in lines) == 3, lines
    assert re.fullmatch(r"install: everything installed \(\d+ s\)", lines[-1]), lines

"""Every vignette runs end to end in its reduced mode."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

VIGNETTES = Path(__file__).resolve().parents[1] / "vignettes"
sys.path.insert(0, str(VIGNETTES))


@pytest.mark.parametrize("script", sorted(VIGNETTES.glob("[0-9]*.py")), ids=lambda p: p.name)
def test_vignette_runs_quick(script, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import run as vignette_runner

    monkeypatch.setenv("PYBNCSMOOTH_VIGNETTE_QUICK", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    out = vignette_runner.run(script, tmp_path)
    text = out.read_text()
    assert "Traceback" not in text
    assert text.count("```python") >= 3

"""The ten UCI data sets the classifier benchmarks share (vignette 06's codes)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

#: the discretised sets bundled with the vignettes: numeric columns cut into 5
#: equal-frequency bins, the class first
UCI = Path(__file__).resolve().parents[1] / "vignettes" / "data" / "uci_disc5"
DATASETS = [
    "zoo", "glass", "sonar", "ionosphere", "housevotes84",
    "breastcancer", "pimaindiansdiabetes", "dna", "letterrecognition", "shuttle",
]  # fmt: skip


def load(name: str, folder: Path = UCI) -> tuple[pd.DataFrame, str]:
    """The set ``name`` from ``folder`` (``<name>.csv.gz``, ``<name>_disc5.csv`` or
    ``<name>.csv``) as text columns, and its class column (the first)."""
    for file in (folder / f"{name}.csv.gz", folder / f"{name}_disc5.csv", folder / f"{name}.csv"):
        if file.exists():
            df = pd.read_csv(file, dtype=str, keep_default_na=False, na_values=["", "NA"])
            return df, df.columns[0]
    raise FileNotFoundError(f"no {name}.csv.gz or {name}_disc5.csv in {folder}")

"""Small real data sets bundled with pybncsmooth.

=================  =============  ====================================================
name               rows x cols    source
=================  =============  ====================================================
``asia``           5000 x 8       Lauritzen & Spiegelhalter (1988), "Local computations
                                  with probabilities on graphical structures", JRSS B
                                  50(2); the sample shipped with R's bnlearn
                                  (``data(asia)``, Scutari 2010, JSS 35(3)).
``learning_test``  5000 x 6       bnlearn's synthetic ``data(learning.test)``.
``housevotes84``   435 x 17       UCI Congressional Voting Records (Schlimmer 1987),
                                  as ``HouseVotes84`` in R's mlbench; 392 missing votes.
``gssvocab``       27360 x 6      US General Social Survey, vocabulary module 1978-2016
                                  (R package carData 3.0-5, ``GSSvocab``, complete
                                  cases); 20 survey years (``year``): multi-domain.
``chile``          2439 x 6       Survey before the 1988 Chilean plebiscite (carData
                                  ``Chile``, complete cases, age and income in bands);
                                  5 regions (``region``): multi-domain.
=================  =============  ====================================================

Columns come back as pandas Categoricals with the level order of the source
(bnlearn's factor levels; byte order of the text for the UCI set).  ``asia`` and
``learning_test`` come with their true network (:func:`structure`); the two surveys
with a plausible one (no known truth) and their domain column (``dataset_info(name)
["domain"]``).
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import pandas as pd

from ..errors import UnknownDatasetError
from ..structure.dag import DAG

__all__ = ["load_dataset", "list_datasets", "structure", "dataset_info"]

_DATASETS: dict[str, dict[str, Any]] = {
    "asia": {
        "file": "asia.csv.gz",
        "levels": {c: ["no", "yes"] for c in ["A", "S", "T", "L", "B", "E", "X", "D"]},
        "modelstring": "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]",
        "description": "Lung-disease network of Lauritzen & Spiegelhalter (1988): visit to Asia (A), "
        "smoking (S), tuberculosis (T), lung cancer (L), bronchitis (B), either T or L (E), "
        "X-ray (X), dyspnoea (D).",
        "source": "R package bnlearn, data(asia)",
    },
    "learning_test": {
        "file": "learning_test.csv.gz",
        "levels": {**{c: ["a", "b", "c"] for c in "ABCDE"}, "F": ["a", "b"]},
        "modelstring": "[A][C][F][B|A][D|A:C][E|B:F]",
        "description": "Synthetic data set of bnlearn with a known six-node network.",
        "source": "R package bnlearn, data(learning.test)",
    },
    "housevotes84": {
        "file": "housevotes84.csv.gz",
        "levels": {"Class": ["democrat", "republican"], **{f"V{i}": ["n", "y"] for i in range(1, 17)}},
        "modelstring": None,
        "class": "Class",
        "description": "1984 US House of Representatives votes of 435 congressmen on 16 key issues "
        "(n / y, missing when not recorded) and their party (Class).",
        "source": "UCI Machine Learning Repository, Congressional Voting Records (Schlimmer 1987)",
    },
    "gssvocab": {
        "file": "gssvocab.csv.gz",
        "levels": {
            "year": ["1978", "1982", "1984", "1987", "1988", "1989", "1990", "1991", "1993", "1994", "1996",
                     "1998", "2000", "2004", "2006", "2008", "2010", "2012", "2014", "2016"],
            "gender": ["female", "male"],
            "nativeBorn": ["no", "yes"],
            "ageGroup": ["18-29", "30-39", "40-49", "50-59", "60+"],
            "educGroup": ["<12 yrs", "12 yrs", "13-15 yrs", "16 yrs", ">16 yrs"],
            "vocab": [str(i) for i in range(11)],
        },
        "modelstring": "[gender][nativeBorn][ageGroup][educGroup|ageGroup:nativeBorn][vocab|educGroup:ageGroup:gender]",
        "domain": "year",
        "description": "Vocabulary test of the US General Social Survey, 1978-2016: words right out of 10 "
        "(vocab), gender, native born, age and education in five bands, survey year (the domain). "
        "The structure is a plausible one, not a known truth.",
        "source": "R package carData 3.0-5, GSSvocab (complete cases)",
    },
    "chile": {
        "file": "chile.csv.gz",
        "levels": {
            "region": ["C", "M", "N", "S", "SA"],
            "sex": ["F", "M"],
            "age": ["18-29", "30-39", "40-49", "50-59", "60+"],
            "education": ["P", "S", "PS"],
            "income": ["<=7.5k", "7.5-15k", "15-35k", ">35k"],
            "vote": ["A", "N", "U", "Y"],
        },
        "modelstring": "[sex][age][education|age][income|education][vote|age:education:sex]",
        "domain": "region",
        "description": "National survey before the 1988 Chilean plebiscite: intended vote (A abstain, N no, "
        "U undecided, Y yes), sex, age and monthly income in bands, education (P primary, S secondary, "
        "PS post-secondary), region (the domain; M has 75 rows).  The structure is a plausible one, "
        "not a known truth.",
        "source": "R package carData 3.0-5, Chile (complete cases; age and income cut into bands)",
    },
}


def list_datasets() -> list[str]:
    """Names of the bundled data sets."""
    return sorted(_DATASETS)


def _meta(name: str) -> dict[str, Any]:
    if name not in _DATASETS:
        raise UnknownDatasetError(f"unknown data set {name!r}; available: {', '.join(list_datasets())}")
    return _DATASETS[name]


def dataset_info(name: str) -> dict[str, Any]:
    """Description, source, level orders and (if known) the true model string."""
    m = _meta(name)
    return {k: v for k, v in m.items() if k != "file"}


def load_dataset(name: str) -> pd.DataFrame:
    """Load a bundled data set as a data frame of Categoricals (missing values as NaN)."""
    m = _meta(name)
    with resources.files(__name__).joinpath("files", m["file"]).open("rb") as fh:
        df = pd.read_csv(fh, compression="gzip", dtype=str, keep_default_na=False, na_values=["", "NA"])
    for col, lev in m["levels"].items():
        df[col] = pd.Categorical(df[col], categories=lev)
    return df


def structure(name: str) -> DAG:
    """The network of a data set (as bnlearn's ``model2network`` builds it): the true one,
    or for the surveys a plausible one."""
    ms = _meta(name)["modelstring"]
    if ms is None:
        raise UnknownDatasetError(f"data set {name!r} has no known structure")
    return DAG.from_modelstring(ms)

"""Options: every setting of a fit that is not an estimator's hyperparameter, declared once.

An option (``na``, ``domain``, ``weights``, ``random_state``, ``n_jobs``, ``structure``, ...)
is declared here, once: its type, its check, the entry points that take it, the rules
that tie it to other options, one line of documentation and an example value.  Every
entry point (:func:`pybncsmooth.fit`, :class:`~pybncsmooth.BNClassifier`, the command
line, :func:`~pybncsmooth.evaluate`, :func:`~pybncsmooth.evaluate_domains`,
:meth:`~pybncsmooth.FittedNetwork.adapt`, and the R package through them) builds one
immutable :class:`Options` with :meth:`Options.build` and passes it down whole: the
layers below read the fields they use and re-list none.  Adding an option is one
declaration here and the code that uses it.

Estimator hyperparameters stay the estimator's (:attr:`Estimator.params`); the three
settings of a run that every estimator takes (``random_state``, ``n_jobs``,
``progress``) are options, handed to the estimator by :meth:`Options.run_settings`.

Missing values follow one :class:`NAPolicy`, which knows the user's spellings, what the
counting, structure learning and prediction do with a missing cell, and when the
estimator's M-step runs inside EM or data augmentation.

This module sits at the bottom of the package with :mod:`~pybncsmooth.validation`: it
imports nothing of it but that module and :mod:`~pybncsmooth.errors`.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterator, Mapping

import numpy as np

from .errors import DataError, HyperparameterError, StructureError
from .validation import check_choice, check_int, check_n_jobs, check_number, check_random_state

__all__ = [
    "NA_LABEL",
    "ENTRY_POINTS",
    "PRIOR_PER",
    "STRUCTURES",
    "NAPolicy",
    "OptionSpec",
    "Options",
    "option_specs",
    "option_names",
    "split_settings",
    "RUN_SETTINGS",
    "run_check",
    "factor_budget",
]

#: the label of the extra level that stands for a missing value under ``na="level"``
NA_LABEL = "<NA>"

#: where options enter: ``fit`` (:func:`pybncsmooth.fit`, the command line's ``fit``, R's
#: ``bncs.fit``), ``classifier`` (:class:`BNClassifier`, R's ``bncs.classifier``),
#: ``evaluate``, ``evaluate_domains``, ``adapt`` (:meth:`FittedNetwork.adapt`) and
#: ``update`` (:meth:`FittedNetwork.update`, the command line's ``update``, R's ``bncs.update``)
ENTRY_POINTS: tuple[str, ...] = ("fit", "classifier", "evaluate", "evaluate_domains", "adapt", "update")

#: how a prior network's equivalent sample size is spread (see the ``prior_per`` option)
PRIOR_PER: tuple[str, ...] = ("network", "configuration")

#: classifier structures learned from data
STRUCTURES: tuple[str, ...] = ("nb", "tan", "kdb", "skdb", "eskdb")


# ----------------------------------------------------------------------------- missing values


@dataclass(frozen=True)
class NAPolicy:
    """What a missing value means, from counting to prediction.

    ``name`` is the user's spelling:

    * ``"error"``: a missing value is an error naming the column and the row;
    * ``"level"``: a level of its own (labelled ``label``, placed last), as Petitjean
      et al. (2018) treat missing values: counted, learned and predicted like any level;
    * ``"drop"``: rows with a missing value in a variable the fit uses are dropped;
    * ``"available"``: each node is counted on the rows where it and its parents are
      observed (bnlearn's locally complete counting); structure learning by pairwise
      deletion;
    * ``"pairwise"``: the structure learned by pairwise deletion (each (C)MI on its
      observed rows, as bnlearn's ``tree.bayes``), the CPTs as ``"available"``;
    * ``"em"``: the CPTs by expectation-maximisation over the missing cells from the
      available-case fit, the estimator as M-step; estimators whose samplers need
      whole counts (``whole_counts``) run it as data augmentation;
    * ``"hard-em"``: bnlearn's hard EM, each incomplete row completed by its most
      probable completion.

    At prediction a missing value is summed out by exact inference, except under
    ``"level"``, where it is the missing level.
    """

    name: str = "error"
    label: str = NA_LABEL

    #: every spelling, in the order the documentation lists them
    NAMES: ClassVar[tuple[str, ...]] = ("error", "level", "drop", "available", "pairwise", "em", "hard-em")
    #: the policies under which the CPTs' counts skip missing cells (structure by pairwise deletion)
    PAIRWISE: ClassVar[tuple[str, ...]] = ("available", "pairwise", "em", "hard-em")
    #: what encoding does with a missing cell (:attr:`counting` is one of them)
    COUNTING: ClassVar[tuple[str, ...]] = ("error", "level", "drop", "available")
    #: what structure learning does with it (:attr:`structure` is one of them)
    STRUCTURE: ClassVar[tuple[str, ...]] = ("error", "level", "drop", "pairwise")

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or self.name not in self.NAMES:
            raise DataError(f"na must be one of {self.NAMES}, not {self.name!r}")
        if not isinstance(self.label, str) or not self.label:
            raise HyperparameterError(f"na_label must be a non-empty string, not {self.label!r}")

    @property
    def counting(self) -> str:
        """How encoding treats a missing cell while counting: ``"error"``, ``"level"``,
        ``"drop"`` or ``"available"`` (code -1, skipped by the nodes that use it)."""
        return "available" if self.name in self.PAIRWISE else self.name

    @property
    def structure(self) -> str:
        """How structure learning treats it: ``"error"``, ``"level"``, ``"drop"`` or
        ``"pairwise"`` (each statistic on the rows where its variables are observed)."""
        return "pairwise" if self.name in self.PAIRWISE else self.name

    @property
    def prediction(self) -> str:
        """How queries treat it: ``"level"`` (the missing level) or ``"available"``
        (summed out by exact inference)."""
        return "level" if self.name == "level" else "available"

    @property
    def em(self) -> str | None:
        """``"soft"`` (``na="em"``), ``"hard"`` (``"hard-em"``) or ``None``."""
        return {"em": "soft", "hard-em": "hard"}.get(self.name)

    @property
    def complete_rows(self) -> bool:
        """Whether every row the fit keeps is complete (``"error"`` and ``"drop"``)."""
        return self.name in ("error", "drop")

    def treatment(self, estimator: Any) -> str:
        """What ``estimator`` does with the missing cells under this policy:
        ``"error"``, ``"level"``, ``"drop"``, ``"available"``, ``"em"``,
        ``"hard-em"`` or ``"augmentation"`` (``na="em"`` with an estimator whose sampler
        takes whole counts: missing cells drawn from their posterior, blocks averaged)."""
        if self.name == "em" and getattr(estimator, "whole_counts", False):
            return "augmentation"
        return self.counting if self.name == "pairwise" else self.name

    def encode_args(self) -> dict[str, str]:
        """The keyword arguments of :func:`pybncsmooth.encode` while counting."""
        return {"na": self.counting, "na_label": self.label}


# ----------------------------------------------------------------------------- declarations


@dataclass(frozen=True)
class OptionSpec:
    """The declaration of one option.

    ``kind`` tells front ends how to read text (``"choice"``, ``"int"``, ``"float"``,
    ``"bool"``, ``"seed"``, ``"progress"``, ``"str"``, ``"any"``); ``check`` converts and
    validates a value; ``entries`` are the entry points that take it (elsewhere it is
    refused, with ``refuse[entry]`` saying what to do instead); ``defaults`` overrides
    the default at some entry points; ``applies`` returns why a value that is not the
    default does not apply given the other options (``None`` when it does); ``example``
    is a value for help texts, with ``needs`` the other options it shows its effect
    under; ``effect`` says what it changes: ``"result"`` (the fitted model), ``"same"``
    (only how the fit runs: the result is identical) or ``"display"`` (what is shown)."""

    name: str
    kind: str
    doc: str
    check: Callable[[Any], Any]
    entries: tuple[str, ...]
    example: Any
    effect: str = "result"
    needs: Mapping[str, Any] = field(default_factory=dict)
    applies: Callable[["Options"], str | None] | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    refuse: Mapping[str, str] = field(default_factory=dict)
    choices: tuple[Any, ...] = ()


def _opt(default: Any, kind: str, doc: str, check: Callable[[Any], Any], *, entries: tuple[str, ...],
         example: Any, **more: Any) -> Any:
    """A dataclass field carrying its :class:`OptionSpec` (the name is filled in by
    :class:`Options`)."""
    spec = OptionSpec("", kind, doc, check, entries, example, **more)
    return field(default=default, metadata={"spec": spec})


def _optional(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda v: None if v is None else check(v)


def _choice(name: str, choices: tuple[Any, ...]) -> Callable[[Any], Any]:
    return lambda v: check_choice(name, v, choices)


def _bool(name: str) -> Callable[[Any], bool]:
    def check(v: Any) -> bool:
        if not isinstance(v, (bool, np.bool_)):
            raise HyperparameterError(f"{name} must be True or False, not {v!r}")
        return bool(v)

    return check


def _progress(v: Any) -> bool | None:
    if v is not None and not isinstance(v, (bool, np.bool_)):
        raise HyperparameterError(f"progress must be None, True or False, not {v!r}")
    return None if v is None else bool(v)


def _column(name: str) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        if v is None:
            return None
        if not isinstance(v, str) or not v:
            raise HyperparameterError(f"{name} must be the name of a column, not {v!r}")
        return v

    return check


def _chunksize(v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise DataError(f"chunksize must be a positive whole number of rows, not {v!r}")
    return int(v)


def _weights(v: Any) -> Any:
    """A column name, or one number per row (checked against the rows where they are used)."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (bytes, bool, int, float, dict, set)) or not hasattr(v, "__len__"):
        raise HyperparameterError(
            f"weights must be the name of a column or one number per row (an array or a Series), not {v!r}"
        )
    return v


def _decay(v: Any) -> float | None:
    if v is None:
        return None
    d = check_number("decay", v)
    if d > 1.0:
        raise HyperparameterError(f"decay must be in (0, 1] (the factor the old counts are multiplied by), not {v!r}")
    return d


def _prior(v: Any) -> Any:
    """A prior network: a fitted network, a network file's path, a bnlearn ``bn.fit`` or a
    dict of CPTs (resolved against the structure and levels by the fit)."""
    if v is None:
        return None
    if isinstance(v, (bool, int, float, np.number, bytes, list, tuple, set)) or (isinstance(v, str) and not v):
        raise HyperparameterError(
            "prior must be a network (a FittedNetwork, the path of a .bif/.dsc/.net/.pbn/.rds file, a bnlearn "
            f"bn.fit) or a dict of CPTs, not {v!r}"
            + ("; hgs's pseudo-counts toward the uniform distribution are its hyperparameter pseudo_count"
               if isinstance(v, (int, float, np.number)) and not isinstance(v, bool) else "")
        )
    return v


def _prior_rule(name: str) -> Callable[["Options"], str | None]:
    def rule(o: "Options") -> str | None:
        if o.entry == "update" or o.prior is not None:
            return None
        return f"{name} applies with prior= (an expert network), which is not given"

    return rule


def _na(v: Any) -> str | None:
    if v is None:
        return None
    if not isinstance(v, str) or v not in NAPolicy.NAMES:
        raise DataError(f"na must be one of {NAPolicy.NAMES}, not {v!r}")
    return v


def _label(v: Any) -> str:
    if not isinstance(v, str) or not v:
        raise HyperparameterError(f"na_label must be a non-empty string, not {v!r}")
    return v


def _discretize(v: Any) -> Any:
    if v is None or (hasattr(v, "fit") and hasattr(v, "transform")):
        return v
    names = ("mdl", "equal_frequency", "equal_width")
    if isinstance(v, str) and v.lower().replace("-", "_") in (*names, "quantile", "ef", "uniform", "ew"):
        return v
    raise HyperparameterError(f"discretize must be one of {names} or a transformer with fit and transform, not {v!r}")


def _factor_bytes(v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return check_int("max_factor_bytes", v, low=8)


@functools.lru_cache(maxsize=1)
def _physical_memory() -> int | None:
    """Bytes of physical memory, where the system says (POSIX ``sysconf``; asked once:
    every query asks for its default budget)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


#: the share of physical memory one factor of an exact query may take by default (a
#: product of factors holds a few of that size at once)
FACTOR_MEMORY_SHARE = 8


def factor_budget(value: int | None) -> int:
    """The memory budget of one factor of an exact query, in bytes: ``value`` (the
    option ``max_factor_bytes``), or by default an eighth of physical memory (2 GiB
    where it cannot be told)."""
    if value is not None:
        return int(value)
    mem = _physical_memory()
    return mem // FACTOR_MEMORY_SHARE if mem else 2 << 30


def _structure(v: Any) -> Any:
    """A structure's name, or a DAG (anything with ``nodes`` and ``parents``) to fit as given."""
    if v is None or (hasattr(v, "nodes") and hasattr(v, "parents")):
        return v
    return check_choice("structure", v, STRUCTURES)


def _structure_rule(o: "Options") -> str | None:
    if o.structure == "eskdb" and o.entry == "fit":
        return ("structure='eskdb' is an ensemble of networks, not one network: fit it with "
                "BNClassifier(structure='eskdb')")
    return None


def _skdb_loss(v: Any) -> str | None:
    return None if v is None else check_choice("skdb_loss", v, ("rmse", "log_loss"))


def _em_number(name: str) -> Callable[[Any], float]:
    return lambda v: check_number(name, v)  # type: ignore[return-value]


def _em_int(name: str, low: int) -> Callable[[Any], int]:
    return lambda v: check_int(name, v, low=low)  # type: ignore[return-value]


_FITS = ("fit", "classifier", "evaluate_domains")
_LEARNING = ("fit", "classifier")
#: why an update does not take an option of the fit
_BY_THE_FIT = "an update keeps the settings of the fit it updates"


def _only_structures(name: str, allowed: tuple[str, ...]) -> Callable[["Options"], str | None]:
    def rule(o: "Options") -> str | None:
        if o.structure in allowed:
            return None
        where = " or ".join(repr(s) for s in allowed) + (" only" if len(allowed) == 1 else "")
        return f"{name} applies to structure={where}, not structure={o.structure!r}"

    return rule


def _needs_em(name: str, policies: tuple[str, ...]) -> Callable[["Options"], str | None]:
    def rule(o: "Options") -> str | None:
        return None if o.na in policies else f"{name} applies to na={' or '.join(map(repr, policies))}, not na={o.na!r}"

    return rule


def _na_rule(o: "Options") -> str | None:
    if o.na == "pairwise" and o.structure is None:
        return ("na='pairwise' learns a structure by pairwise deletion: it applies with structure= (a classifier); "
                "for a given structure use na='available'")
    if o.structure in ("skdb", "eskdb") and o.na in NAPolicy.PAIRWISE:
        return (f'structure={o.structure!r} does not take na="{o.na}" (its leave-one-out selection counts complete '
                'rows): use na="level" or na="drop", or na="em" with nb, tan or kdb')
    return None


def _n_bins_rule(o: "Options") -> str | None:
    return None if o.discretize is not None else "n_bins applies with discretize= (equal_frequency or equal_width)"


def _label_rule(o: "Options") -> str | None:
    return None if o.na == "level" else f"na_label applies to na='level', not na={o.na!r}"


_CLASSIFIER_ONLY = "fit it with BNClassifier(structure='eskdb')"


@dataclass(frozen=True, eq=False)
class Options:
    """Every option of a fit, checked: build it with :meth:`Options.build`.

    The fields are declared once, each with its :class:`OptionSpec`
    (:func:`option_specs`); :meth:`describe` lists them.  Immutable: :meth:`replace`
    gives a checked copy with some fields changed.
    """

    # what the data hold and how they are read
    na: str | None = _opt(
        None, "choice", "missing values: error, level, drop, available, pairwise (a learned structure), em, hard-em",
        _na, entries=("fit", "classifier", "evaluate_domains"), example="drop", applies=_na_rule,
        defaults={"fit": "error", "classifier": "level", "evaluate_domains": "error"}, choices=NAPolicy.NAMES,
    )
    na_label: str = _opt(
        NA_LABEL, "str", "the label of the missing level under na='level'", _label,
        entries=("fit", "classifier"), example="MISSING", needs={"na": "level"},
        refuse={"evaluate_domains": "the scores do not depend on a level's label"},
        applies=_label_rule,
    )
    max_levels: int = _opt(
        1000, "int", "most distinct values of a column that is not a Categorical",
        lambda v: check_int("max_levels", v, low=2), entries=("fit", "classifier", "evaluate_domains"), example=2,
    )
    chunksize: int | None = _opt(
        None, "int", "rows per chunk read from a file (default: about two million values a chunk)",
        _chunksize, entries=("fit", "classifier", "adapt", "update"), example=7,
        effect="same",
    )
    weights: Any = _opt(
        None, "str", "row weights: a column's name or one number >= 0 per row (counts are sums of weights)",
        _weights, entries=("fit", "evaluate_domains", "adapt", "update"), example="w",
        refuse={"classifier": "give the weights to fit(X, y, sample_weight=...)"},
    )
    domain: str | None = _opt(
        None, "str", "the column naming each row's domain: every CPT per domain, shrunk toward the population",
        _column("domain"), entries=("fit", "classifier"), example="site",
        refuse={"adapt": "the network's domain column is fixed by its fit; adapt(rows, domain=label) names the label",
                "evaluate_domains": "give the domain column as evaluate_domains' third argument"},
    )
    discretize: Any = _opt(
        None, "str", "cut numeric columns: mdl (needs a class), equal_frequency, equal_width, or a transformer",
        _discretize, entries=_LEARNING, example="equal_frequency",
    )
    n_bins: int = _opt(
        5, "int", "bins of equal_frequency and equal_width", lambda v: check_int("n_bins", v, low=1),
        entries=_LEARNING, example=2, needs={"discretize": "equal_frequency"}, applies=_n_bins_rule,
    )
    # the classifier's structure
    structure: str | None = _opt(
        None, "choice", "learn a classifier's structure (with a formula 'Class ~ .'): nb, tan, kdb, skdb, eskdb",
        _structure, entries=_LEARNING, example="nb", applies=_structure_rule,
        defaults={"classifier": "tan"}, choices=STRUCTURES,
    )
    k: int | None = _opt(
        None, "int", "non-class parents per feature of kDB; the most selective kDB and ESKDB try (default 1; ESKDB 5)",
        _optional(lambda v: check_int("k", v, low=0)), entries=_LEARNING, example=2, needs={"structure": "kdb"},
        applies=_only_structures("k", ("kdb", "skdb", "eskdb")),
    )
    root: str | None = _opt(
        None, "str", "the root feature of a TAN tree (default: the first feature)", _column("root"),
        entries=_LEARNING, example="B", needs={"structure": "tan"}, applies=_only_structures("root", ("tan",)),
    )
    skdb_m: float = _opt(
        1.0, "float", "m of the m-estimates in selective kDB's leave-one-out selection",
        lambda v: check_number("skdb_m", v, strict=False), entries=_LEARNING, example=10.0,
        needs={"structure": "skdb", "k": 2, "na": "level"}, applies=_only_structures("skdb_m", ("skdb", "eskdb")),
    )
    skdb_loss: str | None = _opt(
        None, "choice", "the loss selective kDB minimises: rmse (default) or log_loss (default for hgs members)",
        _skdb_loss, entries=_LEARNING, example="log_loss", needs={"structure": "skdb", "k": 2, "na": "level"},
        applies=_only_structures("skdb_loss", ("skdb", "eskdb")), choices=("rmse", "log_loss"),
    )
    n_estimators: int | None = _opt(
        None, "int", "ESKDB members (default 10)", _optional(lambda v: check_int("n_estimators", v, low=1)),
        entries=("classifier",), example=2, needs={"structure": "eskdb"},
        applies=_only_structures("n_estimators", ("eskdb",)), refuse={"fit": _CLASSIFIER_ONLY},
    )
    order_sampling: bool = _opt(
        True, "bool", "ESKDB members sample their attribute order by mutual information (off: sorted)",
        _bool("order_sampling"), entries=("classifier",), example=False, needs={"structure": "eskdb"},
        applies=_only_structures("order_sampling", ("eskdb",)), refuse={"fit": _CLASSIFIER_ONLY},
    )
    parent_sampling: bool = _opt(
        True, "bool", "ESKDB members sample their parents by conditional mutual information (off: the k highest)",
        _bool("parent_sampling"), entries=("classifier",), example=False, needs={"structure": "eskdb"},
        applies=_only_structures("parent_sampling", ("eskdb",)), refuse={"fit": _CLASSIFIER_ONLY},
    )
    tempering: bool = _opt(
        True, "bool", "ESKDB members' posteriors raised to the exponent of lowest leave-one-out log loss (off: averaged "
        "as they are)", _bool("tempering"), entries=("classifier",), example=False, needs={"structure": "eskdb"},
        applies=_only_structures("tempering", ("eskdb",)), refuse={"fit": _CLASSIFIER_ONLY},
    )
    sum_out_missing: bool = _opt(
        True, "bool", "ESKDB under na='level': a query's missing cell summed out of each member (and out of the "
        "rows its selection and tempering score), the level kept for fitting (off: the missing level)",
        _bool("sum_out_missing"), entries=("classifier",), example=False,
        needs={"structure": "eskdb"}, applies=_only_structures("sum_out_missing", ("eskdb",)),
        refuse={"fit": _CLASSIFIER_ONLY},
    )
    # how the fit runs
    random_state: Any = _opt(
        None, "seed", "seed (an integer >= 0) or numpy Generator of every random choice", check_random_state,
        entries=("fit", "classifier", "evaluate", "evaluate_domains", "update"), example=7,
        needs={"method": "hdp", "iterations": 30},
        refuse={"adapt": "adapting is a closed form: nothing in it is random"},
    )
    n_jobs: int | None = _opt(
        None, "int", "threads (default: all cores); the result does not depend on it", check_n_jobs,
        entries=("fit", "classifier", "evaluate", "evaluate_domains", "update"), example=2, effect="same",
    )
    progress: bool | None = _opt(
        None, "progress", "progress bars (default: none over chunks, the estimator's own at a terminal)", _progress,
        entries=("fit", "classifier", "evaluate", "evaluate_domains", "update"), example=True, effect="display",
    )
    # expectation-maximisation over missing cells
    em_tol: float = _opt(
        1e-6, "float", "EM stops when the observed-data log-likelihood changes by less (relative)",
        _em_number("em_tol"), entries=_FITS, example=0.5, needs={"na": "em"},
        applies=_needs_em("em_tol", ("em", "hard-em")),
    )
    em_max_iter: int = _opt(
        100, "int", "EM iterations at most", _em_int("em_max_iter", 1), entries=_FITS, example=1,
        needs={"na": "em"}, applies=_needs_em("em_max_iter", ("em", "hard-em")),
    )
    em_draws: int = _opt(
        10, "int", "data augmentation (na='em' with hdp, hls-bayes): blocks averaged", _em_int("em_draws", 1),
        entries=_FITS, example=2, needs={"na": "em", "method": "hdp", "iterations": 30},
        applies=_needs_em("em_draws", ("em",)),
    )
    em_burn: int = _opt(
        2, "int", "data augmentation: blocks discarded first", _em_int("em_burn", 0), entries=_FITS, example=0,
        needs={"na": "em", "method": "hdp", "iterations": 30}, applies=_needs_em("em_burn", ("em",)),
    )
    # updates and informative priors
    decay: float | None = _opt(
        None, "float", "an update multiplies the old counts by it (0 < decay <= 1) before adding the new rows",
        _decay, entries=("update",), example=0.5,
        refuse={e: "decay weighs the old counts of an update: net.update(rows, decay=...)" for e in ENTRY_POINTS},
    )
    prior: Any = _opt(
        None, "str", "an expert network (a fitted network, a .bif/.dsc/.net/.pbn/.rds file, a bnlearn bn.fit) or a "
        "dict of CPTs: the estimator's prior mean (bayes: Dirichlet pseudo-counts)", _prior,
        entries=_LEARNING, example="expert.bif",
        refuse={"update": "an update keeps the fit's prior (a network read from a file is updated with its tables "
                          "as prior: prior_weight=)"},
    )
    prior_weight: float | None = _opt(
        None, "float", "the prior's equivalent sample size: the rows its tables are worth (default 1 with prior=)",
        lambda v: check_number("prior_weight", v, optional=True), entries=(*_LEARNING, "update"), example=25.0,
        needs={"prior": "expert.bif"}, applies=_prior_rule("prior_weight"),
    )
    prior_per: str = _opt(
        "network", "choice", "how prior_weight is spread: network (w P(x, parents), pyAgrum's) or configuration "
        "(w P(x | parents) for every parent configuration)", lambda v: check_choice("prior_per", v, PRIOR_PER),
        entries=(*_LEARNING, "update"), example="configuration", needs={"prior": "expert.bif"},
        applies=_prior_rule("prior_per"), choices=PRIOR_PER,
    )
    # queries
    on_unseen: str = _opt(
        "error", "choice", "a level unseen in training at prediction: error, or backoff (treated as unobserved)",
        _choice("on_unseen", ("error", "backoff")), entries=("fit", "classifier", "adapt"), example="backoff",
        choices=("error", "backoff"),
    )
    on_unseen_domain: str = _opt(
        "warn", "choice", "rows of a multi-domain fit with no domain (no domain column, or a missing value) or a "
        "domain not fitted: warn and answer them with the population-level tables, or error",
        _choice("on_unseen_domain", ("warn", "error")), entries=("fit", "classifier"), example="error",
        needs={"domain": "site"}, choices=("warn", "error"),
        refuse={"adapt": "adapt(rows, domain=label) names the domain of every row it is given",
                "evaluate": "set it on the classifiers compared (BNClassifier(on_unseen_domain=...))",
                "evaluate_domains": "each held-out domain is adapted (or, from no row, answered by the population) "
                                    "by design"},
    )
    max_factor_bytes: int | None = _opt(
        None, "int", "memory budget of one factor of an exact query, in bytes (default: an eighth of physical "
        "memory); a query needing more is refused, naming this option", _factor_bytes,
        entries=("fit", "classifier", "adapt"), example=1 << 30, effect="same",
        refuse={"evaluate": "set it on the classifiers compared (BNClassifier(max_factor_bytes=...))",
                "evaluate_domains": "the held-out rows are scored by each setting's network with the default "
                                    "budget; raise it on a fitted network with query(..., max_factor_bytes=)"},
    )

    #: the entry point the options were built for
    entry: str = field(default="fit", metadata={"internal": True})

    # ------------------------------------------------------------------ construction
    @classmethod
    def build(cls, entry: str = "fit", **given: Any) -> "Options":
        """The options of one call at ``entry`` (one of :data:`ENTRY_POINTS`): every
        value checked against its declaration, the entry's defaults for the others, and
        the rules between options applied.  A name that is not an option, or an option
        the entry point does not take, raises :class:`HyperparameterError` naming it."""
        if entry not in ENTRY_POINTS:
            raise HyperparameterError(f"unknown entry point {entry!r}; one of {ENTRY_POINTS}")
        if not given:  # an entry point's defaults: built once (the options are immutable)
            hit = _DEFAULTS.get((cls, entry))
            if hit is None:
                hit = _DEFAULTS[cls, entry] = cls._build(entry, {})
            return hit
        return cls._build(entry, given)

    @classmethod
    def _build(cls, entry: str, given: dict[str, Any]) -> "Options":
        specs = _SPECS
        values: dict[str, Any] = {}
        for name, value in given.items():
            spec = specs.get(name)
            if spec is None:
                raise HyperparameterError(f"no option {name!r}; the options are {', '.join(specs)}")
            if entry not in spec.entries:
                raise HyperparameterError(_refusal(spec, entry))
            values[name] = spec.check(value)
        for name, spec in specs.items():
            if name not in values and entry in spec.defaults:
                values[name] = spec.defaults[entry]
        out = cls(**values, entry=entry)
        out._check_rules(given)
        return out

    def replace(self, **changes: Any) -> "Options":
        """A copy with ``changes`` (checked as :meth:`build` checks them)."""
        checked = {}
        for name, value in changes.items():
            spec = _SPECS.get(name)
            if spec is None:
                raise HyperparameterError(f"no option {name!r}; the options are {', '.join(_SPECS)}")
            checked[name] = spec.check(value)
        out = dataclasses.replace(self, **checked)
        out._check_rules(changes)
        return out

    def _check_rules(self, given: Mapping[str, Any]) -> None:
        for name in given:
            spec = _SPECS[name]
            if spec.applies is None or _same(getattr(self, name), _default_of(spec, self.entry)):
                continue
            why = spec.applies(self)
            if why is not None:
                raise HyperparameterError(why)
        if isinstance(self.weights, str) and self.weights == self.domain:
            raise HyperparameterError(f"weights and domain name the same column {self.domain!r}")

    # ------------------------------------------------------------------ derived
    @property
    def missing(self) -> NAPolicy:
        """The :class:`NAPolicy` of ``na`` and ``na_label``."""
        return _na_policy(self.na or "error", self.na_label)

    def run_settings(self) -> dict[str, Any]:
        """What every estimator takes besides its hyperparameters: ``random_state``,
        ``n_jobs``, ``progress``."""
        return {"random_state": self.random_state, "n_jobs": self.n_jobs, "progress": self.progress}

    def explicit(self) -> dict[str, Any]:
        """The options that differ from their defaults at this entry point."""
        out = {}
        for name, spec in _SPECS.items():
            if not _same(getattr(self, name), _default_of(spec, self.entry)):
                out[name] = getattr(self, name)
        return out

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        return ((n, getattr(self, n)) for n in _SPECS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Options):
            return NotImplemented
        return self.entry == other.entry and all(_same(getattr(self, n), getattr(other, n)) for n in _SPECS)

    __hash__ = None  # type: ignore[assignment] - weights may be an array

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={_short(v)}" for k, v in self.explicit().items())
        return f"Options({self.entry}{': ' + shown if shown else ''})"

    @classmethod
    def describe(cls, entry: str | None = None) -> list[OptionSpec]:
        """The declarations (those ``entry`` takes, if given), in declaration order."""
        return [s for s in _SPECS.values() if entry is None or entry in s.entries]


def _same(a: Any, b: Any) -> bool:
    """Whether two option values are the same (arrays element by element; ``True`` is not ``1``)."""
    if a is b:
        return True
    scalar = (type(None), bool, int, float, str, np.generic)
    if isinstance(a, scalar) and isinstance(b, scalar):
        return bool(a == b) and isinstance(a, (bool, np.bool_)) == isinstance(b, (bool, np.bool_))
    try:
        return bool(np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object)))
    except (TypeError, ValueError):
        return False


def _short(v: Any) -> str:
    if hasattr(v, "__len__") and not isinstance(v, str):
        return f"<{type(v).__name__} of {len(v)}>"
    return repr(v)


def _default_of(spec: OptionSpec, entry: str) -> Any:
    if entry in spec.defaults:
        return spec.defaults[entry]
    return _FIELDS[spec.name].default


def _refusal(spec: OptionSpec, entry: str) -> str:
    hint = spec.refuse.get(entry) or (_BY_THE_FIT if entry == "update" else None)
    takes = ", ".join(spec.entries)
    return f"{spec.name} does not apply to {entry}" + (f": {hint}" if hint else f" (it applies to {takes})")


def _collect() -> tuple[dict[str, OptionSpec], dict[str, dataclasses.Field]]:
    specs, fields = {}, {}
    for f in dataclasses.fields(Options):
        if "spec" not in f.metadata:
            continue
        specs[f.name] = dataclasses.replace(f.metadata["spec"], name=f.name)
        fields[f.name] = f
    return specs, fields


_SPECS, _FIELDS = _collect()


def option_specs(entry: str | None = None) -> dict[str, OptionSpec]:
    """Every option's declaration by name (those ``entry`` takes, if given)."""
    return {n: s for n, s in _SPECS.items() if entry is None or entry in s.entries}


@functools.lru_cache(maxsize=256)
def _na_policy(name: str, label: str) -> NAPolicy:
    """The (immutable) policy of ``name`` and ``label``, made once per pair."""
    return NAPolicy(name, label)


#: each entry point's options when none is given (:meth:`Options.build`)
_DEFAULTS: dict[tuple[type, str], Options] = {}


def option_names() -> frozenset[str]:
    """The names of every option."""
    return frozenset(_SPECS)


def option_doc(spec: OptionSpec, default: Any) -> str:
    """An option's documentation line: its doc as a sentence, with ``default`` appended
    unless the doc already says what the default does ("(default: ...)")."""
    text = spec.doc[:1].upper() + spec.doc[1:]
    if "(default" in spec.doc:
        return text + "."
    return f"{text} (default ``{default!r}``)."


#: the options every estimator takes besides its hyperparameters (the settings of a run)
RUN_SETTINGS: tuple[str, ...] = ("random_state", "n_jobs", "progress")


def run_check(name: str, value: Any) -> Any:
    """A run setting's value checked by its option's declaration (``None`` passes)."""
    return None if value is None else _SPECS[name].check(value)


#: bnlearn's name for the domain column (``bn.fit(method = "hdir", group = )``)
_ALIASES = {"group": "domain"}


def split_settings(settings: Mapping[str, Any], method: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(options, hyperparameters)`` from the keyword arguments of an entry point:
    option names go to the first, everything else to the estimator.  ``group`` (bnlearn's
    name) is taken as ``domain``; both naming different columns is an error.  With
    ``method="hgs"`` a number given as ``prior`` is hgs's ``pseudo_count`` (its name
    before ``prior=`` became the expert network), with a :class:`DeprecationWarning`."""
    settings = _renamed_hgs_prior(settings, method)
    options, hyper = {}, {}
    for name, value in settings.items():
        target = _ALIASES.get(name, name)
        if target in _SPECS:
            if target in options and options[target] != value:
                raise StructureError(f"{target}={options[target]!r} and {name}={value!r} name different columns; "
                                     "give one")
            options[target] = value
        else:
            hyper[name] = value
    return options, hyper


def _renamed_hgs_prior(settings: Mapping[str, Any], method: Any) -> Mapping[str, Any]:
    """``settings`` with hgs's old ``prior=<number>`` given its name ``pseudo_count``."""
    value = settings.get("prior")
    if not (isinstance(method, str) and method == "hgs") or isinstance(value, bool) \
            or not isinstance(value, (int, float, np.number)):
        return settings
    if "pseudo_count" in settings:
        raise HyperparameterError(
            f"prior={value!r} and pseudo_count={settings['pseudo_count']!r} are both given for hgs: prior= is an "
            "expert network (hgs takes none); give hgs's pseudo-counts as pseudo_count= only"
        )
    warnings.warn(
        f"hgs's hyperparameter prior= (pseudo-counts toward the uniform distribution) is now pseudo_count=: "
        f"prior={value!r} is read as pseudo_count={value!r}; write pseudo_count= (prior= is the expert network "
        "option, and a number there will be refused)",
        DeprecationWarning, stacklevel=4,
    )
    return {("pseudo_count" if k == "prior" else k): v for k, v in settings.items()}

"""What the command line's parser shows, written out so that ``pybncsmooth --help``
imports neither NumPy nor pandas: the estimators' names (the registry,
:func:`pybncsmooth.estimators.available_methods`) and, for each entry point with option
flags, ``(name, kind, help, choices)`` of every option
(:func:`option_flags`, from the declarations in :mod:`pybncsmooth.options`).

The suite checks that these rows equal their sources.  After adding an estimator or an
option, rewrite this file with::

    python -m pybncsmooth.frontends._cli_specs
"""

from __future__ import annotations

from typing import Any

#: the estimators, as :func:`pybncsmooth.estimators.available_methods` lists them
METHODS: tuple[str, ...] = ('bayes', 'hdp', 'hgs', 'hls', 'hls-bayes', 'hmd', 'mbranch', 'mestimate', 'mle')

#: entry point -> (name, kind, help, choices) of each option flag
OPTION_FLAGS: dict[str, tuple[tuple[str, str, str, tuple[Any, ...] | None], ...]] = {'fit': (('na',
          'choice',
          'missing values: error, level, drop, available, pairwise (a learned structure), em, '
          'hard-em; e.g. drop',
          ('error', 'level', 'drop', 'available', 'pairwise', 'em', 'hard-em')),
         ('na_label', 'str', "the label of the missing level under na='level'; e.g. MISSING", None),
         ('max_levels',
          'int',
          'most distinct values of a column that is not a Categorical; e.g. 2',
          None),
         ('chunksize',
          'int',
          'rows per chunk read from a file (default: about two million values a chunk); e.g. 7',
          None),
         ('weights',
          'str',
          "row weights: a column's name or one number >= 0 per row (counts are sums of weights); "
          'e.g. w',
          None),
         ('domain',
          'str',
          "the column naming each row's domain: every CPT per domain, shrunk toward the "
          'population; e.g. site',
          None),
         ('discretize',
          'str',
          'cut numeric columns: mdl (needs a class), equal_frequency, equal_width, or a '
          'transformer; e.g. equal_frequency',
          None),
         ('n_bins', 'int', 'bins of equal_frequency and equal_width; e.g. 2', None),
         ('structure',
          'choice',
          "learn a classifier's structure (with a formula 'Class ~ .'): nb, tan, kdb, skdb, eskdb; "
          'e.g. nb',
          ('nb', 'tan', 'kdb', 'skdb', 'eskdb')),
         ('k',
          'int',
          'non-class parents per feature of kDB; the most selective kDB and ESKDB try (default 1; '
          'ESKDB 5); e.g. 2',
          None),
         ('root',
          'str',
          'the root feature of a TAN tree (default: the first feature); e.g. B',
          None),
         ('skdb_m',
          'float',
          "m of the m-estimates in selective kDB's leave-one-out selection; e.g. 10.0",
          None),
         ('skdb_loss',
          'choice',
          'the loss selective kDB minimises: rmse (default) or log_loss (default for hgs members); '
          'e.g. log_loss',
          ('rmse', 'log_loss')),
         ('random_state',
          'seed',
          'seed (an integer >= 0) or numpy Generator of every random choice; e.g. 7',
          None),
         ('n_jobs',
          'int',
          'threads (default: all cores); the result does not depend on it; e.g. 2',
          None),
         ('progress',
          'progress',
          "progress bars (default: none over chunks, the estimator's own at a terminal)",
          None),
         ('em_tol',
          'float',
          'EM stops when the observed-data log-likelihood changes by less (relative); e.g. 0.5',
          None),
         ('em_max_iter', 'int', 'EM iterations at most; e.g. 1', None),
         ('em_draws',
          'int',
          "data augmentation (na='em' with hdp, hls-bayes): blocks averaged; e.g. 2",
          None),
         ('em_burn', 'int', 'data augmentation: blocks discarded first; e.g. 0', None),
         ('prior',
          'str',
          'an expert network (a fitted network, a .bif/.dsc/.net/.pbn/.rds file, a bnlearn bn.fit) '
          "or a dict of CPTs: the estimator's prior mean (bayes: Dirichlet pseudo-counts); e.g. "
          'expert.bif',
          None),
         ('prior_weight',
          'float',
          "the prior's equivalent sample size: the rows its tables are worth (default 1 with "
          'prior=); e.g. 25.0',
          None),
         ('prior_per',
          'choice',
          "how prior_weight is spread: network (w P(x, parents), pyAgrum's) or configuration (w "
          'P(x | parents) for every parent configuration); e.g. configuration',
          ('network', 'configuration')),
         ('on_unseen',
          'choice',
          'a level unseen in training at prediction: error, or backoff (treated as unobserved); '
          'e.g. backoff',
          ('error', 'backoff')),
         ('on_unseen_domain',
          'choice',
          'rows of a multi-domain fit with no domain (no domain column, or a missing value) or a '
          'domain not fitted: warn and answer them with the population-level tables, or error; '
          'e.g. error',
          ('warn', 'error')),
         ('max_factor_bytes',
          'int',
          'memory budget of one factor of an exact query, in bytes (default: an eighth of physical '
          'memory); a query needing more is refused, naming this option; e.g. 1073741824',
          None)),
 'update': (('chunksize',
             'int',
             'rows per chunk read from a file (default: about two million values a chunk); e.g. 7',
             None),
            ('weights',
             'str',
             "row weights: a column's name or one number >= 0 per row (counts are sums of "
             'weights); e.g. w',
             None),
            ('random_state',
             'seed',
             'seed (an integer >= 0) or numpy Generator of every random choice; e.g. 7',
             None),
            ('n_jobs',
             'int',
             'threads (default: all cores); the result does not depend on it; e.g. 2',
             None),
            ('progress',
             'progress',
             "progress bars (default: none over chunks, the estimator's own at a terminal)",
             None),
            ('decay',
             'float',
             'an update multiplies the old counts by it (0 < decay <= 1) before adding the new '
             'rows; e.g. 0.5',
             None),
            ('prior_weight',
             'float',
             "the prior's equivalent sample size: the rows its tables are worth (default 1 with "
             'prior=); e.g. 25.0',
             None),
            ('prior_per',
             'choice',
             "how prior_weight is spread: network (w P(x, parents), pyAgrum's) or configuration (w "
             'P(x | parents) for every parent configuration); e.g. configuration',
             ('network', 'configuration'))),
 'evaluate': (('random_state',
               'seed',
               'seed (an integer >= 0) or numpy Generator of every random choice; e.g. 7',
               None),
              ('n_jobs',
               'int',
               'threads (default: all cores); the result does not depend on it; e.g. 2',
               None),
              ('progress',
               'progress',
               "progress bars (default: none over chunks, the estimator's own at a terminal)",
               None))}

def option_flags(entry: str) -> tuple[tuple[str, str, str, tuple[Any, ...] | None], ...]:
    """``(name, kind, help, choices)`` of the flag of every option ``entry`` takes, read
    from the declarations (which import NumPy): the command line's parser reads the same
    rows from :data:`OPTION_FLAGS`, written from this function."""
    from ..options import option_specs

    rows = []
    for name, spec in option_specs(entry).items():
        example = f"; e.g. {spec.example}" if not isinstance(spec.example, bool) else ""
        choices = tuple(spec.choices) if spec.kind == "choice" and spec.choices else None
        rows.append((name, spec.kind, f"{spec.doc}{example}", choices))
    return tuple(rows)


def _source() -> str:
    """This module's text with the rows read from their sources."""
    import pprint
    from pathlib import Path

    from ..estimators import available_methods

    text = Path(__file__).read_text()
    head = text[: text.index("#: the estimators")]
    tail = text[text.index("\n\ndef option_flags"):]
    methods = pprint.pformat(tuple(available_methods()), width=100)
    flags = pprint.pformat({entry: option_flags(entry) for entry in ("fit", "update", "evaluate")}, width=100,
                           sort_dicts=False)
    return (f"{head}#: the estimators, as :func:`pybncsmooth.estimators.available_methods` lists them\n"
            f"METHODS: tuple[str, ...] = {methods}\n\n"
            "#: entry point -> (name, kind, help, choices) of each option flag\n"
            f"OPTION_FLAGS: dict[str, tuple[tuple[str, str, str, tuple[Any, ...] | None], ...]] = {flags}{tail}")


if __name__ == "__main__":  # pragma: no cover - rewrites this file
    from pathlib import Path

    Path(__file__).write_text(_source())

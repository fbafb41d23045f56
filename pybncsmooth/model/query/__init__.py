r"""The query engine, in the order a query flows: :mod:`.queries` (the public entry:
:math:`P(X_T \mid x_E)`, MAP states, credible intervals), :mod:`.evidence` (evidence
checked and coded), :mod:`.zeros` (configurations evidence rules out), :mod:`.plan` and
:mod:`.elimination` (which factors, in which order), :mod:`.engine` (the einsum evaluation),
:mod:`.joint` (the joint path for small networks), :mod:`.batch` (many queries sharing a
plan), :mod:`.answer` (the answer object), :mod:`.variance` (variance shares of an answer over
the CPTs' posteriors), :mod:`.summary`, :mod:`.inference` (the missing cells of rows) and
:mod:`.approximate` (likelihood weighting)."""

from ..._lazy import lazy_names

#: the public names of :mod:`.queries`, importable from this package as before it was one
__all__ = ['query', 'map_query', 'sample_tables', 'MapResult']

__getattr__, __dir__ = lazy_names(__name__, ".queries", __all__)

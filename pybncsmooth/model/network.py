"""FittedNetwork: a DAG, the levels of its variables, one CPD per node and the options
it was fitted with.

The class is assembled from one part per concern, each in a module of its own: its
tables (:mod:`._network_tables`), its domains (:mod:`~pybncsmooth.model.domains._network`), rows scored
(:mod:`._network_rows`), queries (:mod:`._network_queries`), reports
(:mod:`._network_reporting`) and updates with new rows (:mod:`._network_update`); this
module holds its structure and construction."""

from __future__ import annotations

from typing import Any, Mapping

from ..data.schema import Schema
from ..errors import DataError, UnknownNodeError
from ..options import NAPolicy, Options
from ..structure.dag import DAG
from .domains._network import DomainsMixin
from ._network_queries import QueriesMixin
from ._network_reporting import ReportingMixin
from ._network_rows import RowsMixin
from ._network_tables import TablesMixin
from ._network_update import UpdateMixin
from .cpd import CPD, DomainLastCPD, TreeCPD
from .formats import check_format_options, get_converter, network_format
from .summary import rows_text as _rows_text

__all__ = ["FittedNetwork"]


class FittedNetwork(TablesMixin, DomainsMixin, RowsMixin, QueriesMixin, ReportingMixin, UpdateMixin):
    """A discrete Bayesian network with estimated conditional probability tables.

    Built by :func:`pybncsmooth.fit` or read by :func:`pybncsmooth.read_network`.

    Parameters
    ----------
    dag:
        The structure; ``dag.parents(node)`` is the axis order of ``cpt(node)``.
    schema:
        Levels of every node (and of the domain variable, if any).
    cpds:
        Node -> :class:`~pybncsmooth.model.cpd.CPD`, conditioning on
        ``domain`` (if any) followed by the node's parents.
    domain:
        The domain variable of a multi-domain fit (a split of every
        context tree), or ``None``.
    info:
        Fit metadata: ``method``, ``hyperparameters``, ``n_rows``, ``n_dropped``, ``na``.
    options:
        The :class:`~pybncsmooth.options.Options` of the fit (queries take their missing
        values' policy and ``on_unseen`` from it); by default the options ``info``'s
        ``na`` and ``na_label`` describe (a network read from a file).
    """

    def __init__(
        self,
        dag: DAG,
        schema: Schema,
        cpds: Mapping[str, CPD],
        *,
        domain: str | None = None,
        estimator: Any = None,
        info: Mapping[str, Any] | None = None,
        options: Options | None = None,
    ) -> None:
        self._setup(dag, schema, domain, estimator, info, options)
        missing = [n for n in dag.nodes if n not in cpds]
        if missing:
            raise UnknownNodeError(missing[0], "has no CPD")
        self._cpds: dict[str, CPD] = {}
        for n in dag.nodes:
            cpd = cpds[n]
            expected = self._prefix + tuple(dag.parents(n))
            if tuple(cpd.parents) != expected:
                raise ValueError(f"CPD of {n!r} conditions on {list(cpd.parents)}, expected {list(expected)}")
            if cpd.card != self.schema.cardinality(n) or cpd.parent_cards != self.schema.cardinalities(expected):
                raise ValueError(f"CPD of {n!r} does not match the levels of the schema")
            self._cpds[n] = cpd

    def _setup(self, dag: DAG, schema: Schema, domain: str | None, estimator: Any, info: Mapping[str, Any] | None,
               options: Options | None) -> None:
        """Every attribute but the CPDs."""
        self.dag = dag
        self.domain = domain
        self._prefix: tuple[str, ...] = (domain,) if domain is not None else ()
        wanted = list(self._prefix) + dag.nodes
        self.schema = schema if list(schema.levels) == wanted else schema.subset(wanted)
        self.estimator = estimator
        self.info = dict(info or {})
        self.options = options if options is not None else _options_of(self.info)
        #: optional transformer (e.g. a discretiser) applied to data before every query
        self.transformer: Any = None

    @classmethod
    def assembled(cls, dag: DAG, schema: Schema, cpds: Mapping[str, CPD], *, estimator: Any = None,
                  info: Mapping[str, Any] | None = None, options: Options | None = None) -> "FittedNetwork":
        """The network of CPDs a fit made for ``dag`` and ``schema`` (one a node, with its
        parents and levels: as the constructor checks them, by construction), without the
        constructor's checks of every node (no domain)."""
        out = cls.__new__(cls)
        out._setup(dag, schema, None, estimator, info, options)
        out._cpds = dict(cpds)
        return out

    # ------------------------------------------------------------------ structure
    @property
    def nodes(self) -> list[str]:
        """Node names in node order."""
        return self.dag.nodes

    def parents(self, node: str) -> list[str]:
        """Parents of ``node`` in CPT axis order (the domain is not a parent)."""
        return self.dag.parents(node)

    def children(self, node: str) -> list[str]:
        return self.dag.children(node)

    def levels(self, var: str) -> list:
        """Levels of a variable, in code order."""
        return list(self.schema[var])

    @property
    def method(self) -> str | None:
        return self.info.get("method")

    @property
    def n_rows(self) -> int | None:
        return self.info.get("n_rows")

    def modelstring(self) -> str:
        """The bnlearn model string of the structure."""
        return self.dag.modelstring()

    def cpd(self, node: str) -> CPD:
        """The CPD object of ``node``."""
        if node not in self._cpds:
            raise UnknownNodeError(node, "in the network")
        return self._cpds[node]

    def tree(self, node: str):
        """The :class:`~pybncsmooth.counting.ContextTree` of ``node`` (fitted networks only)."""
        cpd = self.cpd(node)
        if not isinstance(cpd, (TreeCPD, DomainLastCPD)):
            raise DataError(f"node {node!r} has a dense table, not a context tree (the network was read from a file)")
        return cpd.tree

    def __repr__(self) -> str:
        head = f"FittedNetwork({len(self.nodes)} nodes, {len(self.dag.arcs)} arcs"
        if self.method:
            hp = self.info.get("hyperparameters") or {}
            hp_txt = ", ".join(f"{k}={v}" for k, v in hp.items())
            head += f", method={self.method}" + (f" ({hp_txt})" if hp_txt else "")
        prior = self.info.get("prior")
        if isinstance(prior, dict):
            head += f", prior={prior.get('source') or 'a network'} (weight {prior.get('weight')}, per {prior.get('per')})"
        if self.n_rows is not None:
            head += f", n={_rows_text(self.info)}"
        if self.domain is not None:
            head += f", domain={self.domain} ({len(self.domains)} levels)"
        em = self.info.get("em")
        if em:
            what = "data augmentation blocks" if em.get("augmentation") else "EM iterations"
            head += f", {em['iterations']} {what}" + ("" if em.get("converged") else " (not converged)")
        ms = self.modelstring()
        if len(ms) > 100:
            ms = ms[:97] + "..."
        return head + f"): {ms}"

    def write(self, path: Any, *, format: str | None = None, **options: Any) -> None:
        """Write the network: ``.bif``, ``.dsc``, ``.net`` (as bnlearn writes them),
        XMLBIF (``.xmlbif``, ``.bifxml``, ``.xml``), UAI (``.uai``, ``layout=``: see
        :mod:`pybncsmooth.interop.uai`) or the lossless native format ``.pbn``, chosen
        by extension or ``format``."""
        p = str(path)
        fmt = network_format(p, format)
        check_format_options(fmt, options)
        fmt.write(self, p, **options)

    def to_pgmpy(self) -> Any:
        """The network as a pgmpy ``DiscreteBayesianNetwork`` with one ``TabularCPD`` a
        node (same nodes, parent order, levels as state names and tables, bit for
        bit); :func:`pybncsmooth.from_pgmpy` converts back.  Needs pgmpy (an
        ``ImportError`` naming it otherwise).  A multi-domain network converts one
        domain at a time (``net.for_domain(d).to_pgmpy()``)."""
        return get_converter("pgmpy").to_object(self)

    def to_pyagrum(self) -> Any:
        """The network as a pyAgrum ``BayesNet`` (same nodes, arcs, labels and tables,
        bit for bit; integer levels as ``IntegerVariable``, others as labels);
        :func:`pybncsmooth.from_pyagrum` converts back.  Needs pyAgrum (an
        ``ImportError`` naming it otherwise).  A multi-domain network converts one
        domain at a time."""
        return get_converter("pyagrum").to_object(self)


#: the options of a network read from a file that says nothing of them (immutable: shared)
_DEFAULT_OPTIONS = Options()


def _options_of(info: Mapping[str, Any]) -> Options:
    """The options a network read from a file was fitted with, as far as its ``info``
    says (its missing values' policy)."""
    na = info.get("na")
    if na not in NAPolicy.NAMES:
        return _DEFAULT_OPTIONS
    label = info.get("na_label")
    return Options(na=na, **({"na_label": label} if isinstance(label, str) and label else {}))

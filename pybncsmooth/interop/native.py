"""The native ``.pbn`` format: a lossless save of a FittedNetwork.

A ``.pbn`` file is a NumPy ``.npz`` archive (no pickles): a JSON header (schema,
structure, domain, fit metadata, estimator name and hyperparameters) and, per
node, either its context tree (levels, branch values, counts) with the estimate
at every tree node, or its dense table.  Floats are stored as float64 arrays, so
reading back gives bit-identical probabilities and counts.  Levels round-trip
exactly when they are strings, integers or booleans (others are saved as text).
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from typing import Any

import numpy as np

from .._atomic import atomic_open
from ..counting.context_tree import ContextTree, TreeLevel
from ..data.schema import Schema
from ..errors import FileFormatError
from ..estimators.base import TreeEstimate, make_estimator
from ..estimators.bootstrap import BootstrapPosterior
from ..estimators.posterior import posterior_from_arrays
from ..model.cpd import DomainLastCPD, FixedPrefixCPD, TableCPD, TreeCPD
from ..estimators.prior import NetworkPrior, NodePrior
from ..model.fit_state import FitState
from ..model.formats import NetworkFormat, register_format
from ..model.network import FittedNetwork
from ..options import Options, option_names
from ..structure.dag import DAG
from .io import check_writable

__all__ = ["save_native", "load_native", "NATIVE_VERSION"]

NATIVE_VERSION = 1
_MAGIC = "pybncsmooth-network"


def _json_safe(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return repr(v)


def _save_tree(k: int, cpd: "TreeCPD | DomainLastCPD", arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """The arrays of node ``k``'s context tree and estimate (added to ``arrays``) and
    its header entry."""
    t = cpd.tree
    for i, lev in enumerate(t.levels):
        arrays[f"n{k}_parent_{i}"] = lev.parent
        arrays[f"n{k}_value_{i}"] = lev.value
        arrays[f"n{k}_counts_{i}"] = lev.counts
        arrays[f"n{k}_probs_{i}"] = cpd.estimate.probs[i]
        if cpd.estimate.sd is not None:
            arrays[f"n{k}_sd_{i}"] = cpd.estimate.sd[i]
    for extra in ("fallback", "fallback_sd"):
        val = getattr(cpd.estimate, extra)
        if val is not None:
            arrays[f"n{k}_{extra}"] = val
    post_meta = _save_posterior(k, cpd.estimate, arrays)
    info_arrays = {}
    info_json = {}
    for key, val in cpd.estimate.info.items():
        if isinstance(val, np.ndarray):
            arrays[f"n{k}_info_{key}"] = val
            info_arrays[key] = f"n{k}_info_{key}"
        else:
            info_json[key] = _json_safe(val)
    return {
        "kind": "tree",
        "tree_parents": list(t.parents),
        "domain_last": isinstance(cpd, DomainLastCPD),
        "unseen": cpd.estimate.unseen,
        "has_sd": cpd.estimate.sd is not None,
        "fallback_from": cpd.estimate.fallback_from,
        "info_json": info_json,
        "info_arrays": info_arrays,
        **post_meta,
    }


def _save_posterior(k: int, est: TreeEstimate, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """The estimate's unseen configurations' sds and its posterior (named arrays of its
    kind, :meth:`~pybncsmooth.estimators.posterior.TreePosterior.to_arrays`)."""
    meta: dict[str, Any] = {}
    if est.unseen_sd is not None:
        for i, a in enumerate(est.unseen_sd):
            arrays[f"n{k}_unseen_sd_{i}"] = a
        meta["n_unseen_sd"] = len(est.unseen_sd)
    if est.posterior is not None:
        named = est.posterior.to_arrays()
        for name, a in named.items():
            arrays[f"n{k}_post_{name}"] = np.asarray(a)
        meta["posterior"] = {"kind": est.posterior.kind, "arrays": list(named)}
    return meta


def _load_posterior(k: int, meta: dict[str, Any], z: Any, method: str | None = None) -> dict[str, Any]:
    """The ``unseen_sd`` and ``posterior`` fields saved by :func:`_save_posterior`
    (``method``: the fit's estimator; a ``bayes`` fit saved before its BDeu posterior had
    a kind of its own wrote ``"dirichlet"``, read as ``"bdeu"``)."""
    out: dict[str, Any] = {}
    if "n_unseen_sd" in meta:
        out["unseen_sd"] = tuple(z[f"n{k}_unseen_sd_{i}"] for i in range(meta["n_unseen_sd"]))
    if meta.get("posterior"):
        arrays = {name: z[f"n{k}_post_{name}"] for name in meta["posterior"]["arrays"]}
        kind = meta["posterior"]["kind"]
        out["posterior"] = posterior_from_arrays("bdeu" if (method, kind) == ("bayes", "dirichlet") else kind, arrays)
    return out


def _save_tree_counts(prefix: str, tree: ContextTree, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    for i, lev in enumerate(tree.levels):
        arrays[f"{prefix}_parent_{i}"] = lev.parent
        arrays[f"{prefix}_value_{i}"] = lev.value
        arrays[f"{prefix}_counts_{i}"] = lev.counts
    return {"child": tree.child, "parents": list(tree.parents), "cards": [int(c) for c in tree.parent_cards],
            "r": int(tree.child_card)}


def _load_tree_counts(prefix: str, meta: dict[str, Any], z: Any) -> ContextTree:
    levels = tuple(TreeLevel(z[f"{prefix}_parent_{i}"], z[f"{prefix}_value_{i}"], z[f"{prefix}_counts_{i}"])
                   for i in range(len(meta["parents"]) + 1))
    return ContextTree(meta["child"], tuple(meta["parents"]), meta["r"], tuple(meta["cards"]), levels)


def _save_state(net: "FittedNetwork", arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """What ``net`` keeps for :meth:`~pybncsmooth.FittedNetwork.update` beyond its trees
    (:class:`~pybncsmooth.model.fit_state.FitState`: the levels a file fixed; under EM,
    the complete rows' trees and the incomplete rows' patterns) and the prior network
    its estimator carries (the families' joints): arrays added, header entries returned."""
    out: dict[str, Any] = {}
    st = net.fit_state
    if st is not None:
        meta: dict[str, Any] = {"given": list(st.given)}
        if st.has_em:
            meta["complete"] = {n: _save_tree_counts(f"em_{k}", t, arrays) for k, (n, t) in enumerate(st.complete.items())}
            arrays["em_patterns"] = st.patterns
            arrays["em_pattern_weights"] = st.pattern_weights
            meta["pattern_variables"] = list(st.pattern_variables)
        out["fit_state"] = meta
    prior = getattr(net.estimator, "network_prior", None)
    if prior is not None:
        fams = []
        for k, p in enumerate(prior.families()):
            arrays[f"prior_{k}_joint"] = p.joint
            if p.stated is not None:
                arrays[f"prior_{k}_stated"] = p.stated
            fams.append({"child": p.child, "parents": list(p.parents)})
        out["prior"] = {"weight": prior.weight, "per": prior.per, "source": prior.source, "families": fams}
    return out


def _load_state(net: "FittedNetwork", header: dict[str, Any], z: Any, schema: Schema) -> None:
    """The fit state and the prior saved by :func:`_save_state`, back on ``net``."""
    meta = header.get("fit_state")
    if meta is not None:
        em = {}
        if "complete" in meta:
            em = {
                "complete": {n: _load_tree_counts(f"em_{k}", m, z) for k, (n, m) in enumerate(meta["complete"].items())},
                "patterns": z["em_patterns"], "pattern_weights": z["em_pattern_weights"],
                "pattern_variables": tuple(meta["pattern_variables"]),
            }
        net.fit_state = FitState(given=tuple(meta.get("given", ())), **em)
    pm = header.get("prior")
    if pm is not None and net.estimator is not None:
        fams = [NodePrior(f["child"], tuple(f["parents"]), z[f"prior_{k}_joint"], pm["weight"], pm["per"],
                          stated=z[f"prior_{k}_stated"] if f"prior_{k}_stated" in z else None)
                for k, f in enumerate(pm["families"])]
        net.estimator = net.estimator.with_prior(NetworkPrior(pm["weight"], pm["per"], pm["source"], nodes=fams),
                                                 check=False)
        for node in net.nodes:  # a bootstrap's replicates take the prior as the estimates did
            cpd = net.cpd(node)
            post = getattr(getattr(getattr(cpd, "inner", cpd), "estimate", None), "posterior", None)
            if isinstance(post, BootstrapPosterior):
                post.use_estimator(net.estimator)


def save_native(net: "FittedNetwork", fh: Any) -> None:
    """Write ``net`` to a binary file object or path."""
    arrays: dict[str, np.ndarray] = {}
    nodes_meta = {}
    for k, node in enumerate(net.nodes):
        cpd = net.cpd(node)
        if isinstance(cpd, (TreeCPD, DomainLastCPD)):
            nodes_meta[node] = _save_tree(k, cpd, arrays)
        elif isinstance(cpd, FixedPrefixCPD) and isinstance(cpd.inner, (TreeCPD, DomainLastCPD)):
            # one domain of a multi-domain fit (for_domain): the whole tree and the domain's code
            # (the domain is not in this network's schema: its number of levels is kept)
            nodes_meta[node] = {
                **_save_tree(k, cpd.inner, arrays),
                "prefix_codes": list(cpd.prefix_codes),
                "tree_cards": [int(c) for c in cpd.inner.tree.parent_cards],
            }
        elif isinstance(cpd, TableCPD):
            arrays[f"n{k}_table"] = cpd.table()
            nodes_meta[node] = {"kind": "table"}
        else:
            raise FileFormatError(f"cannot save the CPD of {node!r} of type {type(cpd).__name__}")
    est = net.estimator
    transformer = None
    if net.transformer is not None:
        if not hasattr(net.transformer, "to_dict"):
            raise FileFormatError(
                f"cannot save the network's transformer {type(net.transformer).__name__} in the native format"
            )
        transformer = _json_safe(net.transformer.to_dict())
    state_meta = _save_state(net, arrays)
    opts = {k: v for k, v in net.options.explicit().items()
            if isinstance(v, (str, int, float, bool)) and not isinstance(v, np.generic) and k not in ("prior", "weights")}
    state_meta["options"] = {"entry": net.options.entry, "values": opts}
    header = {
        "magic": _MAGIC,
        "version": NATIVE_VERSION,
        "schema": net.schema.to_dict(),
        "nodes": net.nodes,
        "parents": {n: net.parents(n) for n in net.nodes},
        "domain": net.domain,
        "info": _json_safe(net.info),
        "estimator": None if est is None else {"name": est.name, "params": _json_safe(est.get_params())},
        "cpds": nodes_meta,
        "transformer": transformer,
        **state_meta,
    }
    arrays["header"] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    np.savez_compressed(fh, **arrays)


#: what a corrupted or truncated archive can raise while it is read
_CORRUPT = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    ValueError,
    KeyError,
    IndexError,
    TypeError,
    OSError,
    UnicodeDecodeError,
    json.JSONDecodeError,
)


def load_native(fh: Any, path: str | None = None) -> "FittedNetwork":
    """Read a network written by :func:`save_native`.

    A corrupted or truncated file raises :class:`FileFormatError` (never another
    exception): the archive's checksums catch damaged data.
    """
    try:
        return _load_native(fh, path)
    except FileFormatError:
        raise
    except _CORRUPT as e:
        raise FileFormatError(f"corrupted or truncated network file ({type(e).__name__}: {e})", path) from None


def _load_native(fh: Any, path: str | None = None) -> "FittedNetwork":
    try:
        z = np.load(fh, allow_pickle=False)
        header = json.loads(bytes(z["header"]).decode("utf-8"))
    except (ValueError, KeyError, OSError, json.JSONDecodeError) as e:
        raise FileFormatError(f"not a pybncsmooth network file ({e})", path) from None
    if header.get("magic") != _MAGIC:
        raise FileFormatError("not a pybncsmooth network file", path)
    if header.get("version", 0) > NATIVE_VERSION:
        raise FileFormatError(
            f"written by a newer pybncsmooth (format version {header['version']}); upgrade to read it", path
        )
    schema = Schema.from_dict(header["schema"])
    nodes = header["nodes"]
    dag = DAG({n: header["parents"][n] for n in nodes}, nodes=nodes)
    cpds = {}
    for k, node in enumerate(nodes):
        meta = header["cpds"][node]
        if meta["kind"] == "table":
            cpds[node] = TableCPD(node, header["parents"][node], z[f"n{k}_table"], normalize=False)
            continue
        tp = meta["tree_parents"]
        d = len(tp)
        levels = tuple(
            TreeLevel(z[f"n{k}_parent_{i}"], z[f"n{k}_value_{i}"], z[f"n{k}_counts_{i}"]) for i in range(d + 1)
        )
        cards = tuple(meta["tree_cards"]) if "tree_cards" in meta else schema.cardinalities(tp)
        tree = ContextTree(node, tuple(tp), schema.cardinality(node), cards, levels)
        info = dict(meta.get("info_json", {}))
        for key, name in meta.get("info_arrays", {}).items():
            info[key] = z[name]
        probs = tuple(z[f"n{k}_probs_{i}"] for i in range(d + 1))
        sd = tuple(z[f"n{k}_sd_{i}"] for i in range(d + 1)) if meta.get("has_sd") else None
        extra = {e: z[f"n{k}_{e}"] for e in ("fallback", "fallback_sd") if f"n{k}_{e}" in z.files}
        extra.update(_load_posterior(k, meta, z, (header.get("estimator") or {}).get("name")))
        est = TreeEstimate(probs, meta["unseen"], info, sd=sd, fallback_from=meta.get("fallback_from", 0), **extra)
        if meta.get("domain_last"):  # a multi-domain fit's tree with the domain split last
            cpds[node] = DomainLastCPD(TreeCPD(tree, est, domain_last=True))
        else:
            cpds[node] = TreeCPD(tree, est)
        if "prefix_codes" in meta:  # one domain of a multi-domain fit
            cpds[node] = FixedPrefixCPD(cpds[node], meta["prefix_codes"])
    est = None
    if header.get("estimator"):
        est = _load_estimator(header["estimator"])
    net = FittedNetwork(dag, schema, cpds, domain=header.get("domain"), estimator=est, info=header.get("info"),
                        options=_load_options(header.get("options")))
    _load_state(net, header, z, schema)
    if header.get("transformer"):
        from ..data.discretize import Discretizer  # scikit-learn, imported when first used

        net.transformer = Discretizer.from_dict(header["transformer"])
    return net


def _load_options(meta: dict[str, Any] | None) -> Options | None:
    """The options the network was fitted with, as far as they were saved (their plain
    values; ``None``: a file without them, whose network takes them from its ``info``)."""
    if not meta:
        return None
    known = option_names()
    values = {k: v for k, v in meta.get("values", {}).items() if k in known}
    try:
        return Options(**values, entry=meta.get("entry", "fit"))
    except (TypeError, ValueError):
        return None


def _load_estimator(meta: dict[str, Any]) -> Any:
    """The saved estimator (a seed that was a Generator, saved as its text, is dropped);
    ``None`` for one this version does not know (the tables are kept)."""
    params = dict(meta["params"])
    if meta["name"] == "hgs" and "prior" in params:  # hgs's pseudo-counts, once named prior
        params["pseudo_count"] = params.pop("prior")
    if not isinstance(params.get("random_state"), (int, type(None))):
        params.pop("random_state")
    try:
        return make_estimator(meta["name"], **params)
    except Exception:  # an estimator this version does not know: keep the tables
        return None


def to_bytes(net: "FittedNetwork") -> bytes:
    buf = io.BytesIO()
    save_native(net, buf)
    return buf.getvalue()


def read_native(path: str) -> "FittedNetwork":
    """A ``.pbn`` file written by :func:`save_native`."""
    with open(path, "rb") as fh:
        return load_native(fh, path)


def write_native(net: Any, path: str) -> None:
    """Write ``net`` as a ``.pbn`` file (atomically: a failed write leaves no file)."""
    check_writable(net, "native")
    with atomic_open(path, "wb") as fh:
        save_native(net, fh)


register_format(NetworkFormat("native", (".pbn",), read_native, write_native, aliases=("pbn",)))

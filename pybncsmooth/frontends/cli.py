"""The ``pybncsmooth`` command line.

::

    pybncsmooth fit DATA -s SPEC [--method M] [--OPTION VALUE ...] [-p NAME=VALUE ...] -o OUT
    pybncsmooth learn DATA [--score S] [--domain COL] [--algorithm hc|tabu] [-p NAME=VALUE ...]
                      [--method M] -o OUT
    pybncsmooth update MODEL DATA [--decay D] [--weights COL] [--prior-weight W] -o OUT
    pybncsmooth predict MODEL DATA --target T [-o OUT.csv] [--on-unseen backoff]
    pybncsmooth query MODEL --target T [--target T2] [--evidence A=x ...]
                      [--interval 0.9 [--draws N] [--seed S] | --map]
    pybncsmooth info MODEL [--cpt NODE]
    pybncsmooth evaluate DATA --class C --models nb tan kdb2:mestimate [--cv 5x2]
    pybncsmooth methods [METHOD]
    pybncsmooth demo

DATA is a CSV or Parquet file; MODEL and OUT are ``.bif``, ``.dsc``, ``.net``,
``.pbn`` (native) or ``.rds`` files.  Errors are printed as one line naming the
variable, level, node or file line at fault, with exit status 2.
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from typing import TYPE_CHECKING, Any, Sequence

from ..errors import MissingColumnError, PyBNCSmoothError
from ._cli_specs import METHODS
from .cli_options import add_option_flags, given_settings, parse_value

if TYPE_CHECKING:
    import pandas as pd

# The parser (and so --help and --version) imports nothing beyond what ``import
# pybncsmooth`` imports (NumPy, pandas, the reading and querying of a network): each
# command imports what it runs (the fit pipeline, the estimators' kernels, ...) when it runs.

__all__ = ["main"]


class _Methods:
    """The estimators ``--method`` takes, as argparse's ``choices``: the registry's names.
    Listing them (help, an error) reads the written names (``_cli_specs.METHODS``) while
    the registry is not loaded, so ``--help`` stays cheap; a name not among them is looked
    up in the registry itself, so an estimator registered at run time (one module and its
    registration, nothing else) is taken here as by every other front end."""

    def _names(self) -> tuple[str, ...]:
        base = sys.modules.get("pybncsmooth.estimators.base")
        return METHODS if base is None else tuple(base.available_methods())

    def __iter__(self):
        return iter(self._names())

    def __contains__(self, name: object) -> bool:
        if name in METHODS:
            return True
        from ..estimators import available_methods

        return name in available_methods()


_METHOD_CHOICES = _Methods()


def _positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1."""
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return v


def _hyper(pairs: Sequence[str]) -> dict[str, Any]:
    """Settings from ``NAME=VALUE`` strings (values read as numbers, booleans, ``None``
    or text)."""
    out = {}
    for p in pairs:
        if "=" not in p:
            raise PyBNCSmoothError(f"expected NAME=VALUE, got {p!r}")
        k, v = p.split("=", 1)
        out[k.strip()] = parse_value(v.strip())
    return out


#: names -p cannot take: the command line gives them otherwise
_NOT_P = {"spec": "-s/--spec", "data": "the DATA argument",
          "output": "-o/--output", "verbose": "-v/--verbose"}


def _fit_settings(args: argparse.Namespace) -> dict[str, Any]:
    """fit's keyword arguments: the options from their flags and the ``-p`` pairs,
    the hyperparameters from ``-p``, the method from ``-m`` or ``-p method=``."""
    out = given_settings(args, "fit", args.param, _NOT_P)
    if "method" in out and args.method is not None:
        raise ValueError("method is given twice (-p method=... and -m/--method): give it once")
    out["method"] = out.pop("method", None) or args.method or "bayes"
    if isinstance(out.get("prior"), str) and not isinstance(parse_value(out["prior"]), str):
        out["prior"] = parse_value(out["prior"])  # a number: hgs's pseudo-counts under their old name
    return out


def _read_data(path: str, chunksize: int | None = None) -> Any:
    from ..data.sources import read_table

    return read_table(path, chunksize=chunksize)


def _cmd_fit(args: argparse.Namespace) -> int:
    import pandas as pd

    from ..options import Options, split_settings
    from .api import fit

    data = args.data  # read in chunks (bounded memory), chunksize= or the default
    try:
        with warnings.catch_warnings(record=True) as renamed:  # a renamed hyperparameter, said plainly
            warnings.simplefilter("always", DeprecationWarning)
            settings = _fit_settings(args)
            given, hyper = split_settings(settings, settings["method"])
        for w in renamed:
            print(f"pybncsmooth: warning: {w.message}", file=sys.stderr)
        options = {**given, **hyper}
        Options.build("fit", **given)  # the options checked before any data is read
    except (ValueError, PyBNCSmoothError) as e:
        args.subparser.error(str(e))  # the usage line, exit status 2
    if options.get("discretize") is not None:  # cut points are learned from numbers, in memory
        data = _numbers_table(args.data)
    net = fit(args.spec, data, **options)
    print(net)
    if args.output:
        net.write(args.output)
        print(f"wrote {args.output}")
    if args.verbose:
        with pd.option_context("display.width", 160, "display.max_rows", 500):
            print(net.node_summary().to_string())
    return 0


def _cmd_learn(args: argparse.Namespace) -> int:
    from ..data.sources import read_table
    from ..learning.search import hc, tabu
    from .api import fit

    try:
        extra = _hyper(args.param)
    except PyBNCSmoothError as e:
        args.subparser.error(str(e))
    df = read_table(args.data)
    if args.domain is not None and args.domain not in df.columns:
        raise MissingColumnError(args.domain, "domain", [str(c) for c in df.columns])
    nodes = df if args.domain is None else df.drop(columns=[args.domain])  # the domain is never a node
    if args.domain is not None and args.score == "bhd":
        extra["domain"] = args.domain
        nodes = df
    search = hc if args.algorithm == "hc" else tabu
    controls = {"maxp": args.maxp, "max_iter": args.max_iter}
    if args.algorithm == "hc":
        controls.update(restart=args.restart, random_state=args.seed)
    dag = search(nodes, score=args.score, progress=None if not args.quiet else False, **controls, **extra)
    print(dag.modelstring())
    if args.output:
        by_domain = args.domain is not None and args.method == "hmd"
        net = fit(dag, df if by_domain else df[dag.nodes], method=args.method,
                  **({"domain": args.domain} if by_domain else {}))
        net.write(args.output)
        print(f"wrote {args.output}")
    return 0


def _cmd_update(args: argparse.Namespace) -> int:
    from ..interop.io import read_network
    from ..options import Options
    from ..structure.dag import DAG

    try:
        settings = given_settings(args, "update", [])
        Options.build("update", **settings)  # checked before any data is read
    except (ValueError, PyBNCSmoothError) as e:
        args.subparser.error(str(e))
    net = read_network(args.model)
    if isinstance(net, DAG):
        raise PyBNCSmoothError(f"{args.model} holds a structure without tables: fit it first (pybncsmooth fit)")
    new = net.update(args.data, **settings)
    print(new)
    out = args.output or args.model
    new.write(out)
    print(f"wrote {out}")
    return 0


def _cmd_predict(args: argparse.Namespace) -> int:
    import pandas as pd

    from .._atomic import atomic_path
    from ..interop.io import read_network

    net = read_network(args.model)
    data = _read_data(args.data)
    proba = net.predict_proba(data, args.target, on_unseen=args.on_unseen)
    out = pd.DataFrame(index=proba.index)
    out[args.target] = [proba.columns[i] for i in proba.to_numpy().argmax(axis=1)]
    for lev in proba.columns:
        out[f"P({args.target}={lev})"] = proba[lev].to_numpy()
    if args.output:
        with atomic_path(args.output) as tmp:
            out.to_csv(tmp, index=False)
        print(f"wrote {len(out)} predictions to {args.output}")
    else:
        out.to_csv(sys.stdout, index=False)
    return 0


def _evidence(pairs: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in pairs:
        if "=" not in p or not p.split("=", 1)[0].strip():
            raise PyBNCSmoothError(f"--evidence expects VARIABLE=LEVEL, got {p!r}")
        k, v = (x.strip() for x in p.split("=", 1))
        if k in out:
            raise PyBNCSmoothError(f"--evidence gives {k!r} twice")
        out[k] = v
    return out


def _cmd_query(args: argparse.Namespace) -> int:
    import pandas as pd

    from ..interop.io import read_network

    net = read_network(args.model)
    if not hasattr(net, "query"):
        raise PyBNCSmoothError(f"{args.model} holds a structure without tables: there is nothing to query")
    ev = _evidence(args.evidence)
    kw = {"domain": args.domain} if args.domain is not None else {}
    given = ", ".join(f"{k}={v}" for k, v in ev.items())
    what = f"P({', '.join(args.target)}{' | ' + given if given else ''})"
    if args.map:
        if args.interval is not None or args.draws is not None or args.seed is not None:
            args.subparser.error("--map gives the most probable state only: --interval, --draws and --seed apply to "
                                 "the posterior (query without --map)")
        state, prob = net.map_query(args.target, ev, **kw)
        print(f"most probable state of {', '.join(args.target)}{' given ' + given if given else ''}:")
        for t, lev in state.items():
            print(f"  {t} = {lev}")
        print(f"posterior probability {prob:.6g}")
        return 0
    if args.interval is None and (args.draws is not None or args.seed is not None):
        args.subparser.error("--draws and --seed apply to the credible interval: give --interval too")
    targets = args.target[0] if len(args.target) == 1 else args.target
    if args.interval is not None:
        kw.update(interval=args.interval, random_state=args.seed, **({} if args.draws is None else
                                                                      {"draws": args.draws}))
    res = net.query(targets, ev, **kw)
    print(what)
    with pd.option_context("display.width", 160, "display.max_rows", 500, "display.float_format", "{:.6g}".format):
        print(res.to_frame().to_string() if isinstance(res, pd.Series) else res.to_string())
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    import pandas as pd

    from ..interop.io import read_network
    from ..structure.dag import DAG

    obj = read_network(args.model)
    if isinstance(obj, DAG):
        print(obj)
        print(obj.modelstring())
        return 0
    print(obj)
    print(f"model string: {obj.modelstring()}")
    with pd.option_context("display.width", 160, "display.max_rows", 500, "display.max_columns", 50):
        print(obj.node_summary().to_string())
        for node in args.cpt or []:
            print(f"\nP({node} | {', '.join(obj.parents(node)) or '-'})")
            print(obj.cpt_frame(node, wide=True).to_string())
    return 0


def parse_model_spec(spec: str) -> Any:
    """``STRUCTURE[:METHOD][:NAME=VALUE,...]`` -> a BNClassifier; STRUCTURE is ``nb``,
    ``tan``, ``kdb<k>`` or ``skdb<k>`` (e.g. ``kdb2:mestimate:m=1``)."""
    from ..classifiers.classifier import BNClassifier  # scikit-learn, imported when first used

    parts = spec.split(":")
    m = re.fullmatch(r"(nb|tan|kdb|skdb)(\d*)", parts[0])
    if not m:
        raise PyBNCSmoothError(f"model {spec!r}: the structure must be nb, tan, kdb<k> or skdb<k>")
    structure, k = m.group(1), int(m.group(2) or 1)
    method = parts[1] if len(parts) > 1 and parts[1] else "bayes"
    hyper = _hyper([p for chunk in parts[2:] for p in chunk.split(",") if p]) if len(parts) > 2 else {}
    if structure not in ("kdb", "skdb"):
        k = None
    for name in ("structure", "k", "method"):
        if name in hyper:
            raise PyBNCSmoothError(
                f"model {spec!r}: {name!r} is given by the model's STRUCTURE[:METHOD] part; drop {name}=..."
            )
    return BNClassifier(structure=structure, method=method, **({"k": k} if k is not None else {}), **hyper)


def _numbers_table(path: str) -> pd.DataFrame:
    """A data file in memory with its numeric columns as numbers (for the discretisers)."""
    import pandas as pd

    from ..data.sources import read_table
    from ..validation import check_file

    if path.endswith((".parquet", ".pq")):
        return read_table(path)
    return pd.read_csv(check_file(path, "data file"), keep_default_na=False, na_values=["", "NA"])


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from ..classifiers.comparison import win_draw_loss  # scikit-learn, imported when first used
    from ..classifiers.crossval import evaluate
    import pandas as pd

    from .._atomic import atomic_path
    from ..data.sources import read_table

    data = _numbers_table(args.data) if args.discretize else read_table(args.data)
    models = {}
    for spec in args.models:
        clf = parse_model_spec(spec)
        if args.discretize:
            clf.set_params(discretize=args.discretize)
        models[spec] = clf
    try:
        settings = given_settings(args, "evaluate", [])
    except ValueError as e:
        args.subparser.error(str(e))
    settings.setdefault("random_state", 0)
    settings.setdefault("progress", False if args.quiet else None)  # None: a bar only at a terminal
    res = evaluate(models, data, args.target, cv=args.cv, **settings)
    metrics = ["zero_one", "rmse", "log_loss", "auc"]
    table = res.groupby("model", sort=False)[metrics + ["fit_seconds"]].mean()
    with pd.option_context("display.width", 160, "display.float_format", "{:.4f}".format):
        seed = settings["random_state"]
        print(f"{args.data}: {len(data)} rows, class {args.target!r}, {args.cv} cross-validation (seed {seed})")
        print(table.to_string())
    names = list(models)
    if len(names) > 1:
        print(f"\nwin-draw-loss of {names[0]!r} against each model over the folds (two-tailed sign test)")
        for other in names[1:]:
            cells = []
            for metric in ("zero_one", "rmse"):
                w = win_draw_loss(res, names[0], other, metric, by="fold")
                cells.append(f"{metric} {w['wins']}-{w['draws']}-{w['losses']} (p={w['p_value']:.3g})")
            print(f"  vs {other}: " + "; ".join(cells))
    if args.output:
        with atomic_path(args.output) as tmp:
            res.to_csv(tmp, index=False)
        print(f"wrote per-fold results to {args.output}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    run_demo(seed=args.seed, repeats=args.repeats, progress=False if args.quiet else None)
    return 0


def _cmd_options(args: argparse.Namespace) -> int:
    from ..options import option_specs

    for name, spec in option_specs().items():
        print(f"{name}  [{spec.kind}; {', '.join(spec.entries)}]")
        print(f"    {spec.doc} (e.g. {spec.example!r})")
    return 0


def _cmd_methods(args: argparse.Namespace) -> int:
    from ..estimators.base import describe_methods

    table = describe_methods(details=True)
    for method in [args.method] if args.method else list(table):
        print(f"{method}:")
        params = table[method]
        if not params:
            print("  (no hyperparameters)")
        for name, d in params.items():
            print(f"  {name} = {d['default']!r}  [{d['constraint']}]")
            print(f"      {d['doc']}")
    return 0


def _add_query_parser(sub: Any) -> None:
    """The `query` command's arguments."""
    q = sub.add_parser("query", help="exact posterior P(targets | evidence), or the most probable state (--map)")
    q.add_argument("model", help=".bif/.dsc/.net/.pbn/.rds network")
    q.add_argument("-t", "--target", action="append", required=True, help="a target node (repeat for a joint)")
    q.add_argument("-e", "--evidence", action="append", default=[], metavar="VAR=LEVEL", help="observed value")
    q.add_argument("--interval", type=float, default=None, help="add the credible interval at this level, e.g. 0.9")
    q.add_argument("--draws", type=int, default=None, help="posterior parameter sets for --interval (default 1000)")
    q.add_argument("--seed", type=int, default=None, help="random_state of the draws of --interval")
    q.add_argument("--domain", default=None, help="the domain to query (multi-domain networks)")
    q.add_argument("--map", action="store_true", help="the most probable joint state of the targets instead "
                   "(no --interval)")
    q.set_defaults(func=_cmd_query, subparser=q)


def _add_fit_parser(sub: Any) -> None:
    """The `fit` command: a flag for every option of fit, hyperparameters with -p."""
    f = sub.add_parser("fit", help="estimate the CPTs of a structure from data")
    f.add_argument("data", help="CSV or Parquet file (text columns; empty or NA = missing)")
    f.add_argument(
        "-s",
        "--spec",
        required=True,
        dest="spec",
        help="bnlearn model string '[A][B|A]', a formula 'B ~ A', a .bif/.dsc/.net/.rds file, or a classifier "
        "formula 'Class ~ .' with --structure nb|tan|kdb|skdb (a structure learned)",
    )
    f.add_argument("-m", "--method", default=None, choices=_METHOD_CHOICES, help="the estimator (default bayes)")
    f.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a hyperparameter, e.g. -p iss=10 or -p m=1 (repeatable; 'pybncsmooth methods' lists them), or any "
        "option of fit (-p na=em, -p weights=COLUMN, -p seed=1, ...), each given once",
    )
    f.add_argument("-o", "--output", help="write the network (.bif, .dsc, .net, .pbn, .rds)")
    f.add_argument("-v", "--verbose", action="store_true", help="print the per-node summary")
    add_option_flags(f, "fit")
    f.set_defaults(func=_cmd_fit, subparser=f)


def _add_learn_parser(sub: Any) -> None:
    g = sub.add_parser("learn", help="learn a network structure from data by a score-based search (bnlearn's hc, tabu)")
    g.add_argument("data", help="a CSV or Parquet file of categorical columns, one a node")
    g.add_argument("--score", default="bic", choices=("loglik", "aic", "bic", "bde", "bds", "k2", "bhd"),
                   help="the network score (default bic, as bnlearn); bhd pools related data sets (--domain)")
    g.add_argument("--domain", help="the column naming each row's data set (bhd; not a node)")
    g.add_argument("--algorithm", default="hc", choices=("hc", "tabu"), help="the search (default hc)")
    g.add_argument("--maxp", type=_positive_int, help="the most parents of a node")
    g.add_argument("--max-iter", type=_positive_int, help="the most arc operations")
    g.add_argument("--restart", type=int, help="random restarts of hc (default 0; with bhd, the score's default"
                   " search: see pybncsmooth.hc)")
    g.add_argument("--seed", type=int, help="seed of the restarts' perturbations")
    g.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a hyperparameter of the score: iss=10 (bde, bds), k=2 (aic, bic), s=, alpha0= (bhd)")
    g.add_argument("--method", default="bayes",
                   help="the estimator of the CPTs written to -o (default bayes; hmd with --domain fits the domains)")
    g.add_argument("-o", "--output", help="write the learned network, its CPTs fitted, to this .bif/.dsc/.net/.pbn/.rds")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    g.set_defaults(func=_cmd_learn, subparser=g)


def _add_update_parser(sub: Any) -> None:
    """The `update` command: a network and new rows, a flag for every option of update."""
    u = sub.add_parser("update", help="add new rows to a fitted network without refitting it (net.update)")
    u.add_argument("model", help="a fitted .pbn network (or tables read from .bif/.dsc/.net/.rds, with --prior-weight)")
    u.add_argument("data", help="CSV or Parquet file of the new rows")
    u.add_argument("-o", "--output", help="write the updated network (default: over MODEL)")
    add_option_flags(u, "update")
    u.set_defaults(func=_cmd_update, subparser=u)


def _add_predict_parser(sub: Any) -> None:
    p = sub.add_parser("predict", help="posterior of a target variable for each row of a data file")
    p.add_argument("model", help=".bif/.dsc/.net/.pbn/.rds network")
    p.add_argument("data", help="CSV or Parquet file")
    p.add_argument("-t", "--target", required=True)
    p.add_argument(
        "--on-unseen",
        default=None,
        choices=["error", "backoff"],
        help="a value unseen in training: an error, or back off in the context tree (default: the network's "
        "option, error); missing values are summed out by exact inference, or are a level of their own where the "
        "fit made them one (na=level)",
    )
    p.add_argument("-o", "--output", help="CSV file for the predictions (default: standard output)")
    p.set_defaults(func=_cmd_predict)


def _add_evaluate_parser(sub: Any) -> None:
    e = sub.add_parser("evaluate", help="cross-validate Bayesian network classifiers and print win-draw-loss")
    e.add_argument("data", help="CSV or Parquet file")
    e.add_argument("-c", "--class", dest="target", required=True, help="the class column")
    e.add_argument(
        "-m",
        "--models",
        nargs="+",
        default=["nb", "tan", "kdb2"],
        help="models as STRUCTURE[:METHOD][:NAME=VALUE,...], e.g. nb tan:mestimate:m=1 kdb2 skdb3 (NAME: a "
        "hyperparameter or an option of the classifier)",
    )
    e.add_argument("--cv", default="5x2", help="'5x2' (repeats x folds) or '10'")
    e.add_argument(
        "--discretize",
        default=None,
        choices=["mdl", "equal_frequency", "equal_width"],
        help="discretise numeric columns inside each training fold",
    )
    e.add_argument("-q", "--quiet", action="store_true", help="no progress bar (none either when not at a terminal)")
    e.add_argument("-o", "--output", help="CSV file for the per-fold results")
    add_option_flags(e, "evaluate")
    e.set_defaults(func=_cmd_evaluate, subparser=e)


def _add_small_parsers(sub: Any) -> None:
    """info, options, methods and demo."""
    i = sub.add_parser("info", help="describe a network file")
    i.add_argument("model")
    i.add_argument("--cpt", action="append", metavar="NODE", help="also print this node's CPT (repeatable)")
    i.set_defaults(func=_cmd_info)
    o = sub.add_parser("options", help="the options of every entry point: type, default, where they apply, doc")
    o.set_defaults(func=_cmd_options)
    m = sub.add_parser("methods", help="the estimators and their hyperparameters (default, accepted values, doc)")
    m.add_argument("method", nargs="?", choices=_METHOD_CHOICES, help="only this estimator")
    m.set_defaults(func=_cmd_methods)
    d = sub.add_parser("demo", help="compare estimators on a bundled data set (held-out log-likelihood)")
    d.add_argument("--seed", type=int, default=2024)
    d.add_argument("--repeats", type=_positive_int, default=10, help="random splits (default 10)")
    d.add_argument("-q", "--quiet", action="store_true", help="no progress bar (none either when not at a terminal)")
    d.set_defaults(func=_cmd_demo)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pybncsmooth",
        description="Fit, inspect and use discrete Bayesian networks with smoothed parameters.",
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"pybncsmooth {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_fit_parser(sub)
    _add_learn_parser(sub)
    _add_update_parser(sub)
    _add_predict_parser(sub)
    _add_query_parser(sub)
    _add_evaluate_parser(sub)
    _add_small_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (PyBNCSmoothError, OSError, ImportError) as e:  # OSError: a missing file, a folder, no permission
        print(f"pybncsmooth: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

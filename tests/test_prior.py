"""fit(prior=P, prior_weight=w): an expert network as the prior.

bayes: Dirichlet pseudo-counts w P(x, parents) (pyAgrum's useDirichletPrior, checked
against pyAgrum where it is installed) or w P(x | parents) per configuration; a uniform
P is BDeu; the other estimators as their documentation states; a prior that does not
fit the structure or the levels is refused naming the node."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import DataError, HyperparameterError, StructureError

ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"


@pytest.fixture(scope="module")
def expert(asia):
    return bs.fit(ASIA, asia.iloc[:300], "bayes", iss=5)


def _counts(df: pd.DataFrame, node: str, parents: list[str], net) -> np.ndarray:
    """n(x, parents) with axes (node, *parents) in the network's level order."""
    cols = [node, *parents]
    shape = [len(net.levels(c)) for c in cols]
    out = np.zeros(shape)
    codes = [pd.Categorical(df[c], categories=net.levels(c)).codes for c in cols]
    np.add.at(out, tuple(codes), 1)
    return out


def _joint(net, node: str) -> np.ndarray:
    """P(node, parents) of ``net`` with axes (node, *parents), by brute force."""
    pa = net.parents(node)
    q = net.query([node, *pa])
    return q.to_numpy().reshape([len(net.levels(v)) for v in (node, *pa)])


@pytest.mark.parametrize("per", ["network", "configuration"])
def test_bayes_takes_the_pseudo_counts_of_the_expert(asia, expert, per):
    data = asia.iloc[300:700]
    w = 40.0
    net = bs.fit(ASIA, data, "bayes", prior=expert, prior_weight=w, prior_per=per)
    for node in net.nodes:
        pa = net.parents(node)
        n = _counts(data, node, pa, net)
        a = w * (_joint(expert, node) if per == "network" else expert.cpt(node))
        assert np.abs(net.cpt(node) - (n + a) / (n + a).sum(axis=0, keepdims=True)).max() < 1e-12, node
    assert net.info["prior"] == {"source": "FittedNetwork", "weight": w, "per": per}


def test_a_uniform_prior_is_bdeu_and_per_configuration_k2(asia):
    dag = bs.DAG.from_modelstring(ASIA)
    uniform = {n: np.full((2,) * (1 + len(dag.parents(n))), 0.5) for n in dag.nodes}
    data = asia.iloc[:500]
    assert bs.fit(ASIA, data, "bayes", prior=uniform, prior_weight=10).max_abs_diff(
        bs.fit(ASIA, data, "bayes", iss=10)) < 1e-12
    k2 = bs.fit(ASIA, data, "bayes", prior=uniform, prior_weight=2, prior_per="configuration")
    n = _counts(data, "E", k2.parents("E"), k2)
    assert np.abs(k2.cpt("E") - (n + 1) / (n + 1).sum(axis=0, keepdims=True)).max() < 1e-12


def test_an_unseen_configuration_answers_the_expert_and_its_sds_are_exact(asia, expert):
    data = asia[(asia.S == "no") | (asia.L == "no")].iloc[:300]  # never S = yes with L = yes ... as E's parents
    net = bs.fit(ASIA, data, "bayes", prior=expert, prior_weight=20)
    e_t_l = net.cpt("E")
    n = _counts(data, "E", net.parents("E"), net)
    a = 20 * _joint(expert, "E")
    post = (n + a) / (n + a).sum(axis=0, keepdims=True)
    assert np.abs(e_t_l - post).max() < 1e-12
    missing = n.sum(axis=0) == 0
    if missing.any():  # an unseen configuration: its prior mean, the expert's P(x | parents)
        assert np.abs(e_t_l[:, missing] - expert.cpt("E")[:, missing]).max() < 1e-12
    tot = (n + a).sum(axis=0, keepdims=True)
    assert np.abs(net.cpt("E", stat="sd") - np.sqrt(post * (1 - post) / (tot + 1))).max() < 1e-12
    draws = np.stack([d.cpt("E") for d in net.sample_parameters(500, random_state=0)])
    assert np.abs(draws.mean(axis=0) - post).max() < 0.03  # Monte Carlo error of 500 draws: < 0.01


def test_an_expert_with_other_arcs_enters_through_its_family_joints(asia):
    """The expert's arcs differ (A -> S, T independent of A): its joint of each fitted
    family comes from exact inference."""
    other = bs.fit("[A][S|A][T][L|S][B|S:A][E|T:L][D|B:E][X|E]", asia.iloc[:400], "bayes", iss=2)
    data = asia.iloc[400:900]
    net = bs.fit(ASIA, data, "bayes", prior=other, prior_weight=30)
    n = _counts(data, "T", ["A"], net)
    joint = other.query(["T", "A"]).to_numpy().reshape(2, 2)
    a = 30 * joint
    assert np.abs(net.cpt("T") - (n + a) / (n + a).sum(axis=0, keepdims=True)).max() < 1e-12


def test_mestimate_mbranch_and_hmd_take_the_expert(asia, expert):
    data = asia.iloc[300:500]
    w = 25.0
    m = bs.fit(ASIA, data, "mestimate", prior=expert, prior_weight=w, prior_per="configuration")
    n = _counts(data, "L", ["S"], m)
    a = w * expert.cpt("L")
    assert np.abs(m.cpt("L") - (n + a) / (n.sum(axis=0) + w)).max() < 1e-12
    mb = bs.fit(ASIA, data, "mbranch", prior=expert, prior_weight=w)
    root = _counts(data, "A", [], mb)
    assert np.abs(mb.cpt("A") - (root + w * expert.cpt("A")) / (root.sum() + w)).max() < 1e-12
    # hmd: alpha / s ~ Dir(w P(x)); an overwhelming w pins the pooled kappa to the expert's marginal
    h = bs.fit(ASIA, data, "hmd", s="levels", prior=expert, prior_weight=1e7)
    marginal = expert.query("E").to_numpy()
    assert np.abs(h.cpd("E").estimate.info["kappa"] - marginal).max() < 1e-3
    assert bs.fit(ASIA, data, "hmd", s="levels").max_abs_diff(h) > 1e-3


def test_hdp_takes_the_expert_as_the_root_base_distribution(asia, expert, tmp_path):
    """hdp: the root of every tree is Dir(n + w P(x)) around the expert's marginal (a node
    without parents exactly); a heavy expert pins the roots of deeper trees to it."""
    data = asia.iloc[300:500]
    w = 50.0
    net = bs.fit(ASIA, data, "hdp", prior=expert, prior_weight=w, iterations=100, random_state=0)
    n = _counts(data, "A", [], net)
    assert np.abs(net.cpt("A") - (n + w * expert.cpt("A")) / (n.sum() + w)).max() < 1e-12
    heavy = bs.fit(ASIA, data, "hdp", prior=expert, prior_weight=1e6, iterations=100, random_state=0)
    assert np.abs(heavy.cpd("E").estimate.probs[0][0] - expert.query("E").to_numpy()).max() < 1e-4
    assert heavy.cpd("E").estimate.info["root_concentration"] == 1e6
    heavy.write(tmp_path / "h.pbn")
    draws = bs.read_network(tmp_path / "h.pbn").sample_parameters(200, random_state=1)
    assert np.abs(np.mean([d.cpt("A") for d in draws], axis=0) - heavy.cpt("A")).max() < 1e-3
    with pytest.raises(HyperparameterError, match="root_tables='integrated' takes no prior"):
        bs.fit(ASIA, data, "hdp", prior=expert, root_tables="integrated", iterations=20)


def test_hdp_posterior_thinned_keeps_the_expert_base(asia, expert):
    """``na="em"`` keeps thinned sampler states (``HDPPosterior.thin``): their draws stay
    around the expert's root (a heavy prior pins the root of node E's tree to the expert's
    P(E); without the base a thinned state's root is uniform, off by about 0.5 - P(E))."""
    heavy = bs.fit(ASIA, asia.iloc[300:500], "hdp", prior=expert, prior_weight=1e6, iterations=100, random_state=0)
    cpd = heavy.cpd("E")
    thin = cpd.estimate.posterior.thin(10)
    np.testing.assert_array_equal(thin.base, cpd.estimate.posterior.base)
    roots = thin._tree_draws(cpd.tree, np.resize(np.arange(thin.n_states), 200), np.random.default_rng(1))[0]
    assert np.abs(roots.mean(axis=0)[0] - expert.query("E").to_numpy()).max() < 1e-3


def test_the_prior_fixes_the_levels_and_goes_with_the_network(asia, expert, tmp_path):
    data = asia.iloc[300:500]
    data = data[data.A == "no"]  # A = yes never seen: the expert declares it
    net = bs.fit(ASIA, data, "bayes", prior=expert, prior_weight=10)
    assert net.levels("A") == ["no", "yes"] and net.cpt("A")[1] > 0
    net.write(tmp_path / "n.pbn")
    back = bs.read_network(tmp_path / "n.pbn")
    more = asia.iloc[500:900]
    ref = bs.fit(ASIA, pd.concat([data, more]), "bayes", prior=expert, prior_weight=10)
    assert back.update(more).max_abs_diff(ref) < 1e-12
    assert net.update(more).max_abs_diff(ref) < 1e-12
    expert.write(tmp_path / "expert.bif")  # a file as the prior (its tables in text: 7 significant digits)
    assert bs.fit(ASIA, data, "bayes", prior=str(tmp_path / "expert.bif"), prior_weight=10).max_abs_diff(net) < 1e-6


def test_a_prior_that_does_not_fit_is_refused_naming_the_node(asia, expert):
    data = asia.iloc[:200]
    dag = bs.DAG.from_modelstring(ASIA)
    good = {n: expert.cpt(n) for n in dag.nodes}
    with pytest.raises(StructureError, match="no CPT for node 'X'"):
        bs.fit(ASIA, data, "bayes", prior={k: v for k, v in good.items() if k != "X"})
    with pytest.raises(DataError, match="CPT of node 'E' has shape"):
        bs.fit(ASIA, data, "bayes", prior={**good, "E": np.full((2, 2), 0.5)})
    small = bs.fit("[A][S][T|A][L|S][B|S][E|T:L][X|E]", asia, "bayes")
    with pytest.raises(StructureError, match="no variable 'D'"):
        bs.fit(ASIA, data, "bayes", prior=small)
    three = asia.assign(A=np.where(np.arange(len(asia)) % 7 == 0, "maybe", asia.A.astype(str)))
    with pytest.raises(DataError, match="'A' has level\\(s\\) 'maybe'.*prior"):
        bs.fit(ASIA, three, "bayes", prior=expert)
    with pytest.raises(HyperparameterError, match="'mle' takes no prior"):
        bs.fit(ASIA, data, "mle", prior=expert)
    with pytest.raises(HyperparameterError, match="takes the place of bayes's iss"):
        bs.fit(ASIA, data, "bayes", iss=3, prior=expert)
    with pytest.raises(HyperparameterError, match="prior_weight applies with prior="):
        bs.fit(ASIA, data, "bayes", prior_weight=3)
    with pytest.raises(HyperparameterError, match="hgs's pseudo-counts"):
        bs.fit(ASIA, data, "hmd", prior=0)  # a number is no network (hgs's old name: below)
    grouped = data.assign(site=np.where(np.arange(len(data)) % 2, "a", "b"))
    with pytest.raises(HyperparameterError, match="joint domain model"):
        bs.fit(ASIA, grouped, "hmd", domain="site", compat="bnlearn", prior=expert)


def test_a_classifier_takes_a_prior_and_a_multi_domain_fit_too(asia, expert):
    X, y = asia.drop(columns="D"), asia["D"]
    clf = bs.BNClassifier(structure="nb", method="bayes", prior=expert, prior_weight=50).fit(X.iloc[:300], y.iloc[:300])
    plain = bs.BNClassifier(structure="nb", method="bayes").fit(X.iloc[:300], y.iloc[:300])
    assert np.abs(clf.predict_proba(X.iloc[:50]) - plain.predict_proba(X.iloc[:50])).max() > 1e-3
    net = clf.network_
    n = _counts(asia.iloc[:300], "X", ["D"], net)
    a = 50 * expert.query(["X", "D"]).to_numpy().reshape(2, 2)
    assert np.abs(net.cpt("X") - (n + a) / (n + a).sum(axis=0, keepdims=True)).max() < 1e-12
    grouped = asia.iloc[:600].assign(site=np.where(np.arange(600) % 3, "a", "b"))
    dom = bs.fit(ASIA, grouped, "bayes", domain="site", prior=expert, prior_weight=20)
    pooled = dom.for_domain(None)
    n = _counts(grouped, "L", ["S"], pooled)
    a = 20 * _joint(expert, "L")
    assert np.abs(pooled.cpt("L") - (n + a) / (n + a).sum(axis=0, keepdims=True)).max() < 1e-12


def test_bayes_with_a_prior_equals_pyagrums_dirichlet_prior(tmp_path):
    """pyAgrum's BNLearner.useDirichletPrior(P, w): pseudo-counts w P(x, parents) from the
    expert's joint (checked in pyAgrum 3.3.1; run in the benchmark venv)."""
    gum = pytest.importorskip("pyagrum")
    gum.initRandom(3)
    truth = gum.fastBN("A->B->C;A->C;C->D", 3)
    prior = gum.fastBN("A->B->C;A->C;C->D", 3)
    prior.generateCPTs()
    gen = gum.BNDatabaseGenerator(truth)
    gen.drawSamples(300)
    gen.to_pandas().to_csv(tmp_path / "d.csv", index=False)
    ms = "[A][B|A][C|A:B][D|C]"
    dag = bs.DAG.from_modelstring(ms)

    def ours(b, v):
        fam = [v, *dag.parents(v)]
        out = np.zeros([3] * len(fam))
        for idx in itertools.product(range(3), repeat=len(fam)):
            out[idx] = b.cpt(v)[dict(zip(fam, idx))]
        return out

    cpts = {v: ours(prior, v) for v in "ABCD"}
    data = pd.read_csv(tmp_path / "d.csv", dtype=str).astype(pd.CategoricalDtype(["0", "1", "2"]))
    for w in (1.0, 10.0, 250.0):
        learner = gum.BNLearner(str(tmp_path / "d.csv"), truth)
        learner.useDirichletPrior(prior, w)
        theirs = learner.learnParameters(truth.dag())
        net = bs.fit(ms, data, "bayes", prior=cpts, prior_weight=w)
        assert max(np.abs(net.cpt(v) - ours(theirs, v)).max() for v in "ABCD") < 1e-9, w


# hgs's hyperparameter prior (pseudo-counts toward the uniform distribution) is now pseudo_count.
#: the tables main (25ff424) wrote to tests/data/hgs_named_prior.pbn with prior=2.0
_OLD_HGS_TABLES = {
    "A": [0.9867549668874173, 0.013245033112582781],
    "E": [0.9964028771748783, 0.16666702790854682, 0.045454610016849355, 0.04545461001685276,
          0.0035971228251216836, 0.8333329720914532, 0.9545453899831505, 0.9545453899831473],
    "T": [0.9834436885566803, 0.9834433382607929, 0.016556311443319822, 0.01655666173920727],
}
_SMALL = "[A][S][T|A][L|S][E|T:L]"


def test_hgs_old_prior_number_is_its_pseudo_count_with_a_deprecation_warning(asia):
    rows = asia.iloc[:300]
    with pytest.warns(DeprecationWarning, match="now pseudo_count=.*prior=2.0 is read as pseudo_count=2.0"):
        old = bs.fit(_SMALL, rows, "hgs", prior=2.0)
    new = bs.fit(_SMALL, rows, "hgs", pseudo_count=2.0)
    default = bs.fit(_SMALL, rows, "hgs")
    for n in ("A", "E", "T"):
        np.testing.assert_array_equal(np.asarray(old.cpt(n)), np.asarray(new.cpt(n)))
        np.testing.assert_allclose(np.asarray(new.cpt(n)).ravel(), _OLD_HGS_TABLES[n], rtol=0, atol=1e-12)
    assert np.abs(np.asarray(new.cpt("E")) - np.asarray(default.cpt("E"))).max() > 1e-3  # the number matters
    with pytest.warns(DeprecationWarning, match="pseudo_count"):
        clf = bs.BNClassifier("nb", method="hgs", prior=2.0)
    assert clf.get_params()["pseudo_count"] == 2.0 and "prior" not in clf._hyper
    with pytest.raises(HyperparameterError, match="both given for hgs"):
        bs.fit(_SMALL, rows, "hgs", prior=2.0, pseudo_count=1.0)
    with pytest.raises(HyperparameterError, match="not 2.0; hgs's pseudo-counts .* pseudo_count"):
        bs.fit(_SMALL, rows, "bayes", prior=2.0)  # any other method: a number is no network
    with pytest.raises(HyperparameterError, match="prior is now pseudo_count"):
        bs.estimators.make_estimator("hgs", prior=2.0)


def test_hgs_old_prior_at_the_command_line_and_in_an_old_pbn_file(asia, tmp_path, capsys):
    from pathlib import Path

    from pybncsmooth.frontends.cli import main

    old = bs.read_network(Path(__file__).parent / "data" / "hgs_named_prior.pbn")
    assert old.estimator.pseudo_count == 2.0
    for n, table in _OLD_HGS_TABLES.items():
        np.testing.assert_array_equal(np.asarray(old.cpt(n)).ravel(), table)
    asia.iloc[:300].to_csv(tmp_path / "a.csv", index=False)
    assert main(["fit", str(tmp_path / "a.csv"), "-s", _SMALL, "-m", "hgs", "-p", "prior=2",
                 "-o", str(tmp_path / "a.pbn")]) == 0
    assert "warning: hgs's hyperparameter prior= " in capsys.readouterr().err
    cli = bs.read_network(tmp_path / "a.pbn")
    assert cli.estimator.pseudo_count == 2.0
    np.testing.assert_allclose(np.asarray(cli.cpt("E")).ravel(), _OLD_HGS_TABLES["E"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("method,kw", [("mestimate", {"prior_per": "configuration"}), ("mbranch", {})])
def test_posterior_draws_keep_the_expert_also_read_back(asia, expert, tmp_path, method, kw):
    """mestimate's posterior (Dir(n + a_c), the expert's pseudo-counts) and mbranch's
    bootstrap replicates (each refitted with the expert's pseudo-counts): an expert worth
    10,000 rows leaves 100 rows little to vary; a network read back from .pbn draws the
    same tables (and, for mestimate, gives the same intervals)."""
    data = asia.iloc[300:400]
    net = bs.fit(ASIA, data, method, prior=expert, prior_weight=1e4, **kw)
    net.write(tmp_path / "n.pbn")
    back = bs.read_network(tmp_path / "n.pbn")

    def spread(n):
        return n._posterior_tables(200, np.random.default_rng(1))["L"]

    np.testing.assert_array_equal(spread(net), spread(back))
    plain = spread(bs.fit(ASIA, data, method))
    # the root (S = no) row: the expert's weight shrinks the draws' spread several times
    assert spread(net)[:, :, 0].std(axis=0).max() < plain[:, :, 0].std(axis=0).max() / 2
    if method == "mestimate":
        f = net.cpt_frame("L", interval=0.9, draws=200, random_state=1)
        assert f.equals(back.cpt_frame("L", interval=0.9, draws=200, random_state=1))

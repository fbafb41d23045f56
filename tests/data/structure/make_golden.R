# Golden values for the structure-learning tests, written by bnlearn.
# Run from the repository root:  Rscript tests/data/structure/make_golden.R
# Reads tests/data/bnlearn/{alarm,insurance}.csv.gz (bnlearn's own data sets, its level
# order) and bnlearn's hailfinder data set; writes tests/data/structure/*.json and
# hailfinder.codes.csv.gz (its first 10,000 rows) with hailfinder.levels.json.
suppressPackageStartupMessages(library(bnlearn))
library(jsonlite)
out = "tests/data/structure"

read_net_data = function(name) {
  lv = fromJSON(file.path("tests/data/bnlearn", paste0(name, ".levels.json")))
  d = read.csv(gzfile(file.path("tests/data/bnlearn", paste0(name, ".csv.gz"))),
               colClasses = "character", na.strings = "")
  for (v in lv$columns) d[[v]] = factor(d[[v]], levels = lv$levels[[v]])
  d[, lv$columns]
}

data(hailfinder)
hf = hailfinder[1:10000, ]
# stored as 0-based level codes (a third of the size of the labels)
write.csv(as.data.frame(lapply(hf, function(v) as.integer(v) - 1L)), gzfile(file.path(out, "hailfinder.codes.csv.gz")),
          row.names = FALSE, quote = FALSE)
writeLines(toJSON(list(columns = names(hf), levels = lapply(hf, levels)), auto_unbox = FALSE, pretty = TRUE),
           file.path(out, "hailfinder.levels.json"))

datasets = list(alarm = read_net_data("alarm"), insurance = read_net_data("insurance"), hailfinder = hf)
truth = list(alarm = modelstring(bn.net(read.bif("tests/data/bnlearn/alarm.bif"))),
             insurance = modelstring(bn.net(read.bif("tests/data/bnlearn/insurance.bif"))))

arcs_of = function(g) unname(lapply(seq_len(nrow(arcs(g))), function(i) arcs(g)[i, ]))

# 1. scores by node on the first 2,000 rows, three structures each
types = list(loglik = list(type = "loglik"), aic = list(type = "aic"), bic = list(type = "bic"),
             bde_iss1 = list(type = "bde", iss = 1), bde_iss10 = list(type = "bde", iss = 10),
             bds_iss1 = list(type = "bds", iss = 1), bds_iss10 = list(type = "bds", iss = 10),
             k2 = list(type = "k2"))
scores = list()
for (name in c("alarm", "insurance")) {
  d = datasets[[name]][1:2000, ]
  structures = list(truth = model2network(truth[[name]]), empty = empty.graph(names(d)),
                    hc_bic = hc(d, score = "bic"))
  for (s in names(structures)) {
    g = structures[[s]]
    entry = list(network = name, structure = s, rows = 2000, modelstring = modelstring(g), values = list())
    for (t in names(types)) {
      args = c(list(x = g, data = d, by.node = TRUE), types[[t]])
      v = do.call(score, args)
      entry$values[[t]] = as.list(v)
    }
    scores[[paste(name, s, sep = "/")]] = entry
  }
}
writeLines(toJSON(scores, digits = NA, auto_unbox = TRUE, pretty = TRUE), file.path(out, "scores.json"))

# 2. hc and tabu with BDeu (iss 1) on the first 10,000 rows; shd / compare / cpdag
searches = list()
for (name in names(datasets)) {
  d = datasets[[name]][1:10000, ]
  h = hc(d, score = "bde", iss = 1)
  tb = tabu(d, score = "bde", iss = 1)
  searches[[name]] = list(rows = 10000,
    hc = list(modelstring = modelstring(h), score = score(h, d, type = "bde", iss = 1),
              narcs = narcs(h)),
    tabu = list(modelstring = modelstring(tb), score = score(tb, d, type = "bde", iss = 1),
                narcs = narcs(tb)))
  if (name %in% names(truth)) {
    t = model2network(truth[[name]])
    searches[[name]]$truth = truth[[name]]
    searches[[name]]$shd_hc_truth = shd(h, t)
    searches[[name]]$shd_tabu_truth = shd(tb, t)
    searches[[name]]$compare_cpdag = compare(cpdag(t), cpdag(h))
    searches[[name]]$compare_dag = compare(t, h)
    searches[[name]]$cpdag_truth_arcs = arcs_of(cpdag(t))
    searches[[name]]$cpdag_hc_arcs = arcs_of(cpdag(h))
  }
}
writeLines(toJSON(searches, digits = NA, auto_unbox = TRUE, pretty = TRUE), file.path(out, "searches.json"))

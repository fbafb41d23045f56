test_that("bayes fits equal bnlearn's own bn.fit object, field by field", {
  skip_if_no_python()
  asia <- bncs.dataset("asia")
  fit <- bncs.fit(asia_string, asia, method = "bayes", iss = 1)
  ref <- readRDS(test_path("asia.bn.fit.rds"))
  expect_identical(class(fit), class(ref))
  expect_identical(names(fit), names(ref))
  for (n in names(ref)) {
    expect_identical(class(fit[[n]]), class(ref[[n]]))
    expect_identical(names(unclass(fit[[n]])), names(unclass(ref[[n]])))
    expect_identical(fit[[n]]$node, ref[[n]]$node)
    expect_identical(fit[[n]]$parents, ref[[n]]$parents)
    expect_identical(fit[[n]]$children, ref[[n]]$children)
    expect_identical(class(fit[[n]]$prob), class(ref[[n]]$prob))
    expect_identical(dimnames(fit[[n]]$prob), dimnames(ref[[n]]$prob))
    expect_equal(unclass(fit[[n]]$prob), unclass(ref[[n]]$prob), tolerance = 1e-10)
  }
})

test_that("a bn object, formulas and a model string give the same fit", {
  skip_if_no_python()
  asia <- bncs.dataset("asia")
  dag <- readRDS(test_path("asia.bn.rds"))
  a <- bncs.fit(dag, asia, method = "mestimate", m = 1)
  b <- bncs.fit(asia_string, asia, method = "mestimate", m = 1)
  f <- c("A ~ 1", "S ~ 1", "T ~ A", "L ~ S", "B ~ S", "D ~ B + E", "E ~ L + T", "X ~ E")
  d <- bncs.fit(f, asia, method = "mestimate", m = 1)
  for (n in names(b)) {
    expect_equal(a[[n]]$prob, b[[n]]$prob)
    expect_equal(unclass(d[[n]]$prob), unclass(b[[n]]$prob))
  }
  # the axes follow the parents as written, with bnlearn installed or not (its custom.fit
  # would sort them into its node order)
  expect_identical(names(dimnames(d$E$prob)), c("E", "L", "T"))
  r <- bncs.fit(replace(f, 7, "E ~ T + L"), asia, method = "mestimate", m = 1)
  expect_identical(r$E$parents, c("T", "L"))
  expect_identical(names(dimnames(r$E$prob)), c("E", "T", "L"))
  expect_equal(unclass(r$E$prob), aperm(unclass(d$E$prob), c(1, 3, 2)), ignore_attr = TRUE)
  expect_identical(class(r), c("bn.fit", "bn.fit.dnet"))
})

test_that("every estimator runs from R, hyperparameters pass with R's types", {
  skip_if_no_python()
  asia <- bncs.dataset("asia")[1:500, ]
  args <- list(hdp = list(iterations = 200, random_state = 1), hmd = list(alpha0 = 1),
               hls = list(tau = 1), "hls-bayes" = list(iterations = 100, random_state = 2))
  for (m in names(args)) {
    fit <- do.call(bncs.fit, c(list(asia_string, asia, method = m), args[[m]]))[["D"]]
    expect_equal(as.numeric(apply(fit$prob, c(2, 3), sum)), rep(1, 4), tolerance = 1e-12)
  }
})

test_that("group = gives bnlearn's hdir shape: the group last, one table per group", {
  skip_if_no_python()
  asia <- bncs.dataset("asia")
  asia$site <- factor(rep(c("s1", "s2", "s3"), length.out = nrow(asia)), levels = c("s3", "s1", "s2"))
  fit <- bncs.fit(asia_string, asia, method = "hmd", group = "site", compat = "bnlearn")
  expect_identical(fit$D$parents, c("B", "E", "site"))
  expect_identical(dim(fit$D$prob), c(2L, 2L, 2L, 3L))
  expect_identical(dimnames(fit$D$prob)$site, c("s3", "s1", "s2"))
  expect_identical(fit$site$parents, character(0))
  expect_equal(as.numeric(fit$site$prob), as.numeric(table(asia$site)) / nrow(asia))
  expect_equal(as.numeric(apply(fit$D$prob, c(2, 3, 4), sum)), rep(1, 12), tolerance = 1e-12)
})

test_that("factor level order and NA survive the trip", {
  skip_if_no_python()
  d <- data.frame(A = factor(c("z", "a", NA, "z", "m", "a"), levels = c("z", "m", "a")),
                  B = factor(c("u", "v", "v", NA, "u", "v")))
  fit <- bncs.fit(c("A ~ 1", "B ~ A"), d, method = "mle")
  expect_identical(dimnames(fit$B$prob)$A, c("z", "m", "a"))
  # available-case counting, as bnlearn: A has 5 observed values (z, a, z, m, a)
  expect_equal(as.numeric(fit$A$prob), c(2, 1, 2) / 5)
  # B | A = z: rows 1 (u) and 4 (NA) -> only row 1 counts
  expect_equal(as.numeric(fit$B$prob[, "z"]), c(1, 0))
  back <- bncsmooth:::.df_from_py(bncsmooth:::.df_to_py(d))
  expect_identical(back, d)
})

test_that("bad input gets R errors with the Python message, never a traceback", {
  skip_if_no_python()
  asia <- bncs.dataset("asia")
  expect_error(bncs.fit(42, asia), "not an object of class 'numeric'")
  expect_error(bncs.fit(asia_string, asia, method = "nope"), "unknown method 'nope'; available: .*hls")
  expect_error(bncs.fit(asia_string, asia, method = "hls", tau = -1), "tau must be positive")
  bad <- asia
  bad$A <- as.numeric(bad$A)
  expect_error(bncs.fit(asia_string, bad, method = "bayes"), "column 'A' is numeric, not a factor")
  ref <- readRDS(test_path("asia.bn.fit.rds"))
  relev <- asia
  relev$S <- factor(relev$S, levels = c("yes", "no"))
  expect_error(bncs.fit(ref, relev, method = "bayes"), "levels of 'S' disagree")
  gnet <- structure(list(), class = c("bn.fit", "bn.fit.gnet"))
  expect_error(bncs.fit(gnet, asia), "discrete networks only")
  err <- tryCatch(bncs.fit("[A|S][S|A]", asia, method = "bayes"), error = function(e) conditionMessage(e))
  expect_match(err, "cycle")
  expect_false(grepl("pybncsmooth.errors", err, fixed = TRUE))
  expect_false(grepl("Traceback|py_call_impl", err))
})

test_that("bnlearn's own functions accept the result", {
  skip_if_no_python()
  skip_if_not_installed("bnlearn")
  asia <- bncs.dataset("asia")
  fit <- bncs.fit(asia_string, asia, method = "hdp", iterations = 300, random_state = 1)
  expect_true(is.finite(stats::logLik(fit, asia)))
  expect_s3_class(stats::predict(fit, "L", asia[1:10, ]), "factor")
  tmp <- tempfile(fileext = ".bif")
  bnlearn::write.bif(tmp, fit)
  expect_true(file.exists(tmp))
  # parents in an order other than bnlearn's node order: its functions still agree
  f <- c("A ~ 1", "S ~ 1", "T ~ A", "L ~ S", "B ~ S", "D ~ E + B", "E ~ T + L", "X ~ E")
  r <- bncs.fit(f, asia, method = "mestimate", m = 1)
  s <- bncs.fit(asia_string, asia, method = "mestimate", m = 1)
  expect_equal(as.numeric(stats::logLik(r, asia)), as.numeric(stats::logLik(s, asia)), tolerance = 1e-10)
  expect_identical(stats::predict(r, "E", asia[1:200, ]), stats::predict(s, "E", asia[1:200, ]))
  expect_true(isTRUE(all.equal(bnlearn::bn.net(r), bnlearn::bn.net(s))))  # the same DAG
  expect_equal(dim(bnlearn::rbn(r, 10)), c(10L, 8L))
})

test_that("a CSV path is read in chunks by Python and gives the data.frame's fit", {
  skip_if_no_python()
  asia <- bncs.dataset("asia")
  asia$site <- factor(rep(c("s1", "s2", "s3"), length.out = nrow(asia)))
  path <- tempfile(fileext = ".csv")
  on.exit(unlink(path))
  write.csv(asia, path, row.names = FALSE)
  a <- bncs.fit(asia_string, asia, method = "mestimate", m = 1)
  b <- bncs.fit(asia_string, path, method = "mestimate", m = 1)
  for (n in names(a)) expect_equal(b[[n]]$prob, a[[n]]$prob, tolerance = 1e-12)
  # a grouped fit: the group's marginal comes from the rows counted while reading
  ga <- bncs.fit(asia_string, asia, method = "hmd", group = "site")
  gb <- bncs.fit(asia_string, path, method = "hmd", group = "site")
  expect_equal(gb$site$prob, ga$site$prob, tolerance = 1e-12)
  expect_equal(gb$D$prob, ga$D$prob, tolerance = 1e-12)
  expect_error(bncs.fit(asia_string, file.path(tempdir(), "no-such-file.csv")), "does not exist")
})

test_that("bncs.adapt adds a domain without refitting, and agrees with Python", {
  skip_if_no_python()
  chile <- bncs.dataset("chile")
  ms <- "[sex][age][education|age][income|education][vote|age:education:sex]"
  nodes <- c("sex", "age", "education", "income", "vote")
  old <- chile[chile$region != "M", ]
  old$region <- droplevels(old$region)
  pop <- bncs.fit(ms, old, method = "hmd", group = "region")
  new <- chile[chile$region == "M", nodes][1:30, ]
  fit <- bncs.adapt(pop, new, "M")
  expect_identical(dimnames(fit$vote$prob)$region, c("C", "N", "S", "SA", "M"))
  expect_identical(class(fit), c("bn.fit", "bn.fit.dnet"))
  # the other regions' tables are untouched
  expect_equal(unclass(fit$vote$prob)[, , , , "C"], unclass(pop$vote$prob)[, , , , "C"])
  # M's tables: Python's adapt of the same rows (a copy of a fitted region or a type of its own, weighed by the
  # rows), to the last digits; the posterior probability of a new type is kept in the node's info
  py <- attr(pop, "bncs.network")
  ref <- py$adapt(bncsmooth:::.df_to_py(new, nodes), "M")$for_domain("M")
  for (node in c("sex", "vote")) {
    want <- unlist(reticulate::py_to_r(ref$cpt(node)$ravel(order = "F")$tolist()))
    got <- unclass(fit[[node]]$prob)
    got <- if (node == "sex") got[, "M"] else got[, , , , "M"]
    expect_equal(as.numeric(got), as.numeric(want), tolerance = 1e-12)
  }
  info <- attr(fit, "bncs.network")$cpd("sex")$estimate$info
  urn <- unlist(reticulate::py_to_r(info[["s_own_urn"]]$tolist()))
  expect_true(urn[1] > 0 && urn[1] < 1)  # neither certainly new nor certainly a copy
  expect_true(urn[2] %in% 0:3)  # the fitted region most likely copied
  # twice with parts equals once with all
  twice <- bncs.adapt(bncs.adapt(pop, new[1:10, ], "M"), new[11:30, ], "M")
  expect_equal(unclass(twice$vote$prob), unclass(fit$vote$prob), tolerance = 1e-14)
  # the group marginal counts the adapted rows
  expect_equal(as.numeric(fit$region$prob["M"]), 30 / (nrow(old) + 30), tolerance = 1e-12)
  tmp <- tempfile(fileext = ".rds")
  saveRDS(pop, tmp)
  expect_error(bncs.adapt(readRDS(tmp), new, "M"), "does not survive saveRDS")
  expect_error(bncs.adapt(pop, new, NA), "one label")
})

test_that("bncs.evaluate.domains returns the tidy per-domain table", {
  skip_if_no_python()
  chile <- bncs.dataset("chile")
  ms <- "[sex][age][education|age][income|education][vote|age:education:sex]"
  res <- bncs.evaluate.domains(ms, chile, "region", k = c(0, 20), random_state = 3L)
  expect_setequal(unique(res$setting), c("pooled", "separate", "hierarchical"))
  expect_setequal(unique(res$domain), c("C", "M", "N", "S", "SA"))
  expect_true(all(c("scheme", "k", "n_test", "loglik") %in% names(res)))
  w <- res[res$scheme == "within" & res$domain == "M" & res$setting == "pooled", ]
  expect_identical(as.integer(w$n_test), 22L)
  expect_error(bncs.evaluate.domains(ms, chile, "site"), "group must name")
  own <- bncs.evaluate.domains(ms, chile, "region", lodo = FALSE,
                               settings = list(h = list(mode = "domain", method = "hdp", iterations = 200)))
  expect_identical(unique(own$setting), "h")
})

test_that("na = \"em\" runs EM over the missing cells from R", {
  skip_if_no_python()
  asia <- bncs.dataset("asia")[1:600, ]
  set.seed(1)
  for (v in names(asia)) asia[[v]][runif(nrow(asia)) < 0.1] <- NA
  em <- bncs.fit(asia_string, asia, method = "bayes", na = "em")
  av <- bncs.fit(asia_string, asia, method = "bayes", na = "available")
  expect_identical(class(em), c("bn.fit", "bn.fit.dnet"))
  expect_equal(as.numeric(apply(em$D$prob, c(2, 3), sum)), rep(1, 4), tolerance = 1e-12)
  expect_gt(max(abs(em$E$prob - av$E$prob)), 1e-6)  # EM moved the tables
})

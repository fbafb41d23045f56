# bncs.update: new rows without a refit; bncs.fit(prior = ): an expert network as the prior.

test_that("updating with the rest of the rows gives the fit on all of them", {
  skip_if_no_python()
  asia <- bncs.dataset("asia")
  fit <- bncs.fit(asia_string, asia[1:3000, ], method = "bayes", iss = 1)
  up <- bncs.update(fit, asia[3001:5000, ])
  ref <- bncs.fit(asia_string, asia, method = "bayes", iss = 1)
  for (n in names(ref)) expect_equal(unclass(up[[n]]$prob), unclass(ref[[n]]$prob), tolerance = 1e-12)
  expect_identical(class(up), class(ref))
  # the fitted network given is unchanged
  again <- bncs.fit(asia_string, asia[1:3000, ], method = "bayes", iss = 1)
  expect_equal(unclass(fit$D$prob), unclass(again$D$prob), tolerance = 0)
})

test_that("decay is the fit with weights decay ^ age, and weights are a column or numbers", {
  skip_if_no_python()
  asia <- bncs.dataset("asia")
  fit <- bncs.fit(asia_string, asia[1:3000, ], method = "bayes")
  up <- bncs.update(fit, asia[3001:5000, ], decay = 0.25)
  w <- c(rep(0.25, 3000), rep(1, 2000))
  ref <- bncs.fit(asia_string, asia, method = "bayes", weights = w)
  for (n in names(ref)) expect_equal(unclass(up[[n]]$prob), unclass(ref[[n]]$prob), tolerance = 1e-12)
  rows <- asia[3001:3100, ]
  rows$w <- rep(c(1, 3), 50)
  a <- bncs.update(fit, rows, weights = "w")
  b <- bncs.update(fit, asia[3001:3100, ][rep(1:100, rep(c(1, 3), 50)), ])
  expect_equal(unclass(a$E$prob), unclass(b$E$prob), tolerance = 1e-12)
  expect_error(bncs.update(fit, asia[1:10, ], decay = 2), "decay must be in")
  expect_error(bncs.update(fit, asia[1:10, ], na = "em"), "na does not apply to update")
  expect_error(bncs.update(asia, asia[1:10, ]), "must be a bn.fit returned by bncs.fit")
})

test_that("a bn.fit as prior gives bayes the pseudo-counts w P(x, parents)", {
  skip_if_no_python()
  asia <- bncs.dataset("asia")
  expert <- bncs.fit(asia_string, asia[1:300, ], method = "bayes", iss = 5)
  data <- asia[301:600, ]
  fit <- bncs.fit(asia_string, data, method = "bayes", prior = expert, prior_weight = 40)
  # by hand for a root: (n + 40 P(A)) / (N + 40)
  n <- as.numeric(table(data$A))
  expect_equal(as.numeric(fit$A$prob), (n + 40 * as.numeric(expert$A$prob)) / (sum(n) + 40), tolerance = 1e-12)
  # per configuration: (n(x, s) + w P(x | s)) / (n(s) + w) for L | S
  cfg <- bncs.fit(asia_string, data, method = "bayes", prior = expert, prior_weight = 7, prior_per = "configuration")
  tab <- table(data$L, data$S)
  byhand <- sweep(tab + 7 * unclass(expert$L$prob), 2, colSums(tab) + 7, "/")
  expect_equal(unclass(cfg$L$prob), unclass(byhand), ignore_attr = TRUE, tolerance = 1e-12)
  expect_error(bncs.fit(asia_string, data, method = "mle", prior = expert), "takes no prior network")
  expect_error(bncs.fit(asia_string, data, method = "bayes", prior = asia), "prior must be a bn.fit")
})

test_that("hgs's old prior = <number> is its pseudo_count, with a warning naming the new name", {
  skip_if_no_python()
  asia <- bncs.dataset("asia")[1:500, ]
  expect_warning(old <- bncs.fit(asia_string, asia, method = "hgs", prior = 3), "now pseudo_count")
  new <- bncs.fit(asia_string, asia, method = "hgs", pseudo_count = 3)
  one <- bncs.fit(asia_string, asia, method = "hgs")
  expect_equal(unclass(old$D$prob), unclass(new$D$prob), tolerance = 0)
  expect_gt(max(abs(unclass(old$D$prob) - unclass(one$D$prob))), 1e-4)
  expect_error(bncs.fit(asia_string, asia, method = "hgs", prior = 3, pseudo_count = 1), "both given")
  expect_error(bncs.fit(asia_string, asia, method = "bayes", prior = 3), "prior must be a bn.fit")
})

test_that("a sampler refuses decay saying why (its whole counts), not blaming row weights", {
  skip_if_no_python()
  asia <- bncs.dataset("asia")
  fit <- bncs.fit(asia_string, asia[1:400, ], method = "hdp", iterations = 20, random_state = 0)
  err <- tryCatch(bncs.update(fit, asia[401:600, ], decay = 0.5), error = function(e) conditionMessage(e))
  expect_match(err, "hdp needs whole counts.*decay=0.5")
  expect_false(grepl("weights", err))
})

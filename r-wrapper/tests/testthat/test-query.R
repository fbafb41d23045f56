test_that("bncs.query gives the exact posterior, equal to enumerating the joint", {
  skip_if_no_python()
  asia <- bncs.dataset("asia")
  fit <- bncs.fit(asia_string, asia, method = "bayes", iss = 1)
  q <- bncs.query(fit, "L", list(S = "yes", X = "yes"))
  expect_identical(names(q), c("L", "prob"))
  expect_identical(levels(q$L), dimnames(fit$L$prob)[[1]])
  # by hand: P(L, S = yes, X = yes) summed over T and E
  pS <- fit$S$prob[["yes"]]
  num <- sapply(c("no", "yes"), function(l) {
    s <- 0
    for (t in c("no", "yes")) for (e in c("no", "yes")) {
      s <- s + fit$T$prob[t, "no"] * fit$A$prob[["no"]] * fit$E$prob[e, l, t] * fit$X$prob["yes", e] +
        fit$T$prob[t, "yes"] * fit$A$prob[["yes"]] * fit$E$prob[e, l, t] * fit$X$prob["yes", e]
    }
    s * fit$L$prob[l, "yes"] * pS
  })
  expect_equal(q$prob, unname(num / sum(num)), tolerance = 1e-12)
  # bnlearn's own cpquery keeps working on the same object (a sampling estimate)
  skip_if_not_installed("bnlearn")
  set.seed(1)
  est <- bnlearn::cpquery(fit, event = (L == "yes"), evidence = list(S = "yes", X = "yes"),
                          method = "lw", n = 2e5)
  expect_equal(est, q$prob[q$L == "yes"], tolerance = 0.02)
})

test_that("joint targets, MAP states and a data.frame of evidence", {
  skip_if_no_python()
  asia <- bncs.dataset("asia")
  fit <- bncs.fit(asia_string, asia, method = "bayes", iss = 1)
  j <- bncs.query(fit, c("L", "T"), list(X = "yes"))
  expect_identical(nrow(j), 4L)
  expect_equal(sum(j$prob), 1, tolerance = 1e-12)
  m <- bncs.query(fit, c("L", "T"), list(X = "yes"), map = TRUE)
  best <- j[which.max(j$prob), ]
  expect_identical(as.character(m$L), as.character(best$L))
  expect_identical(as.character(m$T), as.character(best$T))
  expect_equal(m$prob, best$prob, tolerance = 1e-12)
  ev <- data.frame(S = factor(c("yes", "no", NA), levels = c("no", "yes")), X = factor(c("yes", NA, "no")))
  rownames(ev) <- c("a", "b", "c")
  p <- bncs.query(fit, "L", ev)
  expect_identical(dim(p), c(3L, 2L))
  expect_identical(rownames(p), c("a", "b", "c"))
  expect_equal(unname(p["a", ]), bncs.query(fit, "L", list(S = "yes", X = "yes"))$prob, tolerance = 1e-12)
  expect_error(bncs.query(fit, "L", list(S = "maybe")), "'S' has level\\(s\\) 'maybe'")
  qi <- bncs.query(fit, "L", list(S = "yes"), interval = 0.9, random_state = 1)
  expect_true(all(qi$lower <= qi$prob & qi$prob <= qi$upper))
  expect_equal(qi$prob, bncs.query(fit, "L", list(S = "yes"))$prob, tolerance = 1e-12)
  expect_identical(qi, bncs.query(fit, "L", list(S = "yes"), interval = 0.9, random_state = 1))
  mle <- bncs.fit(asia_string, asia, method = "mle")
  qm <- bncs.query(mle, "L", list(S = "yes"), interval = 0.9, draws = 200, random_state = 1)
  expect_true(all(qm$lower <= qm$prob + 1e-12 & qm$prob <= qm$upper + 1e-12))
  expect_true(all(qm$upper > qm$lower))
  expect_error(bncs.query(list(), "L"), "bn.fit returned by bncs.fit")
})

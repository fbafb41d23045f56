# bncs.score, bncs.hc, bncs.tabu: bnlearn's numbers and networks, and the bhd score.

test_that("bncs.score equals bnlearn's score by node", {
  skip_if_no_python()
  skip_if_not_installed("bnlearn")
  asia <- bncs.dataset("asia")
  g <- bnlearn::model2network(asia_string)
  for (t in c("loglik", "aic", "bic", "bde", "bds", "k2")) {
    ref <- bnlearn::score(g, asia, type = t, by.node = TRUE)
    got <- bncs.score(g, asia, type = t, by.node = TRUE)
    expect_equal(got[names(ref)], ref, tolerance = 1e-10)
  }
  expect_equal(bncs.score(asia_string, asia, type = "bde", iss = 10),
               bnlearn::score(g, asia, type = "bde", iss = 10), tolerance = 1e-10)
})

test_that("bncs.hc and bncs.tabu return bnlearn's networks as bn objects", {
  skip_if_no_python()
  skip_if_not_installed("bnlearn")
  asia <- bncs.dataset("asia")
  h <- bncs.hc(asia, score = "bde", iss = 1)
  expect_s3_class(h, "bn")
  ref <- bnlearn::hc(asia, score = "bde", iss = 1)
  expect_equal(bnlearn::shd(h, ref), 0L)
  expect_true(isTRUE(all.equal(h, ref)))
  tb <- bncs.tabu(asia, score = "bic", blacklist = c("S", "B"))
  expect_false(any(bnlearn::arcs(tb)[, 1] == "S" & bnlearn::arcs(tb)[, 2] == "B"))
  expect_true(bnlearn::score(tb, asia, type = "bic") >= bnlearn::score(bnlearn::tabu(asia, blacklist = c("S", "B")),
                                                                        asia, type = "bic") - 1e-6)
  fit <- bnlearn::bn.fit(h, asia)
  expect_s3_class(fit, "bn.fit")
})

test_that("bncs.hc with the bhd score learns one structure from grouped rows", {
  skip_if_no_python()
  skip_if_not_installed("bnlearn")
  asia <- bncs.dataset("asia")[1:2000, ]
  asia$site <- factor(rep(c("a", "b", "c"), length.out = nrow(asia)))
  g <- bncs.hc(asia, score = "bhd", group = "site")
  expect_setequal(bnlearn::nodes(g), setdiff(names(asia), "site"))
  expect_true(is.numeric(bnlearn::shd(g, bnlearn::model2network(asia_string))))
  expect_equal(bncs.score(g, asia, type = "bhd", group = "site"),
               sum(bncs.score(g, asia, type = "bhd", group = "site", by.node = TRUE)), tolerance = 1e-10)
  expect_error(bncs.hc(asia, score = "bhd"), "needs group")
  # domain = "site", as the Python API names it, is group = "site"
  h <- bncs.hc(asia, score = "bhd", domain = "site")
  expect_s3_class(h, "bn")
  expect_setequal(bnlearn::nodes(h), setdiff(names(asia), "site"))
  expect_equal(bnlearn::shd(h, g), 0L)
  expect_equal(bnlearn::modelstring(h), bnlearn::modelstring(g))
  ref <- bnlearn::hc(asia[, setdiff(names(asia), "site")], score = "bde", iss = 1)
  expect_equal(bnlearn::shd(h, ref), bnlearn::shd(g, ref))
  expect_equal(bncs.score(h, asia, type = "bhd", domain = "site"), bncs.score(g, asia, type = "bhd", group = "site"))
  expect_error(bncs.hc(asia, score = "bhd", group = "site", domain = "A"), "differ")
})

test_that("bncs.bhd is a custom score bnlearn's hc searches with, as bncs.hc does", {
  skip_if_no_python()
  skip_if_not_installed("bnlearn")
  asia <- bncs.dataset("asia")[1:1500, ]
  site <- factor(rep(c("a", "b", "c"), length.out = nrow(asia)))
  inside <- bnlearn::hc(asia, score = "custom", fun = bncs.bhd, args = bncs.bhd.args(site))
  grouped <- asia
  grouped$site <- site
  ours <- bncs.hc(grouped, score = "bhd", group = "site")
  expect_equal(bnlearn::score(inside, asia, type = "custom", fun = bncs.bhd, args = bncs.bhd.args(site)),
               bncs.score(inside, grouped, type = "bhd", group = "site"), tolerance = 1e-10)
  expect_equal(bncs.score(inside, grouped, type = "bhd", group = "site"),
               bncs.score(ours, grouped, type = "bhd", group = "site"), tolerance = 1e-9)
  expect_error(bnlearn::hc(asia, score = "custom", fun = bncs.bhd, args = bncs.bhd.args(site[1:10])),
               "the group has 10 entries")
})

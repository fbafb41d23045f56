# Every option of bncs.fit, from the Python package's declarations (bncs.options()): carried
# whole to the fitted network, or refused with an error naming it.  A new option is tested
# here without a line of this file changed.

test_that("every option of fit reaches the fitted network, or is refused by name", {
  skip_if_no_python()
  asia <- bncs.dataset("asia")
  asia$site <- factor(rep(c("s1", "s2"), length.out = nrow(asia)))
  weighted <- asia
  weighted$w <- rep(c(1, 2, 3), length.out = nrow(asia))
  opts <- bncs.options()
  expect_true(all(c("na", "na_label", "weights", "domain", "random_state", "n_jobs") %in% opts$name))
  # an option whose example names a file (prior = "expert.bif") finds it: an expert network of asia
  old <- setwd(tempdir())
  on.exit(setwd(old), add = TRUE)
  expert <- bncs.fit(asia_string, asia, method = "bayes")
  attr(expert, "bncs.network")$write("expert.bif")
  checked <- 0L
  for (i in seq_len(nrow(opts))) {
    name <- opts$name[i]
    kw <- c(opts$needs[[i]], stats::setNames(list(opts$example[[i]]), name))
    method <- if (is.null(kw$method)) "bayes" else kw$method
    kw$method <- NULL
    if (is.null(kw$na)) kw$na <- "available"
    spec <- if (!is.null(kw$structure)) "E ~ A + S + T + L + B + D + X" else asia_string
    data <- if (name == "weights") weighted else asia
    call <- function() do.call(bncs.fit, c(list(spec, data, method = method), kw))
    if (!grepl("(^|,)fit(,|$)", opts$entries[i])) {
      expect_error(call(), paste(name, "does not apply to fit"))
      next
    }
    fit <- suppressWarnings(call())
    net <- attr(fit, "bncs.network")
    got <- reticulate::py_to_r(reticulate::py_get_attr(net$options, name))
    if (name == "weights") {  # numbers given as a column of a data.frame: counted as weights
      expect_identical(reticulate::py_to_r(net$info[["weights"]]), "per row")
      plain <- bncs.fit(spec, asia, method = method, na = "available")
      expect_false(isTRUE(all.equal(plain$D$prob, fit$D$prob)))
    } else {
      expect_equal(got, opts$example[[i]], info = name)
    }
    checked <- checked + 1L
  }
  expect_gt(checked, 15L)
})

test_that("bncs.adapt and bncs.evaluate.domains take options, and refuse those they do not take", {
  skip_if_no_python()
  asia <- bncs.dataset("asia")
  asia$site <- factor(rep(c("s1", "s2", "s3"), length.out = nrow(asia)))
  fit <- bncs.fit(asia_string, asia, method = "bayes", group = "site")
  rows <- asia[asia$site == "s1", ][1:40, ]
  rows$site <- NULL
  w <- rep(c(0, 3), length.out = nrow(rows))
  a <- bncs.adapt(fit, rows, "s9", weights = w)
  b <- bncs.adapt(fit, rows[rep(seq_len(nrow(rows)), w), ], "s9")
  expect_equal(unclass(a$D$prob), unclass(b$D$prob), tolerance = 1e-12)
  expect_error(bncs.adapt(fit, rows, "s9", n_jobs = 2), "n_jobs does not apply to adapt")
  expect_error(bncs.evaluate.domains(asia_string, asia, "site", na_label = "M", k = c(0, 5)),
               "na_label does not apply to evaluate_domains")
})

test_that("classifiers predict classes and probabilities", {
  skip_if_no_python()
  votes <- bncs.dataset("housevotes84")
  clf <- bncs.classifier(Class ~ ., votes, structure = "kdb", k = 2, method = "hls", na = "level")
  expect_s3_class(clf, "bncs.classifier")
  p <- predict(clf, votes, prob = TRUE)
  expect_identical(colnames(p), levels(votes$Class))
  expect_equal(unname(rowSums(p)), rep(1, nrow(votes)), tolerance = 1e-12)
  cls <- predict(clf, votes)
  expect_identical(levels(cls), levels(votes$Class))
  expect_gt(mean(cls == votes$Class), 0.9)
  expect_output(print(clf), "kdb with hls")
})

test_that("naive Bayes and TAN come back as bnlearn's bn.naive / bn.tan fits", {
  skip_if_no_python()
  votes <- bncs.dataset("housevotes84")
  for (s in c("nb", "tan")) {
    clf <- bncs.classifier(Class ~ ., votes, structure = s, method = "hdp", na = "level", iterations = 300L,
                           random_state = 1L)
    cls <- if (s == "nb") "bn.naive" else "bn.tan"
    expect_identical(class(clf), c("bncs.classifier", cls, "bn.fit", "bn.fit.dnet"))
    expect_identical(attr(clf, "training"), "Class")
    expect_identical(clf$Class$parents, character(0))
    expect_true(all(vapply(setdiff(names(clf), "Class"), function(n) "Class" %in% clf[[n]]$parents, logical(1))))
    # our predict (what R sessions without bnlearn get): bnlearn's format
    ours <- bncsmooth:::predict.bncs.classifier(clf, votes, prob = TRUE)
    expect_s3_class(ours, "factor")
    expect_identical(dim(attr(ours, "prob")), c(2L, nrow(votes)))
    expect_equal(colSums(attr(ours, "prob")), rep(1, nrow(votes)), tolerance = 1e-12)
    expect_gt(mean(ours == votes$Class), 0.88)
    if (requireNamespace("bnlearn", quietly = TRUE)) {
      # bnlearn's own predict.bn.naive / predict.bn.tan on our tables: the same classes and posteriors
      # (its checks of a naive Bayes / TAN structure pass); na = "level" made NA a level, so the
      # rows are given as factors with that level
      X <- votes
      for (n in names(X)) {
        if (n != "Class") X[[n]] <- factor(ifelse(is.na(X[[n]]), "<NA>", as.character(X[[n]])),
                                           levels = dimnames(clf[[n]]$prob)[[1]])
      }
      theirs <- bnlearn:::predict.bn.naive(clf, X, prob = TRUE)
      expect_identical(as.character(theirs), as.character(ours))
      expect_equal(unname(attr(theirs, "prob")), unname(attr(ours, "prob")), tolerance = 1e-10)
      loadNamespace("bnlearn")
      expect_identical(as.character(predict(clf, X)), as.character(ours))  # S3 dispatch: ours first
    }
  }
  expect_output(print(bncsmooth:::.classifier_info(clf)), "tan with hdp")
})

test_that("evaluate cross-validates several settings on the same folds", {
  skip_if_no_python()
  votes <- bncs.dataset("housevotes84")
  res <- bncs.evaluate(list(nb = list(structure = "nb", na = "level"),
                            kdb = list(structure = "kdb", k = 2, method = "hmd", na = "level")),
                       votes, "Class", cv = "2x2")
  expect_setequal(unique(res$model), c("nb", "kdb"))
  expect_equal(nrow(res), 8)
  expect_true(all(res$rmse > 0 & res$rmse < 1))
  expect_error(bncs.evaluate(list(list(structure = "nb")), votes, "Class"), "named list")
})

test_that("methods lists every estimator of the Python package with its defaults", {
  skip_if_no_python()
  m <- bncs.methods()
  expect_true(all(c("mle", "bayes", "mestimate", "hdp", "hmd", "hls", "hls-bayes") %in% m$method))
  expect_identical(m$default[m$method == "hls" & m$parameter == "tau"], "1")
  expect_identical(m$constraint[m$method == "hdp" & m$parameter == "iterations"], "integer >= 1 or 'auto'")
  expect_identical(m$default[m$method == "hmd" & m$parameter == "s"], "NULL")
  expect_true(all(nzchar(m$description)))
  l <- bncs.methods(details = FALSE)
  expect_equal(l$hdp$iterations, 2000)
})

test_that("an ESKDB classifier is fitted and predicts from R", {
  skip_if_no_python()
  data <- bncs.dataset("housevotes84")
  clf <- bncs.classifier(Class ~ ., data, structure = "eskdb", method = "mestimate", k = 2, n_estimators = 3,
                         na = "level", random_state = 1L)
  expect_equal(length(clf$py$estimators_), 3L)
  p <- predict(clf, data[1:20, ], prob = TRUE)
  expect_equal(dim(p), c(20L, 2L))
  expect_equal(unname(rowSums(p)), rep(1, 20), tolerance = 1e-12)
  expect_gt(mean(predict(clf, data) == data$Class), 0.85)
})

test_that("a classifier learns from a CSV path out of core, as from the data.frame", {
  skip_if_no_python()
  votes <- bncs.dataset("housevotes84")
  path <- tempfile(fileext = ".csv")
  on.exit(unlink(path))
  write.csv(votes, path, row.names = FALSE, na = "")
  a <- bncs.classifier(Class ~ ., votes, structure = "skdb", k = 2, method = "mestimate", na = "level")
  b <- bncs.classifier(Class ~ ., path, structure = "skdb", k = 2, method = "mestimate", na = "level")
  expect_identical(b$features, a$features)
  expect_identical(b$n, nrow(votes))
  expect_equal(predict(b, votes, prob = TRUE), predict(a, votes, prob = TRUE), tolerance = 1e-12)
  expect_error(bncs.classifier(Class ~ V1, path), "Class ~ \\.")
})

test_that("a classifier per domain: the structure pooled, the tables per region", {
  skip_if_no_python()
  chile <- bncs.dataset("chile")
  clf <- bncs.classifier(vote ~ ., chile, structure = "tan", method = "hmd", domain = "region")
  p <- predict(clf, chile[1:5, ], prob = TRUE)
  expect_equal(as.numeric(rowSums(p)), rep(1, 5), tolerance = 1e-12)
  pooled <- bncs.classifier(vote ~ ., chile[, names(chile) != "region"], structure = "tan", method = "hmd")
  q <- predict(pooled, chile[1:5, ], prob = TRUE)
  expect_false(isTRUE(all.equal(p, q)))  # the regions' own tables
  expect_identical(levels(predict(clf, chile[1:5, ])), c("A", "N", "U", "Y"))
})

test_that("bnlearn's predict() on a TAN classifier handles missing values as the fit did", {
  skip_if_no_python()
  skip_if_not_installed("bnlearn")
  loadNamespace("bnlearn")
  hv <- bncs.dataset("housevotes84")
  new <- hv[1:20, ]
  expect_true(anyNA(new[, names(new) != "Class"]))
  clf <- bncs.classifier(Class ~ ., hv, structure = "tan", method = "hdp", na = "level", iterations = 300L,
                         random_state = 1L)
  # our class in front of bnlearn's: predict() is ours, and the object is still bnlearn's bn.tan / bn.fit
  expect_identical(class(clf), c("bncs.classifier", "bn.tan", "bn.fit", "bn.fit.dnet"))
  p <- predict(clf, new, prob = TRUE)  # bnlearn's own predict refused this: "the data contains NaN/NA values"
  expect_s3_class(p, "factor")
  expect_identical(levels(p), levels(hv$Class))
  expect_identical(dim(attr(p, "prob")), c(2L, 20L))
  expect_equal(colSums(attr(p, "prob")), rep(1, 20), tolerance = 1e-12)
  # the fit made missing values a level of their own: bnlearn's predict on the rows with that
  # level written out gives the same classes and posteriors
  X <- new
  for (n in setdiff(names(X), "Class")) {
    X[[n]] <- factor(ifelse(is.na(X[[n]]), "<NA>", as.character(X[[n]])), levels = dimnames(clf[[n]]$prob)[[1]])
  }
  theirs <- bnlearn:::predict.bn.tan(clf, X, prob = TRUE)
  expect_identical(as.character(theirs), as.character(p))
  expect_equal(unname(attr(theirs, "prob")), unname(attr(p, "prob")), tolerance = 1e-10)
  # bnlearn's calling convention (data = ...) reaches bnlearn's method
  expect_equal(unname(attr(predict(clf, data = X, prob = TRUE), "prob")), unname(attr(theirs, "prob")),
               tolerance = 1e-12)
  # bnlearn's functions still take it as a bn.fit
  expect_setequal(bnlearn::nodes(clf), names(hv))
  expect_s3_class(bnlearn::bn.net(clf), "bn")
  expect_true(is.finite(logLik(clf, X)))
  expect_output(print(clf), "tan with hdp")
  expect_output(print(clf), "Parameters of node Class")
})

test_that("bncs.adapt gives a classifier a new domain without refitting", {
  skip_if_no_python()
  chile <- bncs.dataset("chile")
  old <- chile[chile$region != "M", ]
  old$region <- droplevels(old$region)
  clf <- bncs.classifier(vote ~ ., old, structure = "nb", method = "mle", domain = "region")
  new <- chile[chile$region == "M", ][1:40, ]
  a <- bncs.adapt(clf, new, "M")
  expect_s3_class(a, "bncs.classifier")
  p <- predict(a, new, prob = TRUE)
  expect_equal(unname(rowSums(p)), rep(1, nrow(new)), tolerance = 1e-12)
  # maximum likelihood: M's tables are its own frequencies, as a refit with its rows gives them
  all <- rbind(old, new)
  all$region <- factor(as.character(all$region))
  ref <- bncs.classifier(vote ~ ., all, structure = "nb", method = "mle", domain = "region")
  expect_equal(p, predict(ref, new, prob = TRUE), tolerance = 1e-12)
  # a hierarchical classifier adapted from 20 rows predicts the rest of M better than before
  h <- bncs.classifier(vote ~ ., old, structure = "tan", method = "hmd", domain = "region")
  rest <- chile[chile$region == "M", ][21:75, ]
  y <- as.integer(rest$vote)
  before <- suppressWarnings(predict(h, rest, prob = TRUE))
  h2 <- bncs.adapt(h, chile[chile$region == "M", ][1:20, ], "M")
  after <- predict(h2, rest, prob = TRUE)
  # the classifier adapted is a copy: h still answers M with the population's tables
  expect_equal(suppressWarnings(predict(h, rest, prob = TRUE)), before, tolerance = 1e-15)
  expect_gt(mean(log(after[cbind(seq_along(y), y)])), mean(log(before[cbind(seq_along(y), y)])))
  expect_error(bncs.adapt(clf, new, "M", s_domain = 2), "s_domain applies to networks")
  expect_error(bncs.adapt(clf, new[, names(new) != "vote"], "M"), "class column 'vote'")
})

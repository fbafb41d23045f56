bncs.classifier <- function(formula, data, structure = "tan", method = "mestimate", k = NULL, ...) {
  bs <- bncs.python()
  if (inherits(formula, "formula")) formula <- paste(deparse(formula, width.cutoff = 500L), collapse = " ")
  if (!is.character(formula) || length(formula) != 1L || !grepl("~", formula, fixed = TRUE)) {
    stop("formula must be a classifier formula such as Class ~ . or \"Class ~ A + B\"", call. = FALSE)
  }
  from_file <- .is_path(data)
  if (!from_file && !is.data.frame(data)) {
    stop("data must be a data.frame of factors or the path of a CSV or Parquet file, not ", class(data)[1],
         call. = FALSE)
  }
  target <- trimws(strsplit(formula, "~", fixed = TRUE)[[1]][1])
  rhs <- trimws(strsplit(formula, "~", fixed = TRUE)[[1]][2])
  if (from_file) {
    if (rhs != ".") stop("with data read from a file the formula is Class ~ . (every other column)", call. = FALSE)
  } else {
    if (!target %in% names(data)) stop("the class '", target, "' is not a column of the data", call. = FALSE)
  }
  .check_method(method)
  args <- .hyper(method, list(...))
  if (is.numeric(args$n_estimators) && length(args$n_estimators) == 1L) args$n_estimators <- as.integer(args$n_estimators)
  kk <- if (is.null(k)) list() else list(k = as.integer(k))
  clf <- .py_call(do.call(bs$BNClassifier, c(list(structure = structure, method = method), kk, args)))
  if (from_file) {  # read in chunks by Python, in bounded memory; y names the class column
    .py_call(clf$fit(normalizePath(data), target))
    features <- as.character(unlist(reticulate::py_to_r(.py_call(.bridge()$as_strings(clf$feature_names_in_)))))
    n <- as.integer(reticulate::py_to_r(clf$network_$info[["n_rows"]]))
  } else {
    features <- if (rhs == ".") setdiff(names(data), target) else trimws(strsplit(rhs, "+", fixed = TRUE)[[1]])
    X <- .df_to_py(data, features)
    y <- .df_to_py(data, target)[[target]]
    .py_call(clf$fit(X, y))
    n <- nrow(data)
  }
  classes <- as.character(unlist(reticulate::py_to_r(.py_call(.bridge()$as_strings(clf$classes_)))))
  info <- structure(list(py = clf, target = target, features = features, classes = classes,
                         structure = structure, method = method, formula = formula, n = n),
                    class = "bncs.classifier")
  has_domain <- !is.null(reticulate::py_to_r(clf$network_$domain))
  if (!structure %in% c("nb", "tan") || has_domain) return(info)
  # naive Bayes and TAN come back as bnlearn's naive.bayes() / tree.bayes() fits do: a
  # bn.fit of class bn.naive / bn.tan with the class as attribute "training", so that
  # bnlearn's functions take them.  "bncs.classifier" comes first: predict() is ours, which
  # handles missing values as the fit did (bnlearn's refuses them), and bnlearn's own
  # predict.bn.naive / predict.bn.tan remain reachable through NextMethod()
  fitted <- .to_bn_fit(clf$network_, NULL)
  class(fitted) <- c("bncs.classifier", if (structure == "nb") "bn.naive" else "bn.tan", "bn.fit", "bn.fit.dnet")
  attr(fitted, "training") <- target
  attr(fitted, "bncs") <- info
  fitted
}

#' @noRd
.classifier_info <- function(x) {
  if (inherits(x, "bn.fit")) attr(x, "bncs") else unclass(x)
}

predict.bncs.classifier <- function(object, newdata, prob = FALSE, ...) {
  # bnlearn's calling convention, predict(fit, node, data, ...), on a bn.fit: bnlearn's method
  if (inherits(object, "bn.fit") && (missing(newdata) || !is.data.frame(newdata))) return(NextMethod())
  if (!is.data.frame(newdata)) stop("newdata must be a data.frame of factors", call. = FALSE)
  info <- .classifier_info(object)
  group <- info$group
  if (is.null(group)) group <- reticulate::py_to_r(info$py$options_$domain)
  # the domain column when there is one: rows without it get the population's tables (with a warning)
  cols <- c(setdiff(info$features, group), intersect(group, names(newdata)))
  X <- .df_to_py(newdata, cols)
  a <- reticulate::py_to_r(.py_call(.bridge()$array_to_list(info$py$predict_proba(X))))
  p <- matrix(as.numeric(unlist(a$values)), nrow = nrow(newdata), byrow = TRUE,
              dimnames = list(rownames(newdata), info$classes))
  cls <- factor(info$classes[max.col(p, ties.method = "first")], levels = info$classes)
  if (inherits(object, "bn.fit")) {  # bnlearn's predict.bn.naive format: classes, "prob" one column per row
    if (prob) attr(cls, "prob") <- matrix(t(p), nrow = ncol(p), dimnames = list(info$classes, NULL))
    return(cls)
  }
  if (prob) return(p)
  cls
}

print.bncs.classifier <- function(x, ...) {
  info <- .classifier_info(x)
  cat("bncsmooth classifier:", info$structure, "with", info$method, "estimates\n")
  cat("  class:", info$target, "(", length(info$classes), "levels );", length(info$features), "features;",
      info$n, "training rows\n")
  if (inherits(x, "bn.fit")) NextMethod()  # bnlearn's print of the fitted tables
  invisible(x)
}

bncs.evaluate <- function(models, data, target, cv = "5x2", random_state = 0L, ...) {
  bs <- bncs.python()
  if (!is.list(models) || is.null(names(models)) || any(!nzchar(names(models)))) {
    stop("models must be a named list of classifier settings, e.g. ",
         "list(tan = list(structure = \"tan\", method = \"hdp\"))", call. = FALSE)
  }
  specs <- list()
  for (nm in names(models)) {
    a <- models[[nm]]
    method <- if (is.null(a$method)) "mestimate" else a$method
    a <- .hyper(method, a)
    if (!is.null(a$k)) a$k <- as.integer(a$k)
    specs[[nm]] <- .py_call(do.call(bs$BNClassifier, a))
  }
  pydf <- .df_to_py(data)
  opts <- .hyper("", list(...))  # the options of evaluate (n_jobs, progress)
  if (is.null(opts$progress)) opts$progress <- FALSE
  res <- .py_call(do.call(bs$evaluate, c(list(reticulate::dict(specs), pydf, target, cv = cv,
                                              random_state = as.integer(random_state)), opts)))
  cols <- reticulate::py_to_r(.py_call(.bridge()$frame_to_columns(res)))
  out <- lapply(cols, function(v) {
    v[vapply(v, is.null, logical(1))] <- NA
    unlist(v)
  })
  as.data.frame(out, stringsAsFactors = FALSE, check.names = FALSE)
}

# Multi-domain transfer: a new domain from a few rows, pooled / separate / hierarchical per domain.

bncs.adapt <- function(fitted, data, domain, group = "domain", s_domain = NULL, ...) {
  if (inherits(fitted, "bncs.classifier")) return(.adapt_classifier(fitted, data, domain, group, s_domain, ...))
  net <- attr(fitted, "bncs.network", exact = TRUE)
  if (!inherits(fitted, "bn.fit") || is.null(net) || reticulate::py_is_null_xptr(net)) {
    stop("'fitted' must be a bn.fit returned by bncs.fit() or bncs.adapt() in this R session (the fitted ",
         "population lives in Python and does not survive saveRDS(); fit it again)", call. = FALSE)
  }
  if (!is.data.frame(data)) stop("data must be a data.frame of factors, not ", class(data)[1], call. = FALSE)
  .check_domain_label(domain)
  nodes <- as.character(unlist(reticulate::py_to_r(net$nodes)))
  kw <- list(.df_to_py(data, nodes), as.character(domain))
  current <- reticulate::py_to_r(net$domain)
  if (is.null(current)) {
    if (!is.character(group) || length(group) != 1L) stop("group must be the name of one column", call. = FALSE)
    kw$column <- group
  }
  if (!is.null(s_domain)) kw$s_domain <- if (is.list(s_domain)) reticulate::dict(s_domain) else as.numeric(s_domain)
  kw <- c(kw, .weights_arg(.hyper("", list(...)), data))  # the options of adapt (weights, on_unseen, ...)
  new <- .py_call(do.call(net$adapt, kw))
  out <- .to_bn_fit(new, NULL, reticulate::py_to_r(new$domain))
  attr(out, "bncs.network") <- new
  out
}

bncs.evaluate.domains <- function(x, data, group, settings = NULL, method = "hmd", target = NULL,
                                  test_size = 0.3, k = c(0, 5, 20, 50), lodo = TRUE, repeats = 1L,
                                  random_state = 0L, ...) {
  bs <- bncs.python()
  spec <- .structure_spec(x)
  if (!is.data.frame(data)) stop("data must be a data.frame of factors, not ", class(data)[1], call. = FALSE)
  if (!is.character(group) || length(group) != 1L || !group %in% names(data)) {
    stop("group must name one column of the data", call. = FALSE)
  }
  .check_method(method)
  py_settings <- NULL
  if (!is.null(settings)) {
    if (!is.list(settings) || is.null(names(settings)) || any(!nzchar(names(settings)))) {
      stop("settings must be a named list, e.g. list(pooled = list(mode = \"pooled\", method = \"hdp\"))",
           call. = FALSE)
    }
    py_settings <- reticulate::dict(lapply(settings, function(s) {
      m <- if (is.null(s$method)) method else s$method
      .hyper(m, s)
    }))
  }
  kw <- c(list(spec, .df_to_py(data), group, py_settings, method = method, target = target,
                test_size = test_size, k_grid = as.list(as.integer(k)), lodo = lodo,
                repeats = as.integer(repeats), random_state = as.integer(random_state)),
          .hyper("", list(...)))  # the options every fit takes (na, weights, ...)
  res <- .py_call(do.call(bs$evaluate_domains, kw))
  cols <- reticulate::py_to_r(.py_call(.bridge()$frame_to_columns(res$results)))
  out <- lapply(cols, function(v) {
    v[vapply(v, is.null, logical(1))] <- NA
    unlist(v)
  })
  as.data.frame(out, stringsAsFactors = FALSE, check.names = FALSE)
}

#' @noRd
.check_domain_label <- function(domain) {
  if (!(is.character(domain) || is.numeric(domain)) || length(domain) != 1L || is.na(domain)) {
    stop("domain must be one label (the new domain's, or an existing one's to add rows to)", call. = FALSE)
  }
}

#' @noRd
.adapt_classifier <- function(fitted, data, domain, group, s_domain, ...) {
  # a classifier's members each adapted in Python (BNClassifier.adapt); the classifier object is updated
  info <- .classifier_info(fitted)
  if (!is.null(s_domain)) stop("s_domain applies to networks: a classifier's new domain learns its own", call. = FALSE)
  if (!is.data.frame(data)) stop("data must be a data.frame of factors, not ", class(data)[1], call. = FALSE)
  if (!info$target %in% names(data)) stop("data must hold the class column '", info$target, "'", call. = FALSE)
  .check_domain_label(domain)
  # a copy adapted: the classifier given is left as it was (R's value semantics; Python's adapt works in place)
  clf <- reticulate::import("copy", convert = FALSE)$deepcopy(info$py)
  info$py <- clf
  current <- reticulate::py_to_r(clf$options_$domain)
  col <- if (is.null(current)) group else current
  if (!is.character(col) || length(col) != 1L) stop("group must be the name of one column", call. = FALSE)
  X <- .df_to_py(data, intersect(c(setdiff(info$features, col), col), names(data)))
  y <- .df_to_py(data, info$target)[[info$target]]
  opts <- list(...)
  kw <- list(X, y, as.character(domain))
  if (is.null(current)) kw$column <- col
  if (!is.null(opts$weights)) {
    w <- opts$weights
    kw$sample_weight <- as.numeric(if (is.character(w) && length(w) == 1L) data[[w]] else w)
    opts$weights <- NULL
  }
  if (length(opts)) {
    stop("a classifier's adapt takes weights only, not ", paste(names(opts), collapse = ", "), call. = FALSE)
  }
  .py_call(do.call(clf$adapt, kw))
  info$group <- col
  info$features <- setdiff(info$features, col)
  structure(info, class = "bncs.classifier")
}

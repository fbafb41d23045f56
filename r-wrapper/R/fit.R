bncs.fit <- function(x, data, method = "hdp", ..., group = NULL, na = "available", prior = NULL) {
  bs <- bncs.python()
  spec <- .structure_spec(x)
  from_file <- .is_path(data)
  if (!from_file && !is.data.frame(data)) {
    stop("data must be a data.frame of factors or the path of a CSV or Parquet file, not ", class(data)[1],
         call. = FALSE)
  }
  if (!from_file) .check_levels_agree(x, data)
  if (!is.character(method) || length(method) != 1L) stop("method must be one string", call. = FALSE)
  .check_method(method)
  if (!is.null(group)) {
    if (!is.character(group) || length(group) != 1L) stop("group must be the name of one column", call. = FALSE)
    if (!from_file && !group %in% names(data)) {
      stop("the group '", group, "' is not a column of the data", call. = FALSE)
    }
  }
  args <- .hyper(method, list(...))
  if (identical(method, "hgs") && is.numeric(prior)) {  # hgs's pseudo-counts, once named prior
    if (!is.null(args$pseudo_count)) {
      stop("prior= and pseudo_count= are both given for hgs: prior= is an expert network (hgs takes none); ",
           "give hgs's pseudo-counts as pseudo_count= only", call. = FALSE)
    }
    warning("hgs's hyperparameter prior= (pseudo-counts toward the uniform distribution) is now pseudo_count=: ",
            "prior=", format(prior), " is read as pseudo_count=", format(prior), "; write pseudo_count= (prior= is ",
            "the expert network option, and a number there will be refused)", call. = FALSE)
    args$pseudo_count <- prior
    prior <- NULL
  }
  wcol <- if (is.character(args$weights) && !from_file) args$weights else character()
  args <- .weights_arg(args, data)
  pydf <- if (from_file) normalizePath(data) else .df_to_py(data, setdiff(names(data), wcol))
  kw <- c(list(spec, pydf, method = method, na = na), args)
  if (!is.null(group)) kw$domain <- group
  if (!is.null(prior)) kw$prior <- .prior_arg(prior)
  net <- .py_call(do.call(bs$fit, kw))
  out <- .to_bn_fit(net, data, group)
  attr(out, "bncs.network") <- net  # the fitted population, for bncs.adapt()
  out
}

bncs.update <- function(fitted, data, weights = NULL, decay = NULL, ...) {
  net <- attr(fitted, "bncs.network", exact = TRUE)
  if (!inherits(fitted, "bn.fit") || is.null(net) || reticulate::py_is_null_xptr(net)) {
    stop("'fitted' must be a bn.fit returned by bncs.fit(), bncs.update() or bncs.adapt() in this R session ",
         "(the fitted counts live in Python and do not survive saveRDS(); write the network as .pbn from ",
         "Python, or fit it again)", call. = FALSE)
  }
  from_file <- .is_path(data)
  if (!from_file && !is.data.frame(data)) {
    stop("data must be a data.frame of factors or the path of a CSV or Parquet file, not ", class(data)[1],
         call. = FALSE)
  }
  args <- .weights_arg(.hyper("", c(list(weights = weights, decay = decay), list(...))), data)
  args <- args[!vapply(args, is.null, logical(1))]
  wcol <- if (is.character(weights) && !from_file) weights else character()
  pydf <- if (from_file) normalizePath(data) else .df_to_py(data, setdiff(names(data), wcol))
  new <- .py_call(do.call(net$update, c(list(pydf), args)))
  group <- reticulate::py_to_r(new$domain)
  out <- .to_bn_fit(new, if (is.null(group)) NULL else data, group)
  attr(out, "bncs.network") <- new
  out
}

#' @noRd
.prior_arg <- function(prior) {
  # an expert network for fit(prior=): a bn.fit (its tables), or the path of a network file
  if (is.null(prior)) return(NULL)
  if (is.character(prior) && length(prior) == 1L) {
    if (!file.exists(prior)) stop("the prior network file '", prior, "' does not exist", call. = FALSE)
    return(prior)
  }
  if (!inherits(prior, "bn.fit")) {
    stop("prior must be a bn.fit (an expert network) or the path of a network file, not ", class(prior)[1],
         call. = FALSE)
  }
  nodes <- names(prior)
  parents <- lapply(nodes, function(n) as.list(prior[[n]]$parents))
  levels <- lapply(nodes, function(n) unname(lapply(dimnames(prior[[n]]$prob), function(l) as.list(as.character(l)))))
  probs <- lapply(nodes, function(n) as.numeric(prior[[n]]$prob))
  .py_call(.bridge()$network_from_tables(as.list(nodes), parents, levels, probs))
}

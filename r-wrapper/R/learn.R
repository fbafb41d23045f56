# Structure learning: bnlearn's scores and searches, and the BHD score of related data sets.

#' @noRd
.learn_frame <- function(data, group) {
  if (!is.data.frame(data)) stop("data must be a data.frame of factors, not ", class(data)[1], call. = FALSE)
  if (!is.null(group)) {
    if (!is.character(group) || length(group) != 1L) stop("group must be the name of one column", call. = FALSE)
    if (!group %in% names(data)) stop("the group '", group, "' is not a column of the data", call. = FALSE)
  }
  .df_to_py(data)
}

#' @noRd
.arcs_arg <- function(arcs, what) {
  if (is.null(arcs)) return(NULL)
  if (is.character(arcs) && is.null(dim(arcs)) && length(arcs) == 2L) arcs <- matrix(arcs, ncol = 2L)
  if (!(is.matrix(arcs) || is.data.frame(arcs)) || ncol(arcs) != 2L) {
    stop(what, " must be a two-column matrix or data.frame of arcs (from, to)", call. = FALSE)
  }
  arcs <- as.matrix(arcs)
  lapply(seq_len(nrow(arcs)), function(i) list(as.character(arcs[i, 1]), as.character(arcs[i, 2])))
}

#' @noRd
.domain_alias <- function(group, args) {
  # domain = "site" (the Python API's name) is group = "site"
  if (is.null(args$domain)) return(list(group = group, args = args))
  if (!is.null(group) && !identical(group, args$domain)) {
    stop("give the column naming each row's data set once: group = '", group, "' and domain = '",
         paste(args$domain, collapse = "', '"), "' differ", call. = FALSE)
  }
  group <- args$domain
  args$domain <- NULL
  list(group = group, args = args)
}

#' @noRd
.search <- function(fn, data, score, group, whitelist, blacklist, start, args) {
  bs <- bncs.python()
  alias <- .domain_alias(group, args)
  group <- alias$group
  args <- alias$args
  pydf <- .learn_frame(data, group)
  if (identical(score, "bhd")) {
    if (is.null(group)) stop("the bhd score needs group = (the column naming each row's data set)", call. = FALSE)
    args$domain <- group
  } else if (!is.null(group)) {
    pydf <- .df_to_py(data, setdiff(names(data), group))  # the group is never a node
  }
  for (a in c("maxp", "restart", "perturb", "max_iter", "tabu", "max_tabu", "random_state")) {
    v <- args[[a]]
    if (is.numeric(v) && length(v) == 1L && is.finite(v) && v == round(v)) args[[a]] <- as.integer(v)
    if (is.numeric(v) && length(v) == 1L && is.infinite(v)) args[[a]] <- NULL
  }
  kw <- c(list(pydf, score = score, whitelist = .arcs_arg(whitelist, "whitelist"),
               blacklist = .arcs_arg(blacklist, "blacklist"), progress = FALSE), args)
  if (!is.null(start)) kw$start <- .structure_spec(start)
  if (!requireNamespace("bnlearn", quietly = TRUE)) {
    stop("bncs.", fn, "() returns a bnlearn 'bn' object: install bnlearn (install.packages(\"bnlearn\"))",
         call. = FALSE)
  }
  dag <- .py_call(do.call(bs[[fn]], kw))
  nodes <- setdiff(names(data), if (is.null(group)) character() else group)
  out <- bnlearn::model2network(reticulate::py_to_r(dag$modelstring()))
  bnlearn::model2network(bnlearn::modelstring(out), ordering = nodes)
}

bncs.hc <- function(data, score = "bic", ..., group = NULL, whitelist = NULL, blacklist = NULL, start = NULL) {
  .search("hc", data, score, group, whitelist, blacklist, start, list(...))
}

bncs.tabu <- function(data, score = "bic", ..., group = NULL, whitelist = NULL, blacklist = NULL, start = NULL) {
  .search("tabu", data, score, group, whitelist, blacklist, start, list(...))
}

bncs.score <- function(x, data, type = "bic", ..., by.node = FALSE, group = NULL) {
  bs <- bncs.python()
  alias <- .domain_alias(group, list(...))
  group <- alias$group
  args <- alias$args
  spec <- .structure_spec(x)
  pydf <- .learn_frame(data, group)
  if (!is.null(group)) args$domain <- group
  v <- .py_call(do.call(bs$score, c(list(spec, pydf, type = type, by_node = isTRUE(by.node)), args)))
  if (!isTRUE(by.node)) return(reticulate::py_to_r(v))
  terms <- reticulate::py_to_r(v$to_dict())
  vals <- vapply(terms, as.numeric, numeric(1))
  nodes <- if (inherits(x, "bn")) names(x$nodes) else names(vals)
  vals[nodes]
}

bncs.bhd.args <- function(group, ...) {
  if (!is.factor(group) && !is.character(group)) stop("group must be a factor (each row's data set)", call. = FALSE)
  cache <- new.env(parent = emptyenv())
  cache$group <- group
  cache$hyper <- list(...)
  list(bncs = cache)
}

#' @noRd
.content_key <- function(data, group) {
  sums <- vapply(data, function(x) sum(as.numeric(as.integer(.as_factor(x))), na.rm = TRUE), numeric(1))
  paste(c(names(data), nrow(data), format(sums, digits = 17), sum(as.integer(factor(group)))), collapse = "\r")
}

bncs.bhd <- function(node, parents, data, args) {
  cache <- args$bncs
  if (!is.environment(cache)) stop("args must come from bncs.bhd.args(group)", call. = FALSE)
  if (length(cache$group) != nrow(data)) {
    stop("the group has ", length(cache$group), " entries, the data ", nrow(data), " rows", call. = FALSE)
  }
  key <- .content_key(data, cache$group)
  if (!identical(cache$key, key)) {  # a new data set: its rows encoded once, its families cached in Python
    bs <- bncs.python()
    gname <- ".bncs_group"
    frame <- data
    frame[[gname]] <- factor(cache$group)
    pydf <- .df_to_py(frame)
    cache$scorer <- .py_call(do.call(bs$learning$scores$make_scorer,
                                     list(pydf, as.list(names(data)), "bhd", c(list(domain = gname), cache$hyper))))
    cache$nodes <- names(data)
    cache$key <- key
  }
  pa <- as.list(as.integer(match(parents, cache$nodes) - 1L))
  reticulate::py_to_r(cache$scorer$family(as.integer(match(node, cache$nodes) - 1L), pa))
}

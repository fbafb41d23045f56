# Queries of a fitted network: P(target | evidence), MAP states, credible intervals.

#' @noRd
.network_of <- function(fitted) {
  if (is.character(fitted) && length(fitted) == 1L) {
    if (!file.exists(fitted)) stop("the network file '", fitted, "' does not exist", call. = FALSE)
    net <- .py_call(bncs.python()$read_network(normalizePath(fitted)))
    if (!reticulate::py_has_attr(net, "query")) {
      stop("the file '", fitted, "' holds a structure without tables: there is nothing to query", call. = FALSE)
    }
    return(net)
  }
  net <- attr(fitted, "bncs.network", exact = TRUE)
  if (is.null(net) && inherits(fitted, "bncs.classifier")) net <- .classifier_info(fitted)$py$network_
  if (is.null(net) || reticulate::py_is_null_xptr(net)) {
    stop("'fitted' must be a bn.fit returned by bncs.fit(), bncs.adapt() or bncs.classifier() in this R ",
         "session, or the path of a network file (.bif, .dsc, .net, .pbn, .rds); for other bn.fit ",
         "objects use bnlearn's cpquery()", call. = FALSE)
  }
  net
}

#' @noRd
.evidence_to_py <- function(evidence) {
  if (is.data.frame(evidence)) return(.df_to_py(evidence))
  if (is.null(evidence) || length(evidence) == 0L) return(NULL)
  if (is.null(names(evidence)) || any(!nzchar(names(evidence)))) {
    stop("evidence must be named by variable, e.g. list(S = \"yes\", X = \"no\"), or a data.frame", call. = FALSE)
  }
  ev <- lapply(as.list(evidence), function(v) {
    if (length(v) != 1L) stop("each evidence value must be one level", call. = FALSE)
    if (is.na(v)) NULL else as.character(v)
  })
  reticulate::dict(ev[!vapply(ev, is.null, logical(1))])
}

#' @noRd
.state_frame <- function(res, target, rows) {
  out <- lapply(seq_along(target), function(j) {
    lev <- as.character(unlist(res$levels[[j]]))
    factor(lev[as.integer(unlist(res$codes[[j]])) + 1L][rows], levels = lev)
  })
  names(out) <- target
  as.data.frame(out, stringsAsFactors = FALSE, check.names = FALSE)
}

bncs.query <- function(fitted, target, evidence = list(), interval = NULL, draws = 1000L,
                       random_state = NULL, domain = NULL, map = FALSE) {
  net <- .network_of(fitted)
  if (!is.character(target) || !length(target) || anyNA(target)) {
    stop("target must name one node or several (a character vector)", call. = FALSE)
  }
  if (!is.null(interval) && (!is.numeric(interval) || length(interval) != 1L)) {
    stop("interval must be one number in (0, 1), e.g. 0.9", call. = FALSE)
  }
  ev <- .evidence_to_py(evidence)
  seed <- if (is.null(random_state)) NULL else as.integer(random_state)
  res <- reticulate::py_to_r(.py_call(.bridge()$query_for_r(
    net, as.list(target), ev, interval = interval, draws = as.integer(draws), random_state = seed,
    domain = if (is.null(domain)) NULL else as.character(domain), map_state = isTRUE(map))))
  stats <- lapply(res$stats, function(v) as.numeric(unlist(v)))
  n <- as.integer(res$n)
  if (isTRUE(map)) {
    out <- .state_frame(res, target, seq_len(n))
    out$prob <- stats$prob
    if (is.data.frame(evidence)) rownames(out) <- rownames(evidence)
    return(out)
  }
  if (!is.data.frame(evidence)) {
    out <- .state_frame(res, target, seq_along(stats$prob))
    for (s in names(stats)) out[[s]] <- stats[[s]]
    return(out)
  }
  states <- .state_frame(res, target, seq_len(length(stats$prob) / n))
  labels <- if (length(target) == 1L) as.character(states[[1]]) else
    apply(vapply(target, function(t) paste0(t, "=", states[[t]]), character(nrow(states))), 1, paste, collapse = ",")
  mats <- lapply(stats, function(v) matrix(v, nrow = n, byrow = TRUE, dimnames = list(rownames(evidence), labels)))
  if (is.null(interval)) mats$prob else mats
}

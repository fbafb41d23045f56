# Conversions between R objects and the Python side (lossless: level order, NA, node order).

#' @noRd
.check_factors <- function(data, columns) {
  for (v in columns) {
    if (!v %in% names(data)) stop("variable '", v, "' is not a column of the data", call. = FALSE)
    x <- data[[v]]
    if (is.factor(x)) next
    if (is.character(x) || is.logical(x)) next
    stop("column '", v, "' is ", class(x)[1], ", not a factor: discrete networks need factors ",
         "(discretise it first, e.g. with cut() or bnlearn::discretize())", call. = FALSE)
  }
}

#' @noRd
.as_factor <- function(x) {
  if (is.factor(x)) return(x)
  factor(x, levels = sort(unique(as.character(x[!is.na(x)])), method = "radix"))
}

#' @noRd
.df_to_py <- function(data, columns = names(data)) {
  if (!is.data.frame(data)) stop("data must be a data.frame of factors, not ", class(data)[1], call. = FALSE)
  .check_factors(data, columns)
  codes <- lapply(columns, function(v) {
    f <- .as_factor(data[[v]])
    c <- as.integer(f) - 1L
    c[is.na(c)] <- -1L
    c
  })
  levels <- lapply(columns, function(v) as.list(levels(.as_factor(data[[v]]))))
  .py_call(.bridge()$frame_from_codes(as.list(columns), codes, levels))
}

#' @noRd
.formulas_of_bn <- function(x) {
  # a bnlearn bn (or bn.fit): one formula per node, parents in the order stored
  nodes <- if (inherits(x, "bn.fit")) names(x) else names(x$nodes)
  vapply(nodes, function(n) {
    pa <- if (inherits(x, "bn.fit")) x[[n]]$parents else x$nodes[[n]]$parents
    if (length(pa)) paste(n, "~", paste(pa, collapse = " + ")) else paste(n, "~ 1")
  }, character(1), USE.NAMES = FALSE)
}

#' @noRd
.structure_spec <- function(x) {
  if (inherits(x, "bn.fit")) {
    bad <- intersect(class(x), c("bn.fit.gnet", "bn.fit.cgnet"))
    if (length(bad)) stop("'x' is a ", bad[1], " (continuous or mixed network): bncsmooth fits ",
                          "discrete networks only", call. = FALSE)
    return(as.list(.formulas_of_bn(x)))
  }
  if (inherits(x, "bn")) return(as.list(.formulas_of_bn(x)))
  if (is.character(x)) {
    if (length(x) == 1L && grepl("^\\s*\\[", x)) return(x)
    if (all(grepl("~", x, fixed = TRUE))) return(as.list(x))
    stop("'x' must be a bnlearn 'bn' object, a model string such as \"[A][B|A]\" or ",
         "formulas such as \"B ~ A\"", call. = FALSE)
  }
  stop("'x' must be a bnlearn 'bn' object, a model string or formulas, not an object of class '",
       class(x)[1], "'", call. = FALSE)
}

#' @noRd
.is_path <- function(data) {
  if (!is.character(data) || length(data) != 1L) return(FALSE)
  if (!file.exists(data)) stop("the data file '", data, "' does not exist", call. = FALSE)
  TRUE
}

#' @noRd
.check_levels_agree <- function(x, data) {
  if (!inherits(x, "bn.fit")) return(invisible())
  for (n in names(x)) {
    lv <- dimnames(x[[n]]$prob)[[1]]
    if (!n %in% names(data) || is.null(lv)) next
    dl <- levels(.as_factor(data[[n]]))
    if (!identical(as.character(lv), dl)) {
      stop("the levels of '", n, "' disagree between the network (", paste(lv, collapse = ", "),
           ") and the data (", paste(dl, collapse = ", "), ")", call. = FALSE)
    }
  }
}

#' @noRd
.hyper <- function(method, args) {
  ints <- reticulate::py_to_r(.py_call(.bridge()$integer_params(method)))
  for (a in names(args)) {
    v <- args[[a]]
    if (a %in% ints && is.numeric(v) && length(v) == 1L && !is.na(v) && v == round(v)) args[[a]] <- as.integer(v)
  }
  args
}

#' @noRd
.make_table <- function(tab, root) {
  dn <- lapply(tab$levels, as.character)
  names(dn) <- if (root) NULL else as.character(tab$dims)
  prob <- array(as.numeric(unlist(tab$prob)), dim = unname(lengths(dn)), dimnames = dn)
  if (root) dimnames(prob) <- list(dn[[1]])
  class(prob) <- "table"
  prob
}

#' @noRd
.to_bn_fit <- function(py_net, data, group = NULL) {
  res <- reticulate::py_to_r(.py_call(.bridge()$network_tables(py_net)))
  nodes <- as.character(unlist(res$nodes))
  tables <- res$tables
  out <- list()
  for (n in nodes) {
    tab <- tables[[n]]
    pa <- as.character(unlist(tab$parents))
    ch <- as.character(unlist(tab$children))
    out[[n]] <- structure(list(node = n, parents = pa, children = ch,
                               prob = .make_table(tab, root = length(pa) == 0L)),
                          class = "bn.fit.dnode")
  }
  if (!is.null(group)) {
    # bnlearn's hdir: the group is a root, parent of every node, with its ML marginal
    lev <- as.character(unlist(res$domain_levels))
    if (is.data.frame(data)) {
      g <- .as_factor(data[[group]])
      p <- as.numeric(table(factor(as.character(g), levels = lev))) / sum(!is.na(g))
    } else {  # read from a file: the rows per group counted while the file was read
      p <- as.numeric(unlist(res$domain_rows))
      p <- p / sum(p)
    }
    prob <- array(p, dim = length(lev), dimnames = list(lev))
    class(prob) <- "table"
    out[[group]] <- structure(list(node = group, parents = character(0), children = nodes, prob = prob),
                              class = "bn.fit.dnode")
  }
  # built directly, with or without bnlearn: the same object either way, every table's
  # axes in the order the parents were written (bnlearn's custom.fit would reorder them to
  # its node order); bnlearn's functions (logLik, predict, cpquery, rbn, write.bif) take it
  structure(out, class = c("bn.fit", "bn.fit.dnet"))
}

#' @noRd
.df_from_py <- function(df) {
  parts <- reticulate::py_to_r(.py_call(.bridge()$frame_to_codes(df)))
  out <- lapply(seq_along(parts$names), function(j) {
    lev <- as.character(unlist(parts$levels[[j]]))
    codes <- as.integer(unlist(parts$codes[[j]]))
    codes[codes < 0L] <- NA_integer_
    factor(lev[codes + 1L], levels = lev)
  })
  names(out) <- as.character(unlist(parts$names))
  as.data.frame(out, stringsAsFactors = FALSE, check.names = FALSE)
}

# Row weights given as the name of a column of a data.frame: its numbers, one per row (the
# data go to Python as factors; the weights stay numbers).
#' @noRd
.weights_arg <- function(args, data) {
  w <- args$weights
  if (is.character(w) && length(w) == 1L && is.data.frame(data)) {
    if (!w %in% names(data)) stop("weights = '", w, "' is not a column of the data", call. = FALSE)
    args$weights <- as.numeric(data[[w]])
  } else if (is.numeric(w)) {
    args$weights <- as.numeric(w)
  }
  args
}

bncs.fit <- function(x, data, method = "hdp", ..., group = NULL, na = "available") {
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
  wcol <- if (is.character(args$weights) && !from_file) args$weights else character()
  args <- .weights_arg(args, data)
  pydf <- if (from_file) normalizePath(data) else .df_to_py(data, setdiff(names(data), wcol))
  kw <- c(list(spec, pydf, method = method, na = na), args)
  if (!is.null(group)) kw$domain <- group
  net <- .py_call(do.call(bs$fit, kw))
  out <- .to_bn_fit(net, data, group)
  attr(out, "bncs.network") <- net  # the fitted population, for bncs.adapt()
  out
}

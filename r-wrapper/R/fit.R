bncs.fit <- function(x, data, method = "hdp", ..., group = NULL, na = "available") {
  bs <- bncs.python()
  spec <- .structure_spec(x)
  if (!is.data.frame(data)) stop("data must be a data.frame of factors, not ", class(data)[1], call. = FALSE)
  .check_levels_agree(x, data)
  if (!is.character(method) || length(method) != 1L) stop("method must be one string", call. = FALSE)
  .check_method(method)
  if (!is.null(group)) {
    if (!is.character(group) || length(group) != 1L) stop("group must be the name of one column", call. = FALSE)
    if (!group %in% names(data)) stop("the group '", group, "' is not a column of the data", call. = FALSE)
  }
  args <- .hyper(method, list(...))
  pydf <- .df_to_py(data)
  kw <- c(list(spec, pydf, method = method, na = na), args)
  if (!is.null(group)) kw$domain <- group
  net <- .py_call(do.call(bs$fit, kw))
  .to_bn_fit(net, data, group)
}

bncs.methods <- function(details = TRUE) {
  m <- reticulate::py_to_r(.py_call(.bridge()$describe_methods()))
  if (!details) return(m)
  rows <- lapply(names(m), function(meth) {
    p <- m[[meth]]
    if (!length(p)) return(data.frame(method = meth, parameter = NA_character_, default = NA_character_))
    data.frame(method = meth, parameter = names(p),
               default = vapply(p, function(v) if (is.null(v)) "NULL" else format(v), character(1)),
               row.names = NULL)
  })
  do.call(rbind, rows)
}

bncs.dataset <- function(name = "asia") {
  bs <- bncs.python()
  df <- .py_call(bs$load_dataset(name))
  .df_from_py(df)
}

#' @noRd
.check_method <- function(method) {
  available <- names(bncs.methods(details = FALSE))
  if (!method %in% available) {
    stop("unknown method '", method, "'; available: ", paste(available, collapse = ", "), call. = FALSE)
  }
}

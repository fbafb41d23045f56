bncs.methods <- function(details = TRUE) {
  if (!details) return(reticulate::py_to_r(.py_call(.bridge()$describe_methods())))
  t <- reticulate::py_to_r(.py_call(.bridge()$method_table()))
  data.frame(lapply(t, function(col) as.character(unlist(col))), stringsAsFactors = FALSE)
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

bncs.options <- function() {
  t <- reticulate::py_to_r(.py_call(.bridge()$option_table()))
  out <- data.frame(name = as.character(unlist(t$name)), kind = as.character(unlist(t$kind)),
                    entries = as.character(unlist(t$entries)), doc = as.character(unlist(t$doc)),
                    stringsAsFactors = FALSE)
  out$example <- t$example
  out$needs <- t$needs
  out
}

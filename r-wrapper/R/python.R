# Finding Python and the pybncsmooth module.

.bncs <- new.env(parent = emptyenv())

#' @noRd
.configure_python <- function() {
  py <- getOption("bncsmooth.python", Sys.getenv("BNCSMOOTH_PYTHON", ""))
  if (nzchar(py) && !reticulate::py_available(initialize = FALSE)) {
    if (!file.exists(py)) {
      stop("the Python interpreter '", py, "' (option bncsmooth.python or BNCSMOOTH_PYTHON) does not ",
           "exist: install Python (>= 3.10) and then pybncsmooth with `python3 -m pip install pybncsmooth`",
           call. = FALSE)
    }
    reticulate::use_python(py, required = TRUE)
  }
}

bncs.available <- function() {
  ok <- tryCatch({
    .configure_python()
    reticulate::py_available(initialize = TRUE) && reticulate::py_module_available("pybncsmooth")
  }, error = function(e) FALSE)
  isTRUE(ok)
}

bncs.python <- function() {
  if (!is.null(.bncs$module)) return(.bncs$module)
  .configure_python()
  has_py <- tryCatch(reticulate::py_available(initialize = TRUE), error = function(e) FALSE)
  if (!isTRUE(has_py)) {
    stop("no Python interpreter found: install Python (>= 3.10) and point bncsmooth to it ",
         "with options(bncsmooth.python = \"/path/to/python3\") or the RETICULATE_PYTHON ",
         "environment variable", call. = FALSE)
  }
  if (!reticulate::py_module_available("pybncsmooth")) {
    cfg <- reticulate::py_config()
    stop("the Python package 'pybncsmooth' is not installed for ", cfg$python,
         ": install it with `", cfg$python, " -m pip install pybncsmooth`", call. = FALSE)
  }
  .bncs$module <- reticulate::import("pybncsmooth", convert = FALSE)
  .bncs$bridge <- reticulate::import("pybncsmooth.interop.r_bridge", convert = FALSE)
  .bncs$module
}

#' @noRd
.bridge <- function() {
  bncs.python()
  .bncs$bridge
}

# Run a Python call; a Python exception becomes an R error with its message only.
#' @noRd
.py_call <- function(expr) {
  tryCatch(expr, error = function(e) {
    msg <- conditionMessage(e)
    # reticulate prefixes the exception type and may append a traceback: keep the message
    msg <- sub("(?s)\nRun `reticulate::py_last_error\\(\\)`.*$", "", msg, perl = TRUE)
    msg <- sub("(?s)\n(Detailed traceback|Traceback).*$", "", msg, perl = TRUE)
    msg <- sub("^Error in py_call_impl\\(callable, call_args\\$unnamed, call_args\\$named\\) : *\n? *", "", msg)
    # "pybncsmooth.errors.HyperparameterError: text" -> "text"
    msg <- sub("^[A-Za-z_][A-Za-z0-9_.]*(Error|Exception|Warning): ", "", trimws(msg))
    stop(trimws(msg), call. = FALSE)
  })
}

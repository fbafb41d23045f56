# Finding Python and the pybncsmooth module.

.bncs <- new.env(parent = emptyenv())

#: the virtual environment bncs.install() makes and the package looks for
.ENVNAME <- "r-bncsmooth"

#' @noRd
.configure_python <- function() {
  if (reticulate::py_available(initialize = FALSE)) return(invisible())
  py <- getOption("bncsmooth.python", Sys.getenv("BNCSMOOTH_PYTHON", ""))
  if (nzchar(py)) {
    if (!file.exists(py)) {
      stop("the Python interpreter '", py, "' (option bncsmooth.python or BNCSMOOTH_PYTHON) does not ",
           "exist: run bncsmooth::bncs.install(), or install Python (>= 3.10) and then pybncsmooth with ",
           "`python3 -m pip install pybncsmooth`", call. = FALSE)
    }
    reticulate::use_python(py, required = TRUE)
  } else if (!nzchar(Sys.getenv("RETICULATE_PYTHON")) && reticulate::virtualenv_exists(.ENVNAME)) {
    reticulate::use_virtualenv(.ENVNAME, required = TRUE)  # made by bncs.install()
  }
}

#: the folder R CMD INSTALL built this package from (evaluated when the package is
#: installed: a checkout's r-wrapper/ folder, or a temporary copy of a tarball)
.INSTALLED_FROM <- getwd()

#' The pybncsmooth source folder beside this package: the checkout it was installed from
#' (the parent of its r-wrapper/ folder), else the working directory or one above it;
#' NULL when none holds pybncsmooth's pyproject.toml.
#' @noRd
.local_source <- function() {
  is_source <- function(dir) {
    f <- file.path(dir, "pyproject.toml")
    file.exists(f) && any(grepl("^name *= *\"pybncsmooth\"", readLines(f, warn = FALSE)))
  }
  up <- function(dir) {
    dir <- normalizePath(dir, mustWork = FALSE)
    repeat {
      if (is_source(dir)) return(dir)
      parent <- dirname(dir)
      if (identical(parent, dir)) return(NULL)
      dir <- parent
    }
  }
  if (is_source(dirname(.INSTALLED_FROM))) return(normalizePath(dirname(.INSTALLED_FROM)))
  up(getwd())
}

bncs.install <- function(package = NULL, envname = "r-bncsmooth", python = NULL, extras = character(),
                         system_site_packages = FALSE, pip_options = character()) {
  if (!is.null(package) && (!is.character(package) || length(package) != 1L || !nzchar(package))) {
    stop("package must be one requirement: \"pybncsmooth\", a version (\"pybncsmooth==0.1.0\"), a wheel ",
         "or the path of a source folder (NULL: the package index's, else the source this package came with)",
         call. = FALSE)
  }
  with_extras <- function(p) if (length(extras)) paste0(p, "[", paste(extras, collapse = ","), "]") else p
  if (!reticulate::virtualenv_exists(envname)) {
    reticulate::virtualenv_create(envname, python = python, system_site_packages = system_site_packages)
  }
  py <- reticulate::virtualenv_python(envname)
  pip <- function(spec, ...) system2(py, c("-m", "pip", "install", "--upgrade", pip_options, shQuote(spec)), ...)
  spec <- with_extras(if (is.null(package)) "pybncsmooth" else package)
  if (is.null(package)) {
    # the package index first; where it does not have pybncsmooth (or cannot be reached),
    # the source folder this package was installed from
    out <- suppressWarnings(pip(spec, stdout = TRUE, stderr = TRUE))
    status <- attr(out, "status")
    if (!is.null(status) && status != 0L) {
      src <- .local_source()
      if (is.null(src)) {
        stop("pip could not install ", spec, " from the package index, and no pybncsmooth source folder was ",
             "found (the checkout this package was installed from, or the working directory): give its path, ",
             "bncs.install(package = \"/path/to/pybncsmooth\"). pip said:\n", paste(out[max(1L, length(out) - 2L):length(out)], collapse = "\n"),
             call. = FALSE)
      }
      said <- out[nzchar(out)]
      message("pybncsmooth is not on the package index (pip: ", said[length(said)], "): installing it ",
              "from the source folder ", src)
      spec <- with_extras(src)
      status <- pip(spec)
    } else {
      status <- 0L
      if (length(out)) cat(out, sep = "\n")
    }
  } else {
    status <- pip(spec)
  }
  if (!identical(as.integer(status), 0L)) {
    stop("pip could not install ", spec, " into the virtual environment '", envname, "' (", py,
         "): see its messages above", call. = FALSE)
  }
  message("pybncsmooth is installed in the virtual environment '", envname, "' (", py, ").\n",
          if (envname == .ENVNAME) "Restart R: library(bncsmooth) then finds it by itself."
          else paste0("Restart R and call reticulate::use_virtualenv(\"", envname, "\") before using bncsmooth."))
  invisible(py)
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
    stop("no Python interpreter found: run bncsmooth::bncs.install() (then restart R), or install Python ",
         "(>= 3.10) and point bncsmooth to it with options(bncsmooth.python = \"/path/to/python3\") or the ",
         "RETICULATE_PYTHON environment variable", call. = FALSE)
  }
  if (!reticulate::py_module_available("pybncsmooth")) {
    cfg <- reticulate::py_config()
    stop("the Python package 'pybncsmooth' is not installed for ", cfg$python,
         ": run bncsmooth::bncs.install() (then restart R), or install it with `", cfg$python,
         " -m pip install pybncsmooth`", call. = FALSE)
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

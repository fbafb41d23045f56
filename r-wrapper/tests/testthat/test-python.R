# Each case runs in a fresh R process: the interpreter of a session cannot be changed.
run_fresh <- function(code) {
  rscript <- file.path(R.home("bin"), "Rscript")
  code <- paste0('Sys.unsetenv(c("RETICULATE_PYTHON", "BNCSMOOTH_PYTHON")); ', code)
  out <- suppressWarnings(system2(rscript, c("-e", shQuote(code)), stdout = TRUE, stderr = TRUE))
  paste(out, collapse = "\n")
}

test_that("a missing interpreter gives an error that says what to install", {
  out <- run_fresh('options(bncsmooth.python = "/nonexistent/python3"); library(bncsmooth); print(bncs.available()); bncs.python()')
  expect_match(out, "FALSE")
  expect_match(out, "'/nonexistent/python3'.*does not exist: run bncsmooth::bncs.install\\(\\), or install Python .*pip install pybncsmooth")
})

test_that("a Python without pybncsmooth gives an error that says what to install", {
  skip_if_no_python()
  base <- Sys.which("python3")
  skip_if(!nzchar(base), "no python3 on the PATH")
  venv <- file.path(tempdir(), "bare-venv")
  if (!dir.exists(venv)) system2(base, c("-m", "venv", "--without-pip", venv))
  py <- file.path(venv, "bin", "python")
  skip_if(!file.exists(py), "could not create a virtual environment")
  out <- run_fresh(sprintf('options(bncsmooth.python = "%s"); library(bncsmooth); print(bncs.available()); bncs.python()', py))
  expect_match(out, "FALSE")
  expect_match(out, "pybncsmooth' is not installed for .*pip install pybncsmooth")
})

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

test_that("bncs.install() as the README shows it installs this checkout's pybncsmooth where the index has none", {
  src <- bncsmooth:::.local_source()
  skip_if(is.null(src), "bncsmooth was not installed from a checkout of pybncsmooth")
  base <- Sys.getenv("RETICULATE_PYTHON", Sys.which("python3"))
  skip_if(!nzchar(base), "no python3 on the PATH")
  root <- file.path(tempdir(), "venvs-install")
  # offline: --no-index stands for a package index without pybncsmooth; the environment sees
  # the creating Python's packages (setuptools to build the source, no downloads), and
  # --ignore-installed makes pip install a copy of its own all the same
  code <- sprintf(paste0(
    'Sys.setenv(RETICULATE_VIRTUALENV_ROOT = "%s", WORKON_HOME = "%s"); setwd(tempdir()); ',
    'bncsmooth::bncs.install(python = "%s", system_site_packages = TRUE, ',
    'pip_options = c("--no-index", "--no-deps", "--no-build-isolation", "--ignore-installed", "--quiet"))'),
    root, root, base)
  out <- run_fresh(code)
  expect_match(out, "pybncsmooth is not on the package index \\(pip: .+\\): installing it from the source folder ")
  expect_match(out, paste0("from the source folder ", src), fixed = TRUE)
  expect_match(out, "Restart R: library\\(bncsmooth\\) then finds it by itself")
  expect_false(grepl("rpy2", out))  # no extras: the R package needs none
  py <- file.path(root, "r-bncsmooth", "bin", "python")
  expect_true(file.exists(py))
  probe <- "import importlib.metadata as m; d = m.distribution('pybncsmooth'); print('AT', d.locate_file(''))"
  where <- system2(py, c("-c", shQuote(probe)), stdout = TRUE, env = "PYTHONPATH=")
  expect_match(where[length(where)], paste0("AT ", normalizePath(root)), fixed = TRUE)  # the environment's own copy
})

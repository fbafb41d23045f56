library(testthat)
library(bncsmooth)
test_check("bncsmooth")

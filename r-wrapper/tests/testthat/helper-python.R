skip_if_no_python <- function() {
  if (!bncsmooth::bncs.available()) skip("Python with pybncsmooth is not available")
}

asia_string <- "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"

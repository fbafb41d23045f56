# A classifier returned as a bnlearn bn.fit carries the class "bncs.classifier" in front of
# bnlearn's ("bn.naive" / "bn.tan", "bn.fit", "bn.fit.dnet"), so that predict() is ours.
# bnlearn's S3 functions reach it through the classes behind; its S4 generics (nodes,
# degree, score, nodes<-) dispatch on the first class only, so they get methods for
# "bncs.classifier" that hand the object on as the bn.fit it is.  bnlearn is optional
# (Enhances): the methods are registered when its namespace is loaded.

# the S4 class and method tables (the package namespace itself is locked once loaded)
.bncs_s4 <- new.env()

#' @noRd
.as_bnlearn <- function(x) {
  class(x) <- setdiff(class(x), "bncs.classifier")
  attr(x, "bncs") <- NULL
  x
}

#' @noRd
.register_bnlearn_methods <- function(...) {
  if (isTRUE(.bncs$bnlearn_methods)) return(invisible())
  nodes <- methods::getGeneric("nodes", package = "bnlearn")
  degree <- methods::getGeneric("degree", package = "bnlearn")
  score <- methods::getGeneric("score", package = "bnlearn")
  nodes_set <- methods::getGeneric("nodes<-", package = "bnlearn")
  methods::setOldClass("bncs.classifier", where = .bncs_s4)
  methods::setMethod(nodes, "bncs.classifier", function(object, ...) nodes(.as_bnlearn(object), ...),
                     where = .bncs_s4)
  methods::setMethod(degree, "bncs.classifier",
                     function(object, Nodes, ...) degree(.as_bnlearn(object), Nodes, ...), where = .bncs_s4)
  methods::setMethod(score, "bncs.classifier", function(x, ...) score(.as_bnlearn(x), ...), where = .bncs_s4)
  methods::setMethod(nodes_set, "bncs.classifier", function(object, value) nodes_set(.as_bnlearn(object), value),
                     where = .bncs_s4)
  .bncs$bnlearn_methods <- TRUE
  invisible()
}

.onLoad <- function(libname, pkgname) {
  if (isNamespaceLoaded("bnlearn")) {
    .register_bnlearn_methods()
  } else {
    setHook(packageEvent("bnlearn", "onLoad"), .register_bnlearn_methods)
  }
}

"""Categorical data: schemas, encoding and data sources."""

from .encode import EncodedData, encode
from .schema import NA_LABEL, Schema
from .sources import iter_frames, read_table

__all__ = ["Schema", "NA_LABEL", "EncodedData", "encode", "read_table", "iter_frames"]

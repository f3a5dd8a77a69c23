"""Facewire's Python client: follow a collector's ordered stream of faces (protocol/SPEC.md)."""
from .client import (Client, FaceAppeared, FaceLeft, Frame, Item, Statistics, StreamEnded, TrackingReset, parse,
                     read_key)
from .jsonlines import line as json_line

__version__ = "0.3.0.dev0"
__all__ = ["Client", "Item", "Frame", "FaceAppeared", "FaceLeft", "StreamEnded", "TrackingReset", "Statistics",
           "parse", "read_key", "json_line"]

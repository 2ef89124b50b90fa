"""krill.sparse: SciPy-compatible entry points (krill.sparse.linalg)."""

from . import linalg

__all__ = ["linalg"]

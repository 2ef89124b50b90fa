"""krill: Krylov solvers for sparse systems (the Python binding of the C library).

    krill.solve(A, b, ...)            the richer API: a SolveResult with history and times
    krill.Matrix(A, format=...)       a matrix built once: .solve(b, ...), .update_values(data)
    krill.formats(A)                  the storage formats measured (`krill formats --json`)
    krill.apsp(G, ...)                all-pairs shortest paths: (D, P) as SciPy's shortest_path
    krill.sparse.linalg.gmres, cg, bicgstab, minres
                                      drop-in replacements for scipy.sparse.linalg's
    krill.KrillError and subclasses   failures of the C library, with its message

See doc/python.md in the repository.
"""

from . import _core
from ._errors import (DeviceError, InternalError, KrillError, KrillIOError, KrillMemoryError,
                      KrillValueError, NumericError, ParseError, UnsupportedError)
from ._solve import SolveResult, solve
from ._matrix import Matrix
from ._formats import formats
from ._apsp import NegativeCycleError, apsp, apsp_methods
from . import sparse

__version__ = _core.version()


def have_cuda():
    """Whether this build of krill has the CUDA backend."""
    return _core.have_cuda()


def cuda_device_count():
    """Usable CUDA devices (0 in a build without CUDA or on a machine without a GPU)."""
    return _core.cuda_device_count()


def formats_available():
    """The storage format names that solve(format=...) accepts."""
    return list(_core.format_names())


def preconditioners():
    """The preconditioner names that solve(precond=...) and M= accept (options after a colon,
    e.g. "bjacobi:3", "ilu0:shift": include/krill/precond.h)."""
    return list(_core.pc_names())


__all__ = ["solve", "SolveResult", "Matrix", "formats", "apsp", "apsp_methods",
           "NegativeCycleError", "sparse", "have_cuda", "cuda_device_count",
           "formats_available", "preconditioners", "KrillError", "KrillValueError",
           "ParseError", "UnsupportedError", "NumericError", "KrillMemoryError",
           "KrillIOError", "DeviceError", "InternalError", "__version__"]

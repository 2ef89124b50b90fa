"""krill.apsp: all-pairs shortest paths (include/krill/apsp.h) with SciPy's conventions."""

import numpy as np
import scipy.sparse as sp

from . import _core
from ._errors import NumericError, _make_error

try:   # SciPy's own class, so that `except scipy.sparse.csgraph.NegativeCycleError` works too
    from scipy.sparse.csgraph import NegativeCycleError as _ScipyNegativeCycleError
except ImportError:   # pragma: no cover
    _ScipyNegativeCycleError = Exception

NO_PREDECESSOR = -9999   # P[i, j] when j == i or j is unreachable from i (SciPy's value)

_WEIGHTS = {"int32": "int32", "float": "float", "float32": "float", "double": "double",
            "float64": "double"}


class NegativeCycleError(NumericError, _ScipyNegativeCycleError):
    """krill.apsp found a negative cycle (KRILL_ERR_NUMERIC); str(e) is the C library's
    message (it names a vertex on the cycle, and with paths=True the cycle). ``vertex``: a
    vertex on it. Also a scipy.sparse.csgraph.NegativeCycleError."""

    vertex = None


def _graph_csr(G):
    """G as canonical CSR arrays (duplicates summed, as SciPy's csgraph does). A sparse G: every
    stored entry is an arc, explicit zeros included (weight 0); a dense G: the entries that are
    neither 0 nor inf nor NaN (SciPy's dense convention)."""
    if not sp.issparse(G):
        if callable(G) or hasattr(G, "matvec"):
            raise TypeError(f"krill.apsp: G of type {type(G).__name__} is not a graph: give a "
                            "scipy.sparse matrix or a dense 2-D array")
        dense = np.asarray(G)
        if dense.ndim != 2:
            raise ValueError(f"krill.apsp: G must be 2-D, got shape {dense.shape}")
        if np.iscomplexobj(dense) or not np.issubdtype(dense.dtype, np.number):
            raise ValueError(f"krill.apsp: G must be real, got dtype {dense.dtype}")
        dense = dense.astype(np.float64)
        mask = np.isfinite(dense) & (dense != 0)
        rows, cols = np.nonzero(mask)
        G = sp.csr_array((dense[rows, cols], (rows, cols)), shape=dense.shape)
    if G.ndim != 2:
        raise ValueError(f"krill.apsp: G must be 2-D, got {G.ndim}-D")
    if G.shape[0] != G.shape[1]:
        raise ValueError(f"krill.apsp: G has shape {G.shape}; an adjacency matrix is square "
                         "(n x n for n vertices)")
    if np.iscomplexobj(G.dtype.type(0)):
        raise ValueError("krill.apsp: complex weights are not supported")
    csr = sp.csr_array(G, dtype=np.float64, copy=True)
    csr.sum_duplicates()
    if csr.nnz and not np.all(np.isfinite(csr.data)):
        raise ValueError("krill.apsp: G has NaN or infinite weights stored (leave the entry "
                         "out for no arc)")
    return (np.ascontiguousarray(csr.indptr, dtype=np.int64),
            np.ascontiguousarray(csr.indices, dtype=np.int32), csr.data, csr.shape[0])


def apsp(G, method="auto", weight="double", paths=True, device="cpu", *, threads=0,
         info=None):
    """All-pairs shortest paths of the directed graph G; returns (D, P).

    G : the adjacency: a scipy.sparse matrix or array (any format; arc i -> j of weight
        G[i, j]; every stored entry is an arc, explicit zeros included; duplicates summed,
        as SciPy does) or a dense 2-D array (0, inf and NaN mean no arc). Negative weights are
        allowed (not with method "dijkstra").
    method : "auto" (krill chooses), "plain", "fw-a", "fw-b", "fw-rec" or "dijkstra"
        (krill.apsp_methods(); doc/apsp.md).
    weight : the type krill computes in: "double" (default), "float" or "int32" (exact;
        every weight must be an integer). D is float64 whatever it is.
    paths : True also returns the predecessors P; False returns (D, None).
    device : "cpu" ("cuda" as the C library's, untested in this phase). threads : OpenMP
        threads (0: OpenMP's default).
    info : a dict to receive what the solve did (method, why, tile, arcs, relaxations,
        bytes_needed, t_compute, t_total, device), or None.

    D : (n, n) float64, D[i, j] the length of a shortest path i -> j, inf when j is
        unreachable from i, D[i, i] = 0 -- scipy.sparse.csgraph.shortest_path's D.
    P : (n, n) int32, P[i, j] the vertex before j on such a path; -9999 when j == i or j is
        unreachable -- shortest_path(..., return_predecessors=True)'s P.

    A negative cycle raises krill.NegativeCycleError (a krill.NumericError, also a
    scipy.sparse.csgraph.NegativeCycleError) with the C library's message; bad arguments
    raise ValueError subclasses (krill.KrillValueError for what the C library checks).
    """
    for name, value in (("method", method), ("weight", weight), ("device", device)):
        if not isinstance(value, str):
            raise TypeError(f"krill.apsp: {name} must be a string, got {type(value).__name__}")
    if not isinstance(paths, (bool, np.bool_)):
        raise TypeError(f"krill.apsp: paths must be True or False, got {paths!r}")
    if weight not in _WEIGHTS:
        raise ValueError(f"krill.apsp: weight={weight!r} is not one of \"double\", \"float\", "
                         "\"int32\"")
    if method != "auto" and method not in _core.apsp_methods():
        raise ValueError(f"krill.apsp: method={method!r} is not one of \"auto\", " +
                         ", ".join(f"\"{m}\"" for m in _core.apsp_methods()))
    indptr, indices, data, n = _graph_csr(G)
    D = np.empty((n, n), dtype=np.float64)
    P = np.empty((n, n) if paths else (0, 0), dtype=np.int32)
    d = _core.apsp(indptr, indices, data, n, method, _WEIGHTS[weight], bool(paths), device,
                   int(threads), D, P)
    if d["status"] != 0:
        if d["negative_cycle"] >= 0:
            exc = NegativeCycleError(d["message"])
            exc.status, exc.status_name = d["status"], _core.status_string(d["status"])
            exc.vertex = d["negative_cycle"]
        else:
            exc = _make_error(d["status"], _core.status_string(d["status"]), d["message"])
        raise exc
    if info is not None:
        info.update({k: v for k, v in d.items() if k not in ("status", "negative_cycle")})
    return D, (P if paths else None)


def apsp_methods():
    """The APSP method names krill.apsp(method=...) takes, besides "auto"."""
    return list(_core.apsp_methods())

"""CuPy's GPU arrays in krill.Matrix, krill.solve and krill.sparse.linalg (doc/python.md,
"CuPy (GPU, no copies)").

CuPy is recognized by duck typing (the type's module, __cuda_array_interface__) and imported
only once such an input is seen: krill imports without a GPU or CuPy. A float64 CSR with
int32 or int64 indptr, int32 indices and canonical form (sorted, no duplicates) is wrapped
from its device pointers (krill_mat_create_device_csr, no copy); anything else is converted
once on the GPU by CuPy. Every call synchronizes CuPy's current stream before krill reads
the arrays (krill works on its own stream and waits for it before returning).
"""

import numpy as np

from . import _core
from ._errors import _make_error

_NUMERIC = 6     # KRILL_ERR_NUMERIC (include/krill/status.h)
_NO_DEVICE = 7   # KRILL_ERR_NO_DEVICE


def _is_cupy(obj):
    """True for an object of CuPy's (cupy.ndarray, cupyx.scipy.sparse matrices)."""
    return type(obj).__module__.split(".")[0] in ("cupy", "cupyx")


def is_gpu_array(v):
    """True for a GPU array of any library (__cuda_array_interface__: CuPy, Numba, ...)."""
    return hasattr(v, "__cuda_array_interface__")


def is_gpu_matrix(A):
    """True for a CuPy sparse matrix or a 2-D CuPy array."""
    return _is_cupy(A) and (hasattr(A, "tocsr") or getattr(A, "ndim", None) == 2)


def _cupy(what):
    """The cupy module, once krill is known to have the CUDA backend (the clear error where
    it has none, before CuPy is imported)."""
    if not _core.have_cuda():
        raise _make_error(_NO_DEVICE, _core.status_string(_NO_DEVICE),
                          f"krill: {what} is on the GPU, and this krill was built without "
                          "CUDA (krill.have_cuda() is False); build it with "
                          "-C cmake.define.KRILL_WITH_CUDA=ON or pass host arrays")
    try:
        import cupy
    except ImportError as e:   # a GPU array of another library (Numba, PyTorch) without CuPy
        raise TypeError(f"krill: {what} is a GPU array; krill takes GPU arrays through CuPy, "
                        "which is not installed (pass CuPy or NumPy arrays)") from e
    return cupy


def _sync(cupy):
    """Work queued by the caller on CuPy's current stream finished before krill reads."""
    cupy.cuda.get_current_stream().synchronize()


def pointer(arr):
    """The device pointer of a CuPy array made C-contiguous here (__cuda_array_interface__)."""
    return int(arr.__cuda_array_interface__["data"][0])


def device_csr(A, device):
    """A CuPy matrix as (indptr, indices, data, n_rows, n_cols, device_id): the arrays of
    A itself where A is a canonical float64 CSR with int32/int64 indptr and int32 indices
    (no copy), else of one conversion made on the GPU by CuPy (other formats via .tocsr(),
    sum_duplicates for unsorted or duplicate indices, astype for other types; A is never
    modified). device is krill's device argument: "cpu" is refused."""
    if device not in (None, "cpu", "cuda", "gpu", "auto"):
        raise ValueError(f"krill: device {device!r} is not one of \"cpu\", \"cuda\" (or "
                         "\"gpu\"), \"auto\"")
    if device == "cpu":
        raise ValueError("krill: A is a CuPy matrix (GPU memory); device=\"cpu\" cannot use "
                         "it: pass device=\"cuda\" (or \"auto\" or None), or A.get() for the "
                         "CPU")
    cupy = _cupy("A (a CuPy matrix)")
    import cupyx.scipy.sparse as csp
    if A.ndim != 2:
        raise ValueError(f"krill: A must be 2-D, got {A.ndim}-D")
    if A.dtype.kind == "c":
        raise ValueError("krill: complex matrices are not supported (float64 only)")
    with (A.data if csp.issparse(A) else A).device:
        _sync(cupy)
        csr = A.tocsr() if csp.issparse(A) else csp.csr_matrix(A.astype(cupy.float64))
        if not csr.has_canonical_format:
            if csr is A:
                csr = A.copy()   # sum_duplicates sorts in place: never the caller's matrix
            csr.sum_duplicates()
        indptr = csr.indptr if csr.indptr.dtype in (np.int32, np.int64) else \
            csr.indptr.astype(np.int64)
        indices = csr.indices.astype(np.int32, copy=False)
        data = csr.data.astype(np.float64, copy=False)
        arrays = [cupy.ascontiguousarray(a) for a in (indptr, indices, data)]
        _sync(cupy)
    return (*arrays, csr.shape[0], csr.shape[1], arrays[2].device.id)


def solve_vectors(b, x0, n_cols, device_id):
    """b and x of a solve on GPU device_id as CuPy arrays: b itself where it is a contiguous
    float64 CuPy vector (no copy), else converted by cupy.asarray (a NumPy b is copied to
    the GPU); x a new CuPy array, x0's copy or zeros, that krill writes. Returns (b, x) after
    synchronizing CuPy's stream."""
    cupy = _cupy("b or x0")
    with cupy.cuda.Device(device_id):
        vb = _vector(cupy, b, "b")
        x = cupy.zeros(n_cols, dtype=cupy.float64) if x0 is None else \
            cupy.array(_vector(cupy, x0, "x0"), copy=True)   # never the caller's x0
        _sync(cupy)
    return vb, x


def vector_shape(arr, name):
    """A NumPy or CuPy array as a real 1-D vector: a column (n, 1) flattened, as SciPy does;
    complex values or another shape raise ValueError naming the argument."""
    if arr.dtype.kind == "c":
        raise ValueError(f"krill: {name} is complex; only real (float64) systems are supported")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"krill: {name} must be a vector of shape (n,) or (n, 1), got "
                         f"shape {arr.shape}")
    return arr


def _vector(cupy, v, name):
    """v as a contiguous float64 1-D CuPy array."""
    return cupy.ascontiguousarray(vector_shape(cupy.asarray(v), name), dtype=cupy.float64)


def copy_values(values, target, nnz):
    """New values for a wrapped CuPy matrix whose values array is target, after CuPy's stream
    is synchronized (krill writes target too): a GPU vector of nnz entries is copied into
    target by CuPy (nothing to copy where it is target's memory itself, e.g. A.data changed
    in place) and True returned; False for host values (then uploaded by
    krill_mat_update_values)."""
    cupy = _cupy("A (a CuPy matrix)")
    with target.device:
        _sync(cupy)
        if not is_gpu_array(values):
            return False
        v = cupy.asarray(values)
        if v.dtype.kind == "c":
            raise ValueError("krill.Matrix.update_values: complex values are not supported "
                             "(float64 only)")
        if v.shape != (nnz,):
            raise ValueError(f"krill.Matrix.update_values: values of shape {v.shape} for a "
                             f"matrix of {nnz} stored entries")
        if not (v.dtype == target.dtype and pointer(v) == pointer(target)):
            # checked before the copy, as krill checks host values before uploading them: a
            # refused update leaves the matrix (and the caller's A) as it was
            bad = cupy.flatnonzero(~cupy.isfinite(v))
            if bad.size:
                k = int(bad[0])
                raise _make_error(_NUMERIC, _core.status_string(_NUMERIC),
                                  f"krill_mat_update_values: value {k} is {float(v[k])}: "
                                  "values must be finite")
            target[...] = v
            _sync(cupy)
    return True

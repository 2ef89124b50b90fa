"""krill.Matrix: a matrix built once in a storage format, solved many times."""

import numpy as np

from . import _core, _cupy
from ._solve import (SolveResult, _as_csr, _as_operator, _as_preconditioner, _as_vector,
                     _is_operator, _repro)


class Matrix:
    """A matrix built once on a krill context, for repeated solves.

    Matrix(A, format="auto", device=None, *, threads=0)

    A : a scipy.sparse matrix or array of any format (converted to canonical CSR once:
        sorted column indices, duplicates summed, float64), a dense 2-D array, a
        matrix-free operator (a LinearOperator or anything with shape and matvec: krill's
        shell matrix; format must then be "auto" or None), or a CuPy matrix on the GPU
        (cupyx.scipy.sparse, or a 2-D cupy array): a canonical float64 CSR with int32 or
        int64 indptr and int32 indices is used in place, without a copy; other CuPy
        matrices are converted once on the GPU by CuPy (a copy: other formats via .tocsr(),
        unsorted or duplicate indices summed, other dtypes cast). See doc/python.md, "CuPy".
    format : "auto" (krill chooses; .format_choice says why), None (= "csr") or a name of
        krill.formats_available(); a CuPy matrix is krill's "csr" ("auto" and None too).
    device : None ("cpu", or "cuda" for a CuPy A), "cpu", "cuda" or "auto" (as in
        krill.solve; "cpu" refuses a CuPy A). threads : OpenMP threads (0: OpenMP's default).

    The matrix keeps the preconditioners that solve(precond="name") built (one per name) and
    reuses them; update_values recomputes them from the new values (krill_pc_update_values:
    the pattern's analysis is kept).

    Attributes: shape, nnz, format (the format stored, e.g. "csr", also after "auto"),
    format_choice (why "auto" chose it, else None), nbytes (bytes of matrix data stored:
    values + indices, krill_format_stats.bytes), stats (krill_mat_stats as a dict, the
    fields of `krill formats --json`), device (the context), preconditioners (the names
    kept), indptr / indices (the CSR pattern whose order update_values' values follow;
    None for an operator; CuPy arrays for a CuPy A), build_alloc_stats (what krill
    allocated in the context's memory to build the matrix: {"allocations", "bytes"}; 0 and
    0 for a CuPy matrix wrapped without copies and without rows long enough for the CSR
    kernels' tables).

    A CuPy matrix is used in place: this Matrix keeps references to its arrays (they stay
    allocated), which must not be changed but through update_values. Its solves take CuPy
    or NumPy b and x0 and return x as a CuPy array.
    """

    def __init__(self, A, format="auto", device=None, *, threads=0, _operator_format=None):
        if format is not None and not isinstance(format, str):
            raise TypeError("krill: format must be a format name (krill.formats_available()), "
                            f"\"auto\" or None, got {type(format).__name__}")
        if device is not None and not isinstance(device, str):
            raise TypeError(f"krill: device must be a string, got {type(device).__name__}")
        self._gpu_values = None   # a CuPy matrix's values array, wrapped in place
        self._device_id = 0       # the GPU of a CUDA context (krill_ctx_opts.device_id)
        if _cupy.is_gpu_matrix(A):
            if format not in (None, "auto", "csr"):
                raise ValueError(f"krill: format={format!r}: a CuPy matrix is used in place "
                                 "as krill's \"csr\" format; pass \"csr\", \"auto\" or None "
                                 "(or A.get() for another format)")
            indptr, indices, data, n_rows, n_cols, self._device_id = _cupy.device_csr(A, device)
            self._core = _core.Matrix(indptr_ptr=_cupy.pointer(indptr),
                                      index_bytes=indptr.itemsize,
                                      indices_ptr=_cupy.pointer(indices),
                                      data_ptr=_cupy.pointer(data), n_rows=n_rows,
                                      n_cols=n_cols, nnz=data.shape[0],
                                      device_id=self._device_id, threads=int(threads))
            # the references that keep the wrapped arrays allocated as long as this Matrix
            self.indptr, self.indices, self._gpu_values = indptr, indices, data
            return
        device = "cpu" if device is None else device
        if _is_operator(A):   # a shell matrix: y = A.matvec(x) from the C callback
            matvec, n = _as_operator(A)
            if format == "auto" and not _operator_format:
                format = None   # nothing to choose: the operator is its own format
            # (krill.solve passes _operator_format=True: there format= must stay None)
            self.indptr = self.indices = None
            self._core = _core.Matrix(np.zeros(1, np.int64), np.zeros(0, np.int32),
                                      np.zeros(0, np.float64), n, n, format, device,
                                      int(threads), matvec)
        else:
            indptr, indices, data, n_rows, n_cols = _as_csr(A)
            self._core = _core.Matrix(indptr, indices, data, n_rows, n_cols, format, device,
                                      int(threads), None)
            self.indptr, self.indices = indptr, indices
            for arr in (indptr, indices):
                arr.setflags(write=False)

    # ---- properties --------------------------------------------------------------------
    @property
    def shape(self):
        return (self._core.rows, self._core.cols)

    @property
    def nnz(self):
        """Stored entries (0 for an operator)."""
        return self._core.nnz

    @property
    def format(self):
        return self._core.format

    @property
    def format_choice(self):
        return self._core.format_choice

    @property
    def device(self):
        return self._core.device

    @property
    def stats(self):
        return dict(self._core.stats())

    @property
    def nbytes(self):
        """Bytes of matrix data the format stores (values + indices; not the kept
        preconditioners, not the indptr/indices kept on the Python side)."""
        return self._core.stats()["bytes"]

    @property
    def preconditioners(self):
        return list(self._core.kept_preconditioners())

    @property
    def build_alloc_stats(self):
        """What krill allocated in the context's memory while building the matrix:
        {"allocations": count, "bytes": bytes} (krill_ctx_alloc_stats_get before and after
        the C call that made it)."""
        return dict(self._core.build_alloc_stats())

    def device_alloc_stats(self):
        """What krill has allocated in the context's memory (device memory on a GPU, host
        memory on the CPU) since the context was created: {"allocations": count, "bytes":
        bytes}, both cumulative (frees are not subtracted: two readings around a call say
        what it allocated). krill_ctx_alloc_stats_get."""
        return dict(self._core.alloc_stats())

    def release_cache(self):
        """Free the solver workspace (the Krylov vectors, in the context's memory: GPU
        memory on a GPU) that a solve keeps for the next one, which takes it back instead of
        allocating (krill_ctx_release_cache). The Matrix stays usable; its next solve
        allocates again."""
        self._core.release_cache()

    def __repr__(self):
        return (f"krill.Matrix(shape={self.shape}, nnz={self.nnz}, format={self.format!r}, "
                f"nbytes={self.nbytes})")

    # ---- solving -------------------------------------------------------------------------
    def solve(self, b, solver="auto", precond=None, rtol=1e-8, atol=0.0, maxiter=None,
              restart=None, repro=False, *, x0=None, callback=None, ortho=None, sstep=None):
        """Solve A x = b; returns a krill.SolveResult (the arguments and the result as
        krill.solve's). A named precond is built on first use and kept for the next solves
        (update_values refreshes it); a preconditioner of the caller's (an operator or a
        callable) is used for this solve only."""
        x, d = self._solve(b, x0, solver=solver, rtol=rtol, atol=atol, maxiter=maxiter,
                           restart=restart, precond=precond, repro=repro, callback=callback,
                           keep=True, ortho=ortho, sstep=sstep)
        return SolveResult(x, d)

    def _solve(self, b, x0, *, solver, rtol, atol, maxiter, restart, precond, repro,
               callback, keep, ortho=None, sstep=None):
        """The argument conversion of every solve (krill.solve, krill.sparse.linalg and
        Matrix.solve); returns (x, the C solve's result dict)."""
        n_rows, n_cols = self.shape
        if self._gpu_values is not None or _cupy.is_gpu_array(b) or _cupy.is_gpu_array(x0):
            # CuPy vectors on the GPU, wrapped by krill_vec_wrap without copies
            if not self._core.on_gpu:
                raise ValueError("krill: b or x0 is a GPU array and this Matrix is on the CPU "
                                 f"({self.device}); build it with device=\"cuda\" or pass "
                                 "NumPy arrays")
            b, x = _cupy.solve_vectors(b, x0, n_cols, self._device_id)
            vb, vx = (_cupy.pointer(b), b.shape[0]), (_cupy.pointer(x), x.shape[0])
        else:
            b = _as_vector(b, "b")
            x = np.zeros(n_cols, dtype=np.float64) if x0 is None else _as_vector(x0, "x0")
            vb, vx = b, x
        if not isinstance(solver, str):
            raise TypeError(f"krill: solver must be a string, got {type(solver).__name__}")
        if ortho is not None and not isinstance(ortho, str):
            raise TypeError(f"krill: ortho must be a string or None, got {type(ortho).__name__}")
        if sstep is not None and (isinstance(sstep, bool) or not isinstance(sstep, (int, np.integer))):
            raise TypeError(f"krill: sstep must be an integer or None, got {type(sstep).__name__}")
        precond, psolve = _as_preconditioner(precond, n_rows)
        for name, value in (("rtol", rtol), ("atol", atol)):
            if not np.isscalar(value) or not np.isreal(value):
                raise TypeError(f"krill: {name} must be a real number, got {value!r}")
        mode, slices = _repro(repro)
        if callback is not None and not callable(callback):
            raise TypeError("krill: callback must be callable or None")
        d = self._core.solve(vb, vx, solver, float(rtol), float(atol),
                             10000 if maxiter is None else int(maxiter),
                             30 if restart is None else int(restart), ortho,
                             0 if sstep is None else int(sstep), precond,
                             mode, slices,
                             callback, psolve, bool(keep))
        return x, d

    def update_values(self, data):
        """New values, same pattern (krill_mat_update_values), and every kept preconditioner
        recomputed (krill_pc_update_values).

        data : the nnz values in the order of the canonical CSR this Matrix was built from
            (self.indptr, self.indices: A.tocsr() with sorted indices and duplicates summed;
            for a CSR A that was already so, A.data's order), or a scipy.sparse matrix with
            exactly that pattern (converted the same way; its data is taken).

        For a CuPy matrix, data may also be a CuPy vector or CuPy sparse matrix: its values
        are copied by CuPy into the wrapped values array (nothing copied where data is that
        very array, e.g. A.data changed in place), else host values are uploaded into it.
        A CuPy A that was wrapped without a copy thus sees the new values too; one that was
        converted (another format, unsorted indices, float32) keeps its own."""
        if self.indptr is None:
            raise TypeError("krill.Matrix.update_values: A is an operator (a shell matrix): "
                            "change what its matvec computes instead")
        if _cupy.is_gpu_matrix(data) and self._gpu_values is not None:
            indptr, indices, data, n_rows, n_cols, _ = _cupy.device_csr(data, "cuda")
            self._check_pattern(indptr, indices, data.shape[0], n_rows, n_cols)
        if self._gpu_values is not None and _cupy.copy_values(data, self._gpu_values, self.nnz):
            self._core.update_values_in_place()
            return
        if _is_sparse(data):
            indptr, indices, values, n_rows, n_cols = _as_csr(data)
            self._check_pattern(indptr, indices, values.shape[0], n_rows, n_cols)
        elif _cupy.is_gpu_array(data) or _cupy.is_gpu_matrix(data):
            raise TypeError("krill.Matrix.update_values: data is on the GPU and this Matrix "
                            "was built from host arrays; pass NumPy values or a scipy.sparse "
                            "matrix")
        else:
            values = np.asarray(data)
            if np.iscomplexobj(values):
                raise ValueError("krill.Matrix.update_values: complex values are not "
                                 "supported (float64 only)")
            if values.ndim != 1:
                raise ValueError("krill.Matrix.update_values: data must be a 1-D array of nnz "
                                 f"values (or a sparse matrix), got shape {values.shape}")
            if values.shape[0] != self.nnz:
                raise ValueError(f"krill.Matrix.update_values: {values.shape[0]} values for "
                                 f"a matrix of {self.nnz} stored entries")
            values = np.ascontiguousarray(values, dtype=np.float64)
        self._core.update_values(values)

    def _check_pattern(self, indptr, indices, nnz, n_rows, n_cols):
        """The ValueError for a new matrix whose pattern is not this Matrix's (compared on
        the host: the arrays of either side may be CuPy's)."""
        def host(a):
            return a.get() if _cupy.is_gpu_array(a) else a
        if ((n_rows, n_cols) != self.shape or not np.array_equal(host(indptr), host(self.indptr))
                or not np.array_equal(host(indices), host(self.indices))):
            raise ValueError("krill.Matrix.update_values: the new matrix's pattern differs "
                             "from the one this Matrix was built from (shape "
                             f"{(n_rows, n_cols)}, {nnz} entries, against "
                             f"{self.shape}, {self.nnz}); build a new krill.Matrix")

    def matvec(self, x):
        """y = A x computed by krill in the stored format (krill_mat_spmv)."""
        x = _as_vector(x, "x")
        if x.shape[0] != self.shape[1]:
            raise ValueError(f"krill: x has {x.shape[0]} entries; A is {self.shape[0]} x "
                             f"{self.shape[1]}")
        y = np.empty(self.shape[0], dtype=np.float64)
        self._core.spmv(x, y)
        return y


def _is_sparse(obj):
    import scipy.sparse as sp
    return sp.issparse(obj)

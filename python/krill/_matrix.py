"""krill.Matrix: a matrix built once in a storage format, solved many times."""

import numpy as np

from . import _core
from ._solve import (SolveResult, _as_csr, _as_operator, _as_preconditioner, _as_vector,
                     _is_operator, _repro)


class Matrix:
    """A matrix built once on a krill context, for repeated solves.

    Matrix(A, format="auto", device="cpu", *, threads=0)

    A : a scipy.sparse matrix or array of any format (converted to canonical CSR once:
        sorted column indices, duplicates summed, float64), a dense 2-D array, or a
        matrix-free operator (a LinearOperator or anything with shape and matvec: krill's
        shell matrix; format must then be "auto" or None).
    format : "auto" (krill chooses; .format_choice says why), None (= "csr") or a name of
        krill.formats_available().
    device : "cpu" ("cuda" and "auto" as in krill.solve). threads : OpenMP threads (0:
        OpenMP's default).

    The matrix keeps the preconditioners that solve(precond="name") built (one per name) and
    reuses them; update_values recomputes them from the new values (krill_pc_update_values:
    the pattern's analysis is kept).

    Attributes: shape, nnz, format (the format stored, e.g. "csr", also after "auto"),
    format_choice (why "auto" chose it, else None), nbytes (bytes of matrix data stored:
    values + indices, krill_format_stats.bytes), stats (krill_mat_stats as a dict, the
    fields of `krill formats --json`), device (the context), preconditioners (the names
    kept), indptr / indices (the CSR pattern whose order update_values' values follow;
    None for an operator).
    """

    def __init__(self, A, format="auto", device="cpu", *, threads=0, _operator_format=None):
        if format is not None and not isinstance(format, str):
            raise TypeError("krill: format must be a format name (krill.formats_available()), "
                            f"\"auto\" or None, got {type(format).__name__}")
        if not isinstance(device, str):
            raise TypeError(f"krill: device must be a string, got {type(device).__name__}")
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

    def __repr__(self):
        return (f"krill.Matrix(shape={self.shape}, nnz={self.nnz}, format={self.format!r}, "
                f"nbytes={self.nbytes})")

    # ---- solving -------------------------------------------------------------------------
    def solve(self, b, solver="auto", precond=None, rtol=1e-8, atol=0.0, maxiter=None,
              restart=None, repro=False, *, x0=None, callback=None):
        """Solve A x = b; returns a krill.SolveResult (the arguments and the result as
        krill.solve's). A named precond is built on first use and kept for the next solves
        (update_values refreshes it); a preconditioner of the caller's (an operator or a
        callable) is used for this solve only."""
        x, d = self._solve(b, x0, solver=solver, rtol=rtol, atol=atol, maxiter=maxiter,
                           restart=restart, precond=precond, repro=repro, callback=callback,
                           keep=True)
        return SolveResult(x, d)

    def _solve(self, b, x0, *, solver, rtol, atol, maxiter, restart, precond, repro,
               callback, keep):
        """The argument conversion of every solve (krill.solve, krill.sparse.linalg and
        Matrix.solve); returns (x, the C solve's result dict)."""
        n_rows, n_cols = self.shape
        b = _as_vector(b, "b")
        x = np.zeros(n_cols, dtype=np.float64) if x0 is None else _as_vector(x0, "x0")
        if not isinstance(solver, str):
            raise TypeError(f"krill: solver must be a string, got {type(solver).__name__}")
        precond, psolve = _as_preconditioner(precond, n_rows)
        for name, value in (("rtol", rtol), ("atol", atol)):
            if not np.isscalar(value) or not np.isreal(value):
                raise TypeError(f"krill: {name} must be a real number, got {value!r}")
        mode, slices = _repro(repro)
        if callback is not None and not callable(callback):
            raise TypeError("krill: callback must be callable or None")
        d = self._core.solve(b, x, solver, float(rtol), float(atol),
                             10000 if maxiter is None else int(maxiter),
                             30 if restart is None else int(restart), precond, mode, slices,
                             callback, psolve, bool(keep))
        return x, d

    def update_values(self, data):
        """New values, same pattern (krill_mat_update_values), and every kept preconditioner
        recomputed (krill_pc_update_values).

        data : the nnz values in the order of the canonical CSR this Matrix was built from
            (self.indptr, self.indices: A.tocsr() with sorted indices and duplicates summed;
            for a CSR A that was already so, A.data's order), or a scipy.sparse matrix with
            exactly that pattern (converted the same way; its data is taken)."""
        if self.indptr is None:
            raise TypeError("krill.Matrix.update_values: A is an operator (a shell matrix): "
                            "change what its matvec computes instead")
        if _is_sparse(data):
            indptr, indices, values, n_rows, n_cols = _as_csr(data)
            if ((n_rows, n_cols) != self.shape or not np.array_equal(indptr, self.indptr)
                    or not np.array_equal(indices, self.indices)):
                raise ValueError("krill.Matrix.update_values: the new matrix's pattern differs "
                                 "from the one this Matrix was built from (shape "
                                 f"{(n_rows, n_cols)}, {values.shape[0]} entries, against "
                                 f"{self.shape}, {self.nnz}); build a new krill.Matrix")
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

// krill._core's shared part: the error type a failed C call becomes, owners of the C
// objects, the CSR wrapper and the device names (krill_ext.cpp defines them; ext_apsp.cpp
// uses them), the Python callbacks from C (ext_callbacks.cpp) and the GPU arrays of CuPy
// (ext_device.cpp).
#ifndef KRILL_PY_EXT_COMMON_H
#define KRILL_PY_EXT_COMMON_H

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>   // std::string <-> str, in every file that converts

#include <chrono>
#include <cstdint>
#include <string>

#include "krill/csr.h"
#include "krill/ctx.h"
#include "krill/mat.h"
#include "krill/precond.h"
#include "krill/solver.h"
#include "krill/status.h"
#include "krill/vec.h"

namespace nb = nanobind;

namespace krill_py {

// A failed C call: the status and the C library's message, turned into a krill._errors
// exception by the translator registered below.
struct krill_failure {
    krill_status status;
    std::string message;
};

// krill_last_error()'s message (or "call: status" when it has none), which is then cleared.
std::string take_error_message(krill_status st, const char *call);

// Throws krill_failure with krill_last_error()'s message unless st is KRILL_OK.
void check(krill_status st, const char *call);

// Owners of the C objects (released in reverse order of creation).
struct ctx_holder {
    krill_ctx *p = nullptr;
    ~ctx_holder() { krill_ctx_destroy(&p); }
};
struct mat_holder {
    krill_mat *p = nullptr;
    ~mat_holder() { krill_mat_destroy(&p); }
};
struct pc_holder {
    krill_pc *p = nullptr;
    ~pc_holder() { krill_pc_destroy(&p); }
};
struct vec_holder {
    krill_vec *p = nullptr;
    ~vec_holder() { krill_vec_destroy(&p); }
};
struct info_holder {
    krill_solve_info info{};
    ~info_holder() { krill_solve_info_free(&info); }
};

template <typename T>
using host_array = nb::ndarray<T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// "cpu", "cuda" (or "gpu"), "auto"; anything else is KRILL_ERR_ARG.
krill_device device_from_name(const std::string &name);

// CSR arrays checked and wrapped without a copy (krill_ext.cpp says what is checked).
krill_csr wrap_csr(const host_array<const int64_t> &indptr, const host_array<const int32_t> &indices,
                   const host_array<const double> &data, int64_t n_rows, int64_t n_cols,
                   const char *who);

// The monitor: calls the Python callback (iteration, residual norm) with the GIL taken, and
// checks for a pending signal (Ctrl-C) at most every 50 ms, so that an interrupt stops the
// solve cleanly. A Python exception (from the callback or the signal handler) stops the
// solve; it is kept here and raised once krill_solve has returned.
struct monitor_state {
    PyObject *callback = nullptr;    // borrowed; nullptr: signals only
    std::chrono::steady_clock::time_point next_check{};
    PyObject *err_type = nullptr, *err_value = nullptr, *err_tb = nullptr;
    bool failed = false;
    const char *origin = nullptr;    // "A.matvec" or "M" when an operator raised
};

// A Python operator behind a shell callback (the matrix's matvec or the preconditioner's
// solve): fn(x) with x a read-only float64 numpy array over krill's vector (no copy, valid
// only during the call); fn returns a C-contiguous float64 array of shape (n,) (the Python
// side, krill/_solve.py, checks the shape and converts), which is copied into y. A Python
// exception is kept in the shared monitor_state (the first one only) and stops the solve:
// the callback returns KRILL_ERR_ARG, krill_solve returns, and solve() raises the exception.
struct py_operator {
    PyObject *fn = nullptr;          // borrowed: the caller's frame keeps it alive
    monitor_state *state = nullptr;
    const char *what = "";           // "A.matvec" or "M", for the exception's note
};

int monitor_fn(int iteration, double residual_norm, void *user);   // krill_solver_opts.monitor
krill_status py_apply(void *user, const double *x, double *y, int64_t n);   // krill_shell_apply
// The pending exception (an operator's) gets a note naming origin and solver (PEP 678).
void add_origin_note(const char *origin, const char *solver);

// b and x of a solve. Host: numpy arrays, uploaded into vectors krill makes and x downloaded
// after. On device: pointers into CuPy arrays on the context's GPU, wrapped with
// krill_vec_wrap (nothing copied, nothing allocated; krill checks where they live).
struct solve_vectors {
    const double *b = nullptr;
    double *x = nullptr;
    int64_t rows = 0, cols = 0;
    bool on_device = false;
};

// b and x as krill/_matrix.py passes them: float64 contiguous numpy arrays, or
// (device pointer, length) tuples of CuPy arrays (krill/_cupy.py checked their types).
solve_vectors solve_vectors_from(nb::handle b, nb::handle x);

// krill_ctx_alloc_stats as a dict {"allocations": ..., "bytes": ...}.
nb::dict alloc_stats_dict(const krill_ctx_alloc_stats &s);

// krill._core.apsp (ext_apsp.cpp).
nb::dict apsp(host_array<const int64_t> indptr, host_array<const int32_t> indices,
              host_array<const double> data, int64_t n, const std::string &method,
              const std::string &weight, bool paths, const std::string &device, int threads,
              nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu> dist,
              nb::ndarray<int32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> pred);

}  // namespace krill_py

#endif

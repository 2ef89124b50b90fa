// krill._core's shared part: the error type a failed C call becomes, owners of the C
// objects, the CSR wrapper and the device names (krill_ext.cpp defines them; ext_apsp.cpp
// uses them).
#ifndef KRILL_PY_EXT_COMMON_H
#define KRILL_PY_EXT_COMMON_H

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>   // std::string <-> str, in every file that converts

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

// krill._core.apsp (ext_apsp.cpp).
nb::dict apsp(host_array<const int64_t> indptr, host_array<const int32_t> indices,
              host_array<const double> data, int64_t n, const std::string &method,
              const std::string &weight, bool paths, const std::string &device, int threads,
              nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu> dist,
              nb::ndarray<int32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> pred);

}  // namespace krill_py

#endif

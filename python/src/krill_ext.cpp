// krill._core: the thin nanobind layer over krill's C API (doc/python.md).
//
// It converts arguments, calls the C API and turns a failing krill_status into a Python
// exception (krill._errors) carrying krill_last_error()'s message. No numerical code lives
// here: the Python side (krill/_solve.py) prepares CSR arrays with SciPy, this file wraps
// them in a krill_csr without copying and hands them to krill_mat_create / krill_pc_create /
// krill_solve with the GIL released. A LinearOperator A or a Python preconditioner M goes
// through the shell matrix / shell preconditioner (krill_mat_create_shell,
// krill_pc_create_shell): their C callback takes the GIL back, shows krill's vector to
// Python as a numpy array without a copy, and copies the result back (ext_callbacks.cpp).
// A CuPy matrix's device arrays are wrapped by krill_mat_create_device_csr and CuPy
// vectors by krill_vec_wrap, without copies (krill/_cupy.py, ext_device.cpp).
#include "ext_common.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/optional.h>

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "krill/apsp.h"
#include "krill/ctx.h"
#include "krill/csr.h"
#include "krill/mat.h"
#include "krill/precond.h"
#include "krill/solver.h"
#include "krill/status.h"
#include "krill/vec.h"

using namespace nb::literals;

namespace krill_py {

std::string take_error_message(krill_status st, const char *call)
{
    const char *msg = krill_last_error();
    std::string text = msg && *msg ? msg : std::string(call) + ": " + krill_status_string(st);
    krill_clear_error();
    return text;
}

void check(krill_status st, const char *call)
{
    if (st != KRILL_OK) throw krill_failure{st, take_error_message(st, call)};
}

krill_device device_from_name(const std::string &name)
{
    if (name == "cpu") return KRILL_DEVICE_CPU;
    if (name == "cuda" || name == "gpu") return KRILL_DEVICE_CUDA;
    if (name == "auto") return KRILL_DEVICE_AUTO;
    throw krill_failure{KRILL_ERR_ARG, "krill.solve: device \"" + name +
                                           "\" is not one of \"cpu\", \"cuda\" (or \"gpu\"), \"auto\""};
}

// The sign of A's diagonal: +1 every a_ii present and positive, -1 every one negative, else 0
// (the rule of `krill solve`'s solver choice, apps/solve_problem.c).
int diagonal_sign(const krill_csr &a)
{
    int64_t pos = 0, neg = 0;
    for (int32_t i = 0; i < a.n_rows; i++) {
        double d = 0.0;
        for (int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; p++)
            if (a.col[p] == i) d = a.val[p];
        pos += d > 0.0;
        neg += d < 0.0;
    }
    return pos == a.n_rows ? 1 : neg == a.n_rows ? -1 : 0;
}

struct solver_choice {
    krill_solver_type type;
    const char *name;
    const char *why;
};

// GMRES / FGMRES orthogonalization by name; None is krill's default (krill_solver_opts_default)
krill_ortho choose_ortho(const std::optional<std::string> &name, krill_ortho default_ortho)
{
    if (!name) return default_ortho;
    if (*name == "dcgs2") return KRILL_ORTHO_DCGS2;
    if (*name == "cgs2") return KRILL_ORTHO_CGS2;
    if (*name == "mgs") return KRILL_ORTHO_MGS;
    throw krill_failure{KRILL_ERR_ARG, "krill.solve: ortho \"" + *name + "\" is not one of "
                                       "dcgs2, cgs2, mgs"};
}

const char *ortho_name(krill_ortho o)
{
    return o == KRILL_ORTHO_DCGS2 ? "dcgs2" : o == KRILL_ORTHO_CGS2 ? "cgs2" : "mgs";
}

solver_choice choose_solver(const std::string &name, const krill_csr *a)
{
    if (name == "gmres") return {KRILL_SOLVER_GMRES, "gmres", "as asked"};
    if (name == "fgmres") return {KRILL_SOLVER_FGMRES, "fgmres", "as asked"};
    if (name == "cg") return {KRILL_SOLVER_CG, "cg", "as asked"};
    if (name == "bicgstab") return {KRILL_SOLVER_BICGSTAB, "bicgstab", "as asked"};
    if (name == "minres") return {KRILL_SOLVER_MINRES, "minres", "as asked"};
    if (name == "pipecg") return {KRILL_SOLVER_PIPECG, "pipecg", "as asked"};
    if (name != "auto")
        throw krill_failure{KRILL_ERR_ARG, "krill.solve: solver \"" + name + "\" is not one of "
                                           "auto, gmres, fgmres, cg, bicgstab, minres, pipecg"};
    if (!a)
        return {KRILL_SOLVER_GMRES, "gmres", "A is an operator (its symmetry is unknown); pass "
                                             "solver=\"cg\" or \"minres\" for a symmetric one"};
    if (a->n_rows != a->n_cols || !krill_csr_is_symmetric(a))
        return {KRILL_SOLVER_GMRES, "gmres", "A is not symmetric"};
    int sign = diagonal_sign(*a);
    if (sign == 0)
        return {KRILL_SOLVER_MINRES, "minres", "A is symmetric with diagonal entries of both "
                                               "signs or zero, so it is indefinite: MINRES"};
    if (sign < 0)
        return {KRILL_SOLVER_CG, "cg", "A is symmetric with a negative diagonal; if it is not "
                                       "negative definite use solver=\"minres\""};
    return {KRILL_SOLVER_CG, "cg", "A is symmetric with a positive diagonal; if it is not "
                                   "positive definite use solver=\"minres\""};
}

// A square or rectangular CSR given as arrays (indptr int64, indices int32 sorted and unique
// within each row, data float64: krill/_solve.py's _as_csr makes them so), checked and
// wrapped in a krill_csr in place, without a copy. The one place where the C++ side checks
// CSR arrays (Matrix and apsp use it). `who` starts the messages ("krill.Matrix", ...).
krill_csr wrap_csr(const host_array<const int64_t> &indptr, const host_array<const int32_t> &indices,
                   const host_array<const double> &data, int64_t n_rows, int64_t n_cols,
                   const char *who)
{
    if (n_rows < 0 || n_rows > INT32_MAX || n_cols < 0 || n_cols > INT32_MAX)
        throw krill_failure{KRILL_ERR_UNSUPPORTED, std::string(who) + ": the matrix is " +
                                                       std::to_string(n_rows) + " x " +
                                                       std::to_string(n_cols) +
                                                       "; krill's CSR has at most 2^31 - 1 rows and columns"};
    if ((int64_t)indptr.shape(0) != n_rows + 1 || indices.shape(0) != data.shape(0))
        throw krill_failure{KRILL_ERR_ARG, std::string(who) + ": inconsistent CSR arrays (indptr has " +
                                               std::to_string(indptr.shape(0)) + " entries for " +
                                               std::to_string(n_rows) + " rows, indices " +
                                               std::to_string(indices.shape(0)) + ", data " +
                                               std::to_string(data.shape(0)) + ")"};
    krill_csr csr{};
    csr.n_rows = (int32_t)n_rows;
    csr.n_cols = (int32_t)n_cols;
    csr.nnz = (int64_t)data.shape(0);
    csr.row_ptr = const_cast<int64_t *>(indptr.data());
    csr.col = const_cast<int32_t *>(indices.data());
    csr.val = const_cast<double *>(data.data());
    if (csr.row_ptr[0] != 0 || csr.row_ptr[n_rows] != csr.nnz)
        throw krill_failure{KRILL_ERR_ARG, std::string(who) + ": indptr must start at 0 and end "
                                                              "at nnz"};
    return csr;
}

// krill._core.Matrix: one context and one krill_mat built once (from CSR arrays in a storage
// format, or a shell matrix over a Python matvec), solved many times (krill.Matrix and, for
// one solve, krill.solve: krill/_solve.py). It keeps the preconditioners built by name
// (krill_pc_create once per name), and update_values refreshes them (krill_pc_update_values)
// after krill_mat_update_values. Members are destroyed in reverse order: the
// preconditioners before the matrix, the matrix before the context.
class Matrix {
  public:
    Matrix(const Matrix &) = delete;   // owns C objects: never copied
    Matrix &operator=(const Matrix &) = delete;
    Matrix(host_array<const int64_t> indptr, host_array<const int32_t> indices,
           host_array<const double> data, int64_t n_rows, int64_t n_cols,
           std::optional<std::string> format, const std::string &device, int threads,
           nb::object matvec)
    {
        shell_ = !matvec.is_none();
        if (shell_ && format)
            throw krill_failure{KRILL_ERR_UNSUPPORTED, "krill: format=\"" + *format +
                                                           "\": A is an operator (a shell matrix, "
                                                           "krill_mat_create_shell) and has no "
                                                           "entries to store in a format"};
        if (shell_ && n_rows != n_cols)
            throw krill_failure{KRILL_ERR_UNSUPPORTED, "krill: the operator is " +
                                                           std::to_string(n_rows) + " x " +
                                                           std::to_string(n_cols) +
                                                           "; krill solves square systems"};
        krill_csr csr{};
        if (!shell_) csr = wrap_csr(indptr, indices, data, n_rows, n_cols, "krill.Matrix");
        krill_ctx_opts copts = KRILL_CTX_OPTS_INIT;
        copts.device = device_from_name(device);
        copts.threads = threads;
        if (shell_) {
            // A Python operator reads and writes numpy arrays: host memory. On a GPU context
            // the shell's vectors are device pointers (CuPy operators: a later phase).
            if (copts.device == KRILL_DEVICE_CUDA)
                throw krill_failure{KRILL_ERR_UNSUPPORTED, "krill: device=\"" + device +
                                                               "\": a Python operator (A or M) "
                                                               "runs on the CPU only in this "
                                                               "version; use device=\"cpu\""};
            copts.device = KRILL_DEVICE_CPU;   // "auto" too
            matvec_ = matvec;                  // kept alive as long as the shell matrix
            op_a_.fn = matvec_.ptr();
            op_a_.what = "A.matvec";
            n_ = n_rows;
        } else {
            // "auto": the solver choice needs the values; made now from the arrays at hand
            // (after update_values, from krill_mat_to_csr when asked again).
            auto_choice_ = choose_solver("auto", &csr);
            have_auto_choice_ = true;
        }
        build(copts, shell_ ? "krill_mat_create_shell" : "krill_mat_create",
              [&](krill_ctx *ctx, krill_mat **mat) {
                  return shell_ ? krill_mat_create_shell(ctx, n_rows, py_apply, &op_a_, mat)
                                : krill_mat_create(ctx, &csr, format ? format->c_str() : nullptr,
                                                   mat);
              });
    }

    // A CSR already in the memory of GPU device_id (a CuPy matrix's arrays: krill/_cupy.py
    // checked their types), wrapped by krill_mat_create_device_csr without a copy. The
    // Python Matrix keeps the arrays alive; the "auto" solver choice reads the values back
    // when first asked (krill_mat_to_csr).
    Matrix(uintptr_t indptr, int index_bytes, uintptr_t indices, uintptr_t data, int64_t n_rows,
           int64_t n_cols, int64_t nnz, int device_id, int threads)
    {
        krill_ctx_opts copts = KRILL_CTX_OPTS_INIT;
        copts.device = KRILL_DEVICE_CUDA;
        copts.device_id = device_id;
        copts.threads = threads;
        device_csr_ = true;
        build(copts, "krill_mat_create_device_csr", [&](krill_ctx *ctx, krill_mat **mat) {
            return krill_mat_create_device_csr(ctx, n_rows, n_cols, nnz, (const void *)indptr,
                                               index_bytes, (const int32_t *)indices,
                                               (double *)data, mat);
        });
    }

    // Solve A x = b: x holds the initial guess and receives the solution in place. b and x
    // are numpy arrays, or on a GPU context CuPy's (solve_vectors_from: nothing copied, no
    // vector allocated). precond is a name (kept and reused when keep_pc) or None; psolve,
    // when not None, a Python preconditioner z = psolve(r) (a shell preconditioner for this
    // solve). Returns a dict with everything krill_solve_info says.
    nb::dict solve(nb::handle b, nb::handle x, const std::string &solver, double rtol,
                   double atol, int64_t maxit, int64_t restart,
                   const std::optional<std::string> &ortho, int64_t sstep,
                   std::optional<std::string> precond, int repro_mode, int repro_slices,
                   nb::object callback, nb::object psolve, bool keep_pc)
    {
        // b and x as given: krill_solve checks their lengths against A (its message names them)
        const solve_vectors v = solve_vectors_from(b, x);
        if (maxit < 0 || maxit > INT32_MAX - 1)
            throw krill_failure{KRILL_ERR_ARG, "krill: maxiter = " + std::to_string(maxit) +
                                                   "; it must be in 0..2^31 - 2"};
        if (sstep < 0 || sstep > KRILL_SSTEP_MAX)   // krill_solve's own words for an int
            throw krill_failure{KRILL_ERR_ARG, "krill: sstep = " + std::to_string(sstep) +
                                                   "; it must be 0 or 1 (GMRES) or 2 .. " +
                                                   std::to_string(KRILL_SSTEP_MAX)};
        if (restart < 1 || restart > INT32_MAX)
            throw krill_failure{KRILL_ERR_ARG, "krill: restart = " + std::to_string(restart) +
                                                   "; it must be >= 1"};
        // s-step GMRES is GMRES's: "auto" then means GMRES, as `krill solve --sstep` does
        solver_choice choice = solver == "auto" && sstep > 1
                                   ? solver_choice{KRILL_SOLVER_GMRES, "gmres",
                                                   "sstep asks for s-step GMRES"}
                               : solver == "auto" ? auto_solver()
                                                  : choose_solver(solver, nullptr);
        krill_solver_opts defaults;
        krill_solver_opts_default(&defaults);
        const krill_ortho ortho_choice = choose_ortho(ortho, defaults.ortho);
        const bool on_gpu = krill_ctx_device(ctx_.p) == KRILL_DEVICE_CUDA;
        if (!psolve.is_none() && on_gpu)   // py_apply shows krill's vectors as numpy arrays
            throw krill_failure{KRILL_ERR_UNSUPPORTED, "krill: a Python preconditioner (M) runs "
                                                       "on the CPU only in this version; this "
                                                       "matrix is on the GPU"};
        busy_guard guard(this);

        monitor_state mon;
        mon.callback = callback.is_none() ? nullptr : callback.ptr();
        op_a_.state = &mon;   // the shells' callbacks share mon's exception slot
        py_operator op_m;
        op_m.fn = psolve.is_none() ? nullptr : psolve.ptr();
        op_m.state = &mon;
        op_m.what = "M";
        std::string pc_name = op_m.fn ? std::string("shell") : precond ? *precond : "none";
        const bool named_pc = !op_m.fn && pc_name != "none";
        krill_pc *found = nullptr;
        if (named_pc && pcs_.count(pc_name)) found = pcs_[pc_name]->p;

        krill_solver_opts opts;
        krill_solver_opts_default(&opts);
        opts.solver = choice.type;
        opts.rtol = rtol;
        opts.atol = atol;
        opts.maxit = (int)maxit;
        opts.restart = (int)restart;
        opts.ortho = ortho_choice;
        opts.sstep = (int)sstep;   // krill_solve checks the rest (solver, restart)

        pc_holder made;   // a preconditioner built for this solve (kept below when asked)
        vec_holder vb, vx;
        info_holder info;
        krill_status st = KRILL_OK;
        const char *failed_call = "";
        {
            nb::gil_scoped_release release;
            do {
                failed_call = "krill_ctx_set_repro";
                if ((st = krill_ctx_set_repro(ctx_.p, (krill_repro_mode)repro_mode,
                                              repro_slices)) != KRILL_OK)
                    break;
                if (op_m.fn) {
                    failed_call = "krill_pc_create_shell";
                    if ((st = krill_pc_create_shell(ctx_.p, krill_mat_rows(mat_.p), py_apply, &op_m, &made.p)) !=
                        KRILL_OK)
                        break;
                } else if (named_pc && !found) {
                    failed_call = "krill_pc_create";
                    if ((st = krill_pc_create(mat_.p, pc_name.c_str(), &made.p)) != KRILL_OK) break;
                }
                if (v.on_device) {   // krill_solve reads b only: the const_cast is safe
                    failed_call = "krill_vec_wrap";
                    double *b_data = const_cast<double *>(v.b);
                    if ((st = krill_vec_wrap(ctx_.p, v.rows, b_data, &vb.p)) != KRILL_OK) break;
                    if ((st = krill_vec_wrap(ctx_.p, v.cols, v.x, &vx.p)) != KRILL_OK) break;
                } else {
                    failed_call = "krill_vec_create";
                    if ((st = krill_vec_create(ctx_.p, v.rows, &vb.p)) != KRILL_OK) break;
                    if ((st = krill_vec_create(ctx_.p, v.cols, &vx.p)) != KRILL_OK) break;
                    failed_call = "krill_vec_upload";
                    if ((st = krill_vec_upload(vb.p, v.b)) != KRILL_OK) break;
                    if ((st = krill_vec_upload(vx.p, v.x)) != KRILL_OK) break;
                }
                // The monitor: always on the CPU (for Ctrl-C); on the GPU only with a
                // callback, since a monitor keeps CG's host from running ahead of the device.
                if (mon.callback || !on_gpu) {
                    opts.monitor = monitor_fn;
                    opts.monitor_data = &mon;
                }
                failed_call = "krill_solve";
                st = krill_solve(mat_.p, found ? found : made.p, vb.p, vx.p, &opts, &info.info);
                if (st != KRILL_OK || v.on_device) break;
                failed_call = "krill_vec_download";
                st = krill_vec_download(vx.p, v.x);
            } while (0);
            // The caller's x is written on krill's stream: done before it is handed back
            // (or freed, after a failure).
            if (v.on_device) {
                krill_status synced = krill_ctx_sync(ctx_.p);
                if (st == KRILL_OK) failed_call = "krill_ctx_sync", st = synced;
            }
        }
        op_a_.state = nullptr;
        if (mon.failed) {   // a Python exception from a callback, an operator or a signal
            PyErr_Restore(mon.err_type, mon.err_value, mon.err_tb);
            if (mon.origin) add_origin_note(mon.origin, choice.name);
            throw nb::python_error();
        }
        check(st, failed_call);
        krill_pc *used = found ? found : made.p;
        std::string pc_describe = used ? krill_pc_describe(used) : krill_pc_describe(nullptr);
        if (named_pc && !found && keep_pc) {   // reused by the next solve with this name
            pcs_[pc_name] = std::make_unique<pc_holder>();
            std::swap(pcs_[pc_name]->p, made.p);
        }

        const krill_solve_info &in = info.info;
        nb::dict times;
        times["setup"] = in.times.setup;
        times["spmv"] = in.times.spmv;
        times["precond"] = in.times.precond;
        times["ortho"] = in.times.ortho;
        times["other"] = in.times.other;
        times["comm"] = in.times.comm;   // inside MPI (0 without a communicator)
        times["halo"] = in.times.halo;   // halo exchanges in flight (distributed SpMVs)
        times["halo_hidden"] = in.times.halo_hidden;   // of them, behind the local product
        times["total"] = in.times.total;

        nb::dict out;
        out["reason_code"] = (int)in.reason;
        out["reason"] = std::string(krill_reason_string(in.reason));
        out["iterations"] = in.iterations;
        out["relres"] = in.relres;
        out["resnorm"] = in.resnorm;
        out["bnorm"] = in.bnorm;
        out["history"] = nb::bytes(reinterpret_cast<const char *>(in.history),
                                   sizeof(double) * (size_t)(in.history ? in.history_len : 0));
        out["times"] = times;
        out["solver"] = std::string(choice.name);
        out["solver_why"] = std::string(choice.why);
        if (opts.solver == KRILL_SOLVER_GMRES || opts.solver == KRILL_SOLVER_FGMRES)
            out["ortho"] = std::string(ortho_name(opts.ortho));
        else
            out["ortho"] = nb::none();
        if (opts.sstep > 1)   // s-step GMRES: its block; ortho above is then not used
            out["sstep"] = opts.sstep;
        else
            out["sstep"] = nb::none();
        out["format"] = format();
        out["format_choice"] = format_choice();
        out["precond"] = pc_name == "none" ? std::string("none") : pc_describe;
        out["precond_name"] = pc_name;
        out["device"] = device();
        return out;
    }

    // New values in the order of the CSR the matrix was built from (krill_mat_update_values),
    // then every kept preconditioner recomputed from them (krill_pc_update_values). A
    // preconditioner whose update fails (e.g. a zero pivot now) is dropped, so that the next
    // solve builds it again and reports the failure itself, and the error is raised. On a
    // wrapped device CSR the host values are uploaded into the caller's array.
    void update_values(host_array<const double> data)
    {
        if (shell_)
            throw krill_failure{KRILL_ERR_UNSUPPORTED, "krill.Matrix.update_values: A is an "
                                                       "operator (a shell matrix): change what "
                                                       "its matvec computes instead"};
        if ((int64_t)data.shape(0) != krill_mat_nnz(mat_.p))
            throw krill_failure{KRILL_ERR_ARG, "krill.Matrix.update_values: " +
                                                   std::to_string(data.shape(0)) + " values for a "
                                                   "matrix of " +
                                                   std::to_string(krill_mat_nnz(mat_.p)) +
                                                   " stored entries"};
        refresh(data.data());
    }

    // The wrapped device CSR's values array was changed in place (krill/_cupy.py copied the
    // new values into it): krill_mat_update_values(mat, NULL), then as update_values.
    void update_values_in_place()
    {
        if (!device_csr_)
            throw krill_failure{KRILL_ERR_UNSUPPORTED, "krill.Matrix.update_values: values in "
                                                       "place only for a wrapped CuPy matrix"};
        refresh(nullptr);
    }

    // y = A x (krill_mat_spmv), x and y numpy arrays.
    void spmv(host_array<const double> x, host_array<double> y)
    {
        refuse_shell("spmv");
        if ((int64_t)x.shape(0) != cols() || (int64_t)y.shape(0) != rows())
            throw krill_failure{KRILL_ERR_ARG, "krill.Matrix.spmv: x or y of the wrong length"};
        busy_guard guard(this);
        vec_holder vx, vy;
        krill_status st;
        {
            nb::gil_scoped_release release;
            st = krill_vec_create(ctx_.p, (int64_t)x.shape(0), &vx.p);
            if (st == KRILL_OK) st = krill_vec_create(ctx_.p, (int64_t)y.shape(0), &vy.p);
            if (st == KRILL_OK) st = krill_vec_upload(vx.p, x.data());
            if (st == KRILL_OK) st = krill_mat_spmv(mat_.p, 1.0, vx.p, 0.0, vy.p);
            if (st == KRILL_OK) st = krill_vec_download(vy.p, y.data());
        }
        check(st, "krill_mat_spmv");
    }
    // The median of `reps` timed SpMVs after `warmup` (krill_mat_time_spmv), seconds.
    double time_spmv(int warmup, int reps)
    {
        refuse_shell("time_spmv");
        busy_guard guard(this);
        double seconds = 0.0;
        krill_status st;
        {
            nb::gil_scoped_release release;
            st = krill_mat_time_spmv(mat_.p, warmup, reps, &seconds);
        }
        check(st, "krill_mat_time_spmv");
        return seconds;
    }

    // krill_mat_stats, with the field names of `krill formats --json`'s "stats".
    nb::dict stats() const
    {
        krill_format_stats s{};
        krill_mat_stats(mat_.p, &s);
        nb::dict d;
        d["N"] = s.n_rows;
        d["n_cols"] = s.n_cols;
        d["Nz"] = s.nnz;
        d["K"] = s.max_row_nnz;
        d["Kv"] = s.kv;
        d["Kc"] = s.kc;
        d["N_val"] = s.n_val;
        d["N_col"] = s.n_col;
        d["N_non"] = s.n_non;
        d["mean_row_nnz"] = s.mean_row_nnz;
        d["empty_rows"] = s.empty_rows;
        d["bytes"] = (int64_t)s.bytes;
        d["variant"] = std::string(s.variant);
        return d;
    }

    std::string format() const { return krill_mat_format(mat_.p); }
    nb::object format_choice() const
    {
        const char *why = krill_mat_choice(mat_.p);
        return why ? nb::object(nb::str(why)) : nb::none();
    }
    std::string device() const { return krill_ctx_describe(ctx_.p); }
    int64_t rows() const { return krill_mat_rows(mat_.p); }
    int64_t cols() const { return krill_mat_cols(mat_.p); }
    int64_t nnz() const { return krill_mat_nnz(mat_.p); }
    double build_seconds() const { return build_seconds_; }
    bool on_gpu() const { return krill_ctx_device(ctx_.p) == KRILL_DEVICE_CUDA; }
    // What krill allocated in the context's memory: since the context was made, or while
    // the matrix was built (the difference of two krill_ctx_alloc_stats_get).
    nb::dict alloc_stats() const
    {
        krill_ctx_alloc_stats s{};
        krill_ctx_alloc_stats_get(ctx_.p, &s);
        return alloc_stats_dict(s);
    }
    nb::dict build_alloc_stats() const { return alloc_stats_dict(build_allocs_); }
    // krill_ctx_release_cache: the solver workspace kept for the next solve, freed now
    void release_cache()
    {
        busy_guard guard(this);
        krill_ctx_release_cache(ctx_.p);
    }
    nb::list kept_preconditioners() const
    {
        nb::list out;
        for (const auto &kv : pcs_) out.append(nb::str(kv.first.c_str()));
        return out;
    }

  private:
    // One call at a time: a call releases the GIL, so another thread could otherwise
    // update the values or solve on the same context meanwhile (set and tested with the GIL).
    struct busy_guard {
        Matrix *m;
        explicit busy_guard(Matrix *matrix) : m(matrix)
        {
            if (m->busy_)
                throw nb::type_error("krill.Matrix: the matrix is in use by another thread "
                                     "(a solve or update_values is running); use one Matrix per "
                                     "thread");
            m->busy_ = true;
        }
        ~busy_guard() { m->busy_ = false; }
    };

    // The shell's Python callback reports its exceptions through a solve's monitor: outside
    // a solve there is none, so these helpers (used by krill.formats) refuse an operator.
    void refuse_shell(const char *what) const
    {
        if (shell_)
            throw krill_failure{KRILL_ERR_UNSUPPORTED, std::string("krill.Matrix.") + what +
                                                           ": A is an operator (call its matvec)"};
    }

    // krill_mat_update_values(mat, values) and the kept preconditioners recomputed; a device
    // CSR's array (the caller's) is written on krill's stream: synchronized before returning.
    void refresh(const double *values)
    {
        busy_guard guard(this);
        krill_status st;
        std::string failed_pc;
        {
            nb::gil_scoped_release release;
            st = krill_mat_update_values(mat_.p, values);
            if (st == KRILL_OK && device_csr_) st = krill_ctx_sync(ctx_.p);
            for (auto it = pcs_.begin(); st == KRILL_OK && it != pcs_.end(); ++it)
                if ((st = krill_pc_update_values(it->second->p)) != KRILL_OK) failed_pc = it->first;
        }
        have_auto_choice_ = false;   // the values decide the "auto" solver
        if (!failed_pc.empty()) pcs_.erase(failed_pc);
        check(st, failed_pc.empty() ? "krill_mat_update_values" : "krill_pc_update_values");
    }

    // The context, then the matrix by make(ctx, &mat) (the C call named `call`), with the
    // GIL released; build_seconds_ times make alone (as `krill formats`), build_allocs_
    // counts what it allocated in the context's memory (krill_ctx_alloc_stats_get).
    template <typename Make> void build(const krill_ctx_opts &copts, const char *call, Make make)
    {
        krill_ctx_alloc_stats before{}, after{};
        krill_status st;
        const char *failed_call = "krill_ctx_create";
        auto t0 = std::chrono::steady_clock::now();
        {
            nb::gil_scoped_release release;
            st = krill_ctx_create(&copts, &ctx_.p);
            t0 = std::chrono::steady_clock::now();
            if (st == KRILL_OK) {
                krill_ctx_alloc_stats_get(ctx_.p, &before);
                failed_call = call;
                st = make(ctx_.p, &mat_.p);
                krill_ctx_alloc_stats_get(ctx_.p, &after);
            }
        }
        build_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        check(st, failed_call);
        build_allocs_ = {after.allocations - before.allocations, after.bytes - before.bytes};
    }

    solver_choice auto_solver()
    {
        if (shell_) return choose_solver("auto", nullptr);
        if (!have_auto_choice_) {   // after update_values: the values as the matrix has them
            krill_csr *csr = nullptr;
            check(krill_mat_to_csr(mat_.p, &csr), "krill_mat_to_csr");
            auto_choice_ = choose_solver("auto", csr);
            krill_csr_destroy(&csr);
            have_auto_choice_ = true;
        }
        return auto_choice_;
    }

    ctx_holder ctx_;
    mat_holder mat_;
    std::map<std::string, std::unique_ptr<pc_holder>> pcs_;
    nb::object matvec_;
    py_operator op_a_;
    int64_t n_ = 0;
    bool shell_ = false;
    bool busy_ = false;
    bool have_auto_choice_ = false;
    solver_choice auto_choice_{};
    double build_seconds_ = 0.0;
    bool device_csr_ = false;   // made by krill_mat_create_device_csr (the caller's arrays)
    krill_ctx_alloc_stats build_allocs_{};
};


nb::list names(const char *const *list)
{
    nb::list out;
    for (; list && *list; list++) out.append(nb::str(*list));
    return out;
}

}  // namespace krill_py

using namespace krill_py;

NB_MODULE(_core, m)
{
    m.doc() = "krill's C API, thinly wrapped (use the krill package, not this module)";

    nb::register_exception_translator([](const std::exception_ptr &p, void *) {
        try {
            std::rethrow_exception(p);
        } catch (const krill_failure &e) {
            nb::object make = nb::module_::import_("krill._errors").attr("_make_error");
            nb::object exc = make((int)e.status, krill_status_string(e.status), e.message);
            PyErr_SetObject((PyObject *)Py_TYPE(exc.ptr()), exc.ptr());
        }
    });

    m.def("version", [] { return std::string(krill_version()); },
          "The C library's version (krill_version()).");
    m.def("have_cuda", [] { return krill_have_cuda() != 0; },
          "Whether this build has the CUDA backend.");
    m.def("cuda_device_count", [] { return krill_cuda_device_count(); },
          "Usable CUDA devices (0 without CUDA or a driver).");
    m.def("format_names", [] { return names(krill_format_names()); },
          "The registered storage formats.");
    m.def("pc_names", [] { return names(krill_pc_names()); },
          "The registered preconditioners.");
    m.def("status_string", [](int st) { return std::string(krill_status_string((krill_status)st)); });
    m.def("apsp_methods", [] { return names(krill_apsp_methods()); },
          "The APSP methods (krill_apsp_methods(), \"auto\" not included).");
    m.def("apsp", &apsp, "indptr"_a, "indices"_a, "data"_a, "n"_a, "method"_a, "weight"_a,
          "paths"_a, "device"_a, "threads"_a, "dist"_a, "pred"_a);

    nb::class_<Matrix>(m, "Matrix")
        .def(nb::init<host_array<const int64_t>, host_array<const int32_t>,
                      host_array<const double>, int64_t, int64_t, std::optional<std::string>,
                      const std::string &, int, nb::object>(),
             "indptr"_a, "indices"_a, "data"_a, "n_rows"_a, "n_cols"_a, "format"_a.none(),
             "device"_a, "threads"_a, "matvec"_a.none())
        .def(nb::init<uintptr_t, int, uintptr_t, uintptr_t, int64_t, int64_t, int64_t, int, int>(),
             "indptr_ptr"_a, "index_bytes"_a, "indices_ptr"_a, "data_ptr"_a, "n_rows"_a,
             "n_cols"_a, "nnz"_a, "device_id"_a, "threads"_a)
        .def("solve", &Matrix::solve, "b"_a, "x"_a, "solver"_a, "rtol"_a, "atol"_a, "maxit"_a,
             "restart"_a, "ortho"_a.none(), "sstep"_a, "precond"_a.none(), "repro_mode"_a,
             "repro_slices"_a,
             "callback"_a.none(), "psolve"_a.none(), "keep_pc"_a)
        .def("update_values", &Matrix::update_values, "data"_a)
        .def("update_values_in_place", &Matrix::update_values_in_place)
        .def("alloc_stats", &Matrix::alloc_stats)
        .def("build_alloc_stats", &Matrix::build_alloc_stats)
        .def("release_cache", &Matrix::release_cache)
        .def_prop_ro("on_gpu", &Matrix::on_gpu)
        .def("spmv", &Matrix::spmv, "x"_a, "y"_a)
        .def("time_spmv", &Matrix::time_spmv, "warmup"_a, "reps"_a)
        .def("stats", &Matrix::stats)
        .def("kept_preconditioners", &Matrix::kept_preconditioners)
        .def_prop_ro("format", &Matrix::format)
        .def_prop_ro("format_choice", &Matrix::format_choice)
        .def_prop_ro("device", &Matrix::device)
        .def_prop_ro("rows", &Matrix::rows)
        .def_prop_ro("cols", &Matrix::cols)
        .def_prop_ro("nnz", &Matrix::nnz)
        .def_prop_ro("build_seconds", &Matrix::build_seconds);
}

// krill._core: the thin nanobind layer over krill's C API (doc/python.md).
//
// It converts arguments, calls the C API and turns a failing krill_status into a Python
// exception (krill._errors) carrying krill_last_error()'s message. No numerical code lives
// here: the Python side (krill/_solve.py) prepares CSR arrays with SciPy, this file wraps
// them in a krill_csr without copying and hands them to krill_mat_create / krill_pc_create /
// krill_solve with the GIL released. A LinearOperator A or a Python preconditioner M goes
// through the shell matrix / shell preconditioner (krill_mat_create_shell,
// krill_pc_create_shell): their C callback takes the GIL back, shows krill's vector to
// Python as a numpy array without a copy, and copies the result back.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/optional.h>

#include <chrono>
#include <cstring>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "krill/ctx.h"
#include "krill/csr.h"
#include "krill/mat.h"
#include "krill/precond.h"
#include "krill/solver.h"
#include "krill/status.h"
#include "krill/vec.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// A failed C call: the status and the C library's message, turned into a krill._errors
// exception by the translator registered below.
struct krill_failure {
    krill_status status;
    std::string message;
};

void check(krill_status st, const char *call)
{
    if (st == KRILL_OK) return;
    const char *msg = krill_last_error();
    std::string text = msg && *msg ? msg : std::string(call) + ": " + krill_status_string(st);
    krill_clear_error();
    throw krill_failure{st, text};
}

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

int monitor_fn(int iteration, double residual_norm, void *user)
{
    auto *m = static_cast<monitor_state *>(user);
    if (!m->callback) {
        auto now = std::chrono::steady_clock::now();
        if (now < m->next_check) return 0;
        m->next_check = now + std::chrono::milliseconds(50);
    }
    nb::gil_scoped_acquire gil;
    if (m->callback) {
        PyObject *res = PyObject_CallFunction(m->callback, "id", iteration, residual_norm);
        if (!res) {
            PyErr_Fetch(&m->err_type, &m->err_value, &m->err_tb);
            m->failed = true;
            return 1;
        }
        Py_DECREF(res);
    }
    if (PyErr_CheckSignals() != 0) {
        PyErr_Fetch(&m->err_type, &m->err_value, &m->err_tb);
        m->failed = true;
        return 1;
    }
    return 0;
}

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

krill_status py_apply(void *user, const double *x, double *y, int64_t n)
{
    auto *op = static_cast<py_operator *>(user);
    nb::gil_scoped_acquire gil;
    if (op->state->failed) return KRILL_ERR_ARG;   // never called again after an exception
    try {
        size_t shape[1] = {(size_t)n};
        nb::ndarray<nb::numpy, const double, nb::ndim<1>, nb::c_contig> xv(x, 1, shape,
                                                                          nb::handle());
        // rv_policy::reference: a view of krill's memory, not nanobind's default copy
        nb::object res = nb::borrow(op->fn)(nb::cast(xv, nb::rv_policy::reference));
        auto yv = nb::cast<host_array<const double>>(res);
        if ((int64_t)yv.shape(0) == n) {
            std::memcpy(y, yv.data(), sizeof(double) * (size_t)n);
            return KRILL_OK;
        }
        PyErr_Format(PyExc_ValueError, "krill: the operator returned %zu values for a vector "
                     "of %lld", (size_t)yv.shape(0), (long long)n);
    } catch (nb::python_error &e) {
        e.restore();
    } catch (const std::exception &e) {   // a failed cast: not a float64 vector
        PyErr_Format(PyExc_TypeError, "krill: the operator did not return a float64 vector "
                     "(%s)", e.what());
    }
    PyErr_Fetch(&op->state->err_type, &op->state->err_value, &op->state->err_tb);
    op->state->failed = true;
    op->state->origin = op->what;
    return KRILL_ERR_ARG;
}

// The pending exception (an operator's) gets a note saying where it came from (PEP 678,
// Python >= 3.11; nothing before): its type, message and traceback stay the caller's own.
void add_origin_note(const char *origin, const char *solver)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && PyObject_HasAttrString(value, "add_note")) {
        std::string note = std::string("krill: raised by ") + origin + ", called back from " +
                           "krill's " + solver + " solve (a shell " +
                           (origin[0] == 'A' ? "matrix" : "preconditioner") +
                           "); the solve was stopped";
        PyObject *res = PyObject_CallMethod(value, "add_note", "s", note.c_str());
        if (res) Py_DECREF(res);
        else PyErr_Clear();
    }
    if (tb && value) PyException_SetTraceback(value, tb);
    PyErr_Restore(type, value, tb);
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
// (the rule of `krill solve`'s solver choice, apps/cmd_solve.c).
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

solver_choice choose_solver(const std::string &name, const krill_csr *a)
{
    if (name == "gmres") return {KRILL_SOLVER_GMRES, "gmres", "as asked"};
    if (name == "fgmres") return {KRILL_SOLVER_FGMRES, "fgmres", "as asked"};
    if (name == "cg") return {KRILL_SOLVER_CG, "cg", "as asked"};
    if (name == "bicgstab") return {KRILL_SOLVER_BICGSTAB, "bicgstab", "as asked"};
    if (name == "minres") return {KRILL_SOLVER_MINRES, "minres", "as asked"};
    if (name != "auto")
        throw krill_failure{KRILL_ERR_ARG, "krill.solve: solver \"" + name + "\" is not one of "
                                           "auto, gmres, fgmres, cg, bicgstab, minres"};
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

// Solve A x = b for A given as CSR arrays (indptr int64, indices int32 sorted and unique
// within each row, data float64: the Python side makes them so), or, when matvec is not None,
// as an operator y = matvec(x) of order n_rows = n_cols (a shell matrix; the arrays are then
// empty). psolve, when not None, is the preconditioner z = psolve(r) (a shell
// preconditioner; precond is then None). x holds the initial guess and receives the solution
// in place. Returns a dict with everything krill_solve_info says.
nb::dict solve(host_array<const int64_t> indptr, host_array<const int32_t> indices,
               host_array<const double> data, int64_t n_rows, int64_t n_cols,
               host_array<const double> b, host_array<double> x, const std::string &solver,
               double rtol, double atol, int64_t maxit, int64_t restart,
               std::optional<std::string> precond, std::optional<std::string> format,
               const std::string &device, int threads, int repro_mode, int repro_slices,
               nb::object callback, nb::object matvec, nb::object psolve)
{
    const bool shell = !matvec.is_none();
    if (shell && format)
        throw krill_failure{KRILL_ERR_UNSUPPORTED, "krill.solve: format=\"" + *format +
                                                       "\": A is an operator (a shell matrix, "
                                                       "krill_mat_create_shell) and has no "
                                                       "entries to store in a format"};
    if (shell && n_rows != n_cols)
        throw krill_failure{KRILL_ERR_UNSUPPORTED, "krill.solve: the operator is " +
                                                       std::to_string(n_rows) + " x " +
                                                       std::to_string(n_cols) +
                                                       "; krill solves square systems"};
    if (!shell && (n_rows < 0 || n_rows > INT32_MAX || n_cols < 0 || n_cols > INT32_MAX))
        throw krill_failure{KRILL_ERR_UNSUPPORTED, "krill.solve: the matrix is " +
                                                       std::to_string(n_rows) + " x " +
                                                       std::to_string(n_cols) +
                                                       "; krill's CSR has at most 2^31 - 1 rows and columns"};
    if (!shell && ((int64_t)indptr.shape(0) != n_rows + 1 || indices.shape(0) != data.shape(0)))
        throw krill_failure{KRILL_ERR_ARG, "krill.solve: inconsistent CSR arrays (indptr has " +
                                               std::to_string(indptr.shape(0)) + " entries for " +
                                               std::to_string(n_rows) + " rows, indices " +
                                               std::to_string(indices.shape(0)) + ", data " +
                                               std::to_string(data.shape(0)) + ")"};
    if (maxit < 0 || maxit > INT32_MAX - 1)
        throw krill_failure{KRILL_ERR_ARG, "krill.solve: maxiter = " + std::to_string(maxit) +
                                               "; it must be in 0..2^31 - 2"};
    if (restart < 1 || restart > INT32_MAX)
        throw krill_failure{KRILL_ERR_ARG, "krill.solve: restart = " + std::to_string(restart) +
                                               "; it must be >= 1"};

    // The caller's arrays, read in place (krill_mat_create copies them into its format).
    krill_csr csr{};
    if (!shell) {
        csr.n_rows = (int32_t)n_rows;
        csr.n_cols = (int32_t)n_cols;
        csr.nnz = (int64_t)data.shape(0);
        csr.row_ptr = const_cast<int64_t *>(indptr.data());
        csr.col = const_cast<int32_t *>(indices.data());
        csr.val = const_cast<double *>(data.data());
        if (csr.row_ptr[0] != 0 || csr.row_ptr[n_rows] != csr.nnz)
            throw krill_failure{KRILL_ERR_ARG, "krill.solve: indptr must start at 0 and end at "
                                               "nnz"};
    }

    solver_choice choice = choose_solver(solver, shell ? nullptr : &csr);

    krill_ctx_opts copts = KRILL_CTX_OPTS_INIT;
    copts.device = device_from_name(device);
    copts.threads = threads;
    if (shell || !psolve.is_none()) {
        // A Python operator reads and writes numpy arrays: host memory. On a GPU context the
        // shell's vectors are device pointers (CuPy operators: a later phase).
        if (copts.device == KRILL_DEVICE_CUDA)
            throw krill_failure{KRILL_ERR_UNSUPPORTED, "krill.solve: device=\"" + device +
                                                           "\": a Python operator (A or M) "
                                                           "runs on the CPU only in this "
                                                           "version; use device=\"cpu\""};
        copts.device = KRILL_DEVICE_CPU;   // "auto" too
    }

    ctx_holder ctx;
    mat_holder mat;
    pc_holder pc;
    vec_holder vb, vx;
    info_holder info;
    monitor_state mon;
    mon.callback = callback.is_none() ? nullptr : callback.ptr();
    py_operator op_a, op_m;   // the shells' callbacks share mon's exception slot
    op_a.fn = shell ? matvec.ptr() : nullptr;
    op_a.state = &mon;
    op_a.what = "A.matvec";
    op_m.fn = psolve.is_none() ? nullptr : psolve.ptr();
    op_m.state = &mon;
    op_m.what = "M";

    krill_solver_opts opts;
    krill_solver_opts_default(&opts);
    opts.solver = choice.type;
    opts.rtol = rtol;
    opts.atol = atol;
    opts.maxit = (int)maxit;
    opts.restart = (int)restart;

    krill_status st = KRILL_OK;
    const char *failed_call = "";
    std::string pc_name = op_m.fn ? std::string("shell") : precond ? *precond : std::string("none");
    {
        nb::gil_scoped_release release;
        do {
            failed_call = "krill_ctx_create";
            if ((st = krill_ctx_create(&copts, &ctx.p)) != KRILL_OK) break;
            failed_call = "krill_ctx_set_repro";
            if (repro_mode != 0 &&
                (st = krill_ctx_set_repro(ctx.p, (krill_repro_mode)repro_mode, repro_slices)) !=
                    KRILL_OK)
                break;
            if (shell) {
                failed_call = "krill_mat_create_shell";
                if ((st = krill_mat_create_shell(ctx.p, n_rows, py_apply, &op_a, &mat.p)) !=
                    KRILL_OK)
                    break;
            } else {
                failed_call = "krill_mat_create";
                if ((st = krill_mat_create(ctx.p, &csr, format ? format->c_str() : nullptr,
                                           &mat.p)) != KRILL_OK)
                    break;
            }
            if (op_m.fn) {
                failed_call = "krill_pc_create_shell";
                if ((st = krill_pc_create_shell(ctx.p, n_rows, py_apply, &op_m, &pc.p)) !=
                    KRILL_OK)
                    break;
            } else if (precond && *precond != "none") {
                failed_call = "krill_pc_create";
                if ((st = krill_pc_create(mat.p, precond->c_str(), &pc.p)) != KRILL_OK) break;
            }
            failed_call = "krill_vec_create";
            if ((st = krill_vec_create(ctx.p, (int64_t)b.shape(0), &vb.p)) != KRILL_OK) break;
            if ((st = krill_vec_create(ctx.p, (int64_t)x.shape(0), &vx.p)) != KRILL_OK) break;
            failed_call = "krill_vec_upload";
            if ((st = krill_vec_upload(vb.p, b.data())) != KRILL_OK) break;
            if ((st = krill_vec_upload(vx.p, x.data())) != KRILL_OK) break;
            // The monitor: always on the CPU (for Ctrl-C); on the GPU only with a callback,
            // since a monitor keeps CG's host from running ahead of the device.
            if (mon.callback || krill_ctx_device(ctx.p) == KRILL_DEVICE_CPU) {
                opts.monitor = monitor_fn;
                opts.monitor_data = &mon;
            }
            failed_call = "krill_solve";
            st = krill_solve(mat.p, pc.p, vb.p, vx.p, &opts, &info.info);
            if (st != KRILL_OK) break;
            failed_call = "krill_vec_download";
            st = krill_vec_download(vx.p, x.data());
        } while (0);
    }
    if (mon.failed) {   // a Python exception from a callback, an operator or a signal handler
        PyErr_Restore(mon.err_type, mon.err_value, mon.err_tb);
        if (mon.origin) add_origin_note(mon.origin, choice.name);
        throw nb::python_error();
    }
    check(st, failed_call);

    const krill_solve_info &in = info.info;
    nb::dict times;
    times["setup"] = in.times.setup;
    times["spmv"] = in.times.spmv;
    times["precond"] = in.times.precond;
    times["ortho"] = in.times.ortho;
    times["other"] = in.times.other;
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
    out["format"] = std::string(krill_mat_format(mat.p));
    const char *why = krill_mat_choice(mat.p);
    out["format_choice"] = why ? nb::object(nb::str(why)) : nb::none();
    out["precond"] = std::string(pc.p ? krill_pc_describe(pc.p) : "none");
    out["precond_name"] = pc_name;
    out["device"] = std::string(krill_ctx_describe(ctx.p));
    return out;
}

nb::list names(const char *const *list)
{
    nb::list out;
    for (; list && *list; list++) out.append(nb::str(*list));
    return out;
}

}  // namespace

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
    m.def("solve", &solve, "indptr"_a, "indices"_a, "data"_a, "n_rows"_a, "n_cols"_a, "b"_a,
          "x"_a, "solver"_a, "rtol"_a, "atol"_a, "maxit"_a, "restart"_a, "precond"_a.none(),
          "format"_a.none(), "device"_a, "threads"_a, "repro_mode"_a, "repro_slices"_a,
          "callback"_a.none(), "matvec"_a.none() = nb::none(), "psolve"_a.none() = nb::none());
}

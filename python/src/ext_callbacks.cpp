// krill._core's Python callbacks from C (ext_common.h declares them and their state): the
// solve's monitor and the shell operators (a Python A.matvec or M) called back from
// krill_solve.
#include "ext_common.h"

#include <nanobind/ndarray.h>

#include <chrono>
#include <cstring>

namespace krill_py {

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

}  // namespace krill_py

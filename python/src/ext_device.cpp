// krill._core's side of CuPy's GPU arrays (ext_common.h declares these): the vectors of a
// solve given as device pointers, and the allocation counter that shows nothing was copied.
#include "ext_common.h"

namespace krill_py {

solve_vectors solve_vectors_from(nb::handle b, nb::handle x)
{
    solve_vectors v;
    if (nb::isinstance<nb::tuple>(b) && nb::isinstance<nb::tuple>(x)) {
        nb::tuple tb = nb::borrow<nb::tuple>(b), tx = nb::borrow<nb::tuple>(x);
        v.b = reinterpret_cast<const double *>(nb::cast<uintptr_t>(tb[0]));
        v.rows = nb::cast<int64_t>(tb[1]);
        v.x = reinterpret_cast<double *>(nb::cast<uintptr_t>(tx[0]));
        v.cols = nb::cast<int64_t>(tx[1]);
        v.on_device = true;
        return v;
    }
    // convert = false: x is written in place, so a converted temporary would lose the result
    auto hb = nb::cast<host_array<const double>>(b, false);
    auto hx = nb::cast<host_array<double>>(x, false);
    v.b = hb.data();
    v.x = hx.data();
    v.rows = (int64_t)hb.shape(0);
    v.cols = (int64_t)hx.shape(0);
    return v;
}

nb::dict alloc_stats_dict(const krill_ctx_alloc_stats &s)
{
    nb::dict d;
    d["allocations"] = s.allocations;
    d["bytes"] = s.bytes;
    return d;
}

}  // namespace krill_py

// krill._core.apsp: all-pairs shortest paths of a graph given as CSR arrays (doc/python.md).
#include "ext_common.h"

#include <cmath>
#include <cstring>

#include "krill/apsp.h"

namespace krill_py {

// All-pairs shortest paths of the graph given as CSR arrays (krill_apsp_solve on a context
// of `device`). D (n x n float64) and P (n x n int32, or an empty array without paths) are
// the caller's numpy arrays, filled here: D as doubles whatever the weight type (int32's
// KRILL_APSP_INT32_INF and the IEEE infinity both become inf), P as krill gives it
// (KRILL_APSP_NO_PRED = -9999, SciPy's value). A negative cycle is KRILL_ERR_NUMERIC with
// krill's message (the Python side raises NegativeCycleError). Returns a dict of
// krill_apsp_info's figures.
nb::dict apsp(host_array<const int64_t> indptr, host_array<const int32_t> indices,
              host_array<const double> data, int64_t n, const std::string &method,
              const std::string &weight, bool paths, const std::string &device, int threads,
              nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu> dist,
              nb::ndarray<int32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> pred)
{
    krill_csr graph = wrap_csr(indptr, indices, data, n, n, "krill.apsp");
    if ((int64_t)dist.shape(0) != n || (int64_t)dist.shape(1) != n ||
        (paths && ((int64_t)pred.shape(0) != n || (int64_t)pred.shape(1) != n)))
        throw krill_failure{KRILL_ERR_ARG, "krill.apsp: output arrays of the wrong shape"};
    krill_apsp_opts opts = KRILL_APSP_OPTS_INIT;
    opts.method = method.c_str();
    opts.paths = paths ? 1 : 0;
    check(krill_apsp_weight_parse(weight.c_str(), &opts.weight), "krill_apsp_weight_parse");
    krill_ctx_opts copts = KRILL_CTX_OPTS_INIT;
    copts.device = device_from_name(device);
    copts.threads = threads;
    ctx_holder ctx;
    krill_apsp *result = nullptr;
    krill_apsp_info info{};
    info.negative_cycle = -1;
    krill_status st;
    const char *failed_call = "krill_ctx_create";
    {
        nb::gil_scoped_release release;
        st = krill_ctx_create(&copts, &ctx.p);
        if (st == KRILL_OK) {
            failed_call = "krill_apsp_solve";
            st = krill_apsp_solve(ctx.p, &graph, &opts, &result, &info);
        }
        if (st == KRILL_OK) {   // D to doubles, P copied: n^2 each, worth the GIL released
            const size_t nn = (size_t)n * (size_t)n;
            const void *d = krill_apsp_dist(result);
            double *out = dist.data();
            if (opts.weight == KRILL_APSP_DOUBLE) {
                std::memcpy(out, d, nn * sizeof(double));
            } else if (opts.weight == KRILL_APSP_FLOAT) {
                for (size_t k = 0; k < nn; k++) out[k] = (double)((const float *)d)[k];
            } else {
                for (size_t k = 0; k < nn; k++) {
                    int32_t v = ((const int32_t *)d)[k];
                    out[k] = v >= KRILL_APSP_INT32_INF ? INFINITY : (double)v;
                }
            }
            if (paths) std::memcpy(pred.data(), krill_apsp_pred(result), nn * sizeof(int32_t));
        }
        krill_apsp_destroy(&result);
    }
    nb::dict out;
    out["negative_cycle"] = info.negative_cycle;
    if (st != KRILL_OK) {
        out["status"] = (int)st;
        out["message"] = take_error_message(st, failed_call);
        return out;   // the Python side raises (NegativeCycleError for a negative cycle)
    }
    out["status"] = 0;
    out["method"] = std::string(info.method);
    out["why"] = std::string(info.why);
    out["tile"] = info.tile;
    out["arcs"] = info.arcs;
    out["relaxations"] = info.relaxations;
    out["bytes_needed"] = info.bytes_needed;
    out["t_compute"] = info.t_compute;
    out["t_total"] = info.t_total;
    out["device"] = std::string(krill_ctx_describe(ctx.p));
    return out;
}

}  // namespace krill_py

/* apsp/methods.c - the method table: every APSP method with its CPU and GPU
 * implementation (NULL where a device lacks it). Adding a method is one apsp_ops pair and
 * one line here; the driver (apsp.c) never names a method. */
#include <string.h>

#include "apsp/apsp_impl.h"

#ifdef KRILL_HAVE_CUDA
#define APSP_GPU(ops) (&(ops))
#else
#define APSP_GPU(ops) NULL
#endif

static const apsp_method method_plain = {
    .name = "plain",
    .summary = "Floyd-Warshall triple loop (CPU oracle; GPU: one kernel per k)",
    .cpu = &apsp_cpu_plain,
    .gpu = APSP_GPU(apsp_gpu_plain),
};
static const apsp_method method_fw_a = {
    .name = "fw-a",
    .summary = "blocked FW, non-pivot tiles as a register-blocked min-plus product (method A)",
    .cpu = &apsp_cpu_fw_a,
    .gpu = APSP_GPU(apsp_gpu_fw_a),
};
static const apsp_method method_fw_b = {
    .name = "fw-b",
    .summary = "blocked FW, non-pivot tiles by two-level blocking (method B)",
    .cpu = &apsp_cpu_fw_b,
    .gpu = APSP_GPU(apsp_gpu_fw_b),
};
static const apsp_method method_fw_rec = {
    .name = "fw-rec",
    .summary = "recursive blocked FW: min-plus products on quadrants",
    .cpu = &apsp_cpu_fw_rec,
    .gpu = APSP_GPU(apsp_gpu_fw_rec),
};
static const apsp_method method_dijkstra = {
    .name = "dijkstra",
    .summary = "Dijkstra from every source, binary heap (weights >= 0)",
    .needs_nonnegative = 1,
    .fills_d = 1,
    .cpu = &apsp_cpu_dijkstra,
    .gpu = NULL,
};

const apsp_method *const apsp_method_table[] = {
    &method_plain, &method_fw_a, &method_fw_b, &method_fw_rec, &method_dijkstra, NULL,
};

static const char *const method_names[] = {"plain", "fw-a", "fw-b", "fw-rec", "dijkstra", NULL};

const char *const *krill_apsp_methods(void) { return method_names; }

const apsp_method *apsp_method_find(const char *name)
{
    const apsp_method *found = NULL;
    for (int k = 0; name && apsp_method_table[k] && !found; k++)
        if (!strcmp(apsp_method_table[k]->name, name)) found = apsp_method_table[k];
    return found;
}

int krill_apsp_method_on(const char *method, krill_device device)
{
    const apsp_method *m = apsp_method_find(method);
    if (!m) return 0;
    return device == KRILL_DEVICE_CUDA ? m->gpu != NULL : device == KRILL_DEVICE_CPU && m->cpu;
}

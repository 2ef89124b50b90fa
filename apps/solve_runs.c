/* apps/solve_runs.c - `krill solve --runs N`: the solve again, timed, for benchmarks. The
 * reported solve is their warm-up (first touch of the vectors and the workspace, the
 * kernels' first launch); each repeat starts from x = 0 with the same options and no
 * monitor, and the median of their krill_solve_times.total is what `--runs` reports
 * (setup included, as in the reported solve's total). */
#include <stdlib.h>

#include "cli_impl.h"

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

krill_status cli_solve_repeat(const krill_mat *a, const krill_pc *pc, const krill_vec *b,
                              krill_vec *x, const krill_solver_opts *opts, int runs,
                              double *median)
{
    krill_status st = KRILL_OK;
    krill_solver_opts o = *opts;
    double t[CLI_MAX_RUNS];   /* no allocation: under MPI a rank failing alone would hang */
    o.monitor = NULL;
    o.monitor_data = NULL;
    if (runs < 1 || runs > CLI_MAX_RUNS) {
        st = krill_error(KRILL_ERR_ARG, "--runs %d: expects 1 to %d", runs, CLI_MAX_RUNS);
        goto cleanup;
    }
    for (int k = 0; k < runs; k++) {
        krill_solve_info info;
        st = krill_vec_fill(x, 0.0);
        if (st == KRILL_OK) st = krill_solve(a, pc, b, x, &o, &info);
        if (st != KRILL_OK) goto cleanup;
        t[k] = info.times.total;
        krill_solve_info_free(&info);
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    *median = runs % 2 ? t[runs / 2] : 0.5 * (t[runs / 2 - 1] + t[runs / 2]);
cleanup:
    return st;
}

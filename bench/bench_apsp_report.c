/* bench/bench_apsp_report.c - bench_apsp's output: the table printed as it goes, the CSV
 * and the JSON (the columns and keys apsp_peers.py reads). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench_apsp.h"
#include "bench/bench_common.h"

/* ---- output ------------------------------------------------------------------------------ */

static const char *status_name(point_status s)
{
    return s == P_OK ? "ok" : s == P_SKIPPED ? "skipped" : s == P_FAILED ? "failed" : "wrong";
}

void apsp_print_header(void)
{
    printf("%6s %-6s %-8s %4s %10s %10s %10s %9s %9s %10s %8s %8s %6s %10s %6s %s\n", "n",
           "weight", "method", "t", "compute_ms", "min_ms", "max_ms", "pivot_ms", "panels_ms",
           "rest_ms", "up_ms", "down_ms", "eff%", "paths_ms", "xpath", "check");
}

void apsp_print_point(const apsp_point *p)
{
    if (p->status == P_SKIPPED || p->status == P_FAILED) {
        printf("%6d %-6s %-8s %s: %s\n", p->n, krill_apsp_weight_name(p->weight), p->method,
               p->status == P_SKIPPED ? "skipped" : "FAILED", p->message);
        goto done;
    }
    printf("%6d %-6s %-8s %4d %10.3f %10.3f %10.3f %9.3f %9.3f %10.3f %8.3f %8.3f %6.1f", p->n,
           krill_apsp_weight_name(p->weight), p->method, p->tile, p->t[F_COMPUTE] * 1e3,
           p->t_min * 1e3, p->t_max * 1e3, p->t[F_PIVOT] * 1e3, p->t[F_PANELS] * 1e3,
           p->t[F_REST] * 1e3, p->t[F_UPLOAD] * 1e3, p->t[F_DOWNLOAD] * 1e3,
           p->efficiency * 100.0);
    if (p->t_paths > 0.0)
        printf(" %10.3f %6.2f", p->t_paths * 1e3, p->paths_ratio);
    else
        printf(" %10s %6s", "-", "-");
    printf(" %s\n", p->status == P_OK ? "ok" : p->message);
done:
    return;
}

int apsp_write_csv(const char *path, const apsp_point *pts, int n)
{
    FILE *f = fopen(path, "w");
    int rc = -1;
    if (!f) goto done;
    fprintf(f, "n,arcs,weight,method,status,tile,n_padded,t_compute_s,t_compute_min_s,"
               "t_compute_max_s,t_pivot_s,t_panels_s,t_rest_s,t_setup_s,t_upload_s,"
               "t_download_s,t_total_s,relaxations,efficiency,t_paths_compute_s,paths_ratio,"
               "max_diff,checksum,message\n");
    for (int i = 0; i < n; i++) {
        const apsp_point *p = &pts[i];
        fprintf(f, "%d,%lld,%s,%s,%s,%d,%d", p->n, (long long)p->arcs,
                krill_apsp_weight_name(p->weight), p->method, status_name(p->status), p->tile,
                p->n_padded);
        for (int k = 0; k < 3; k++)
            fprintf(f, ",%.6e", k == 0 ? p->t[F_COMPUTE] : k == 1 ? p->t_min : p->t_max);
        for (int k = F_PIVOT; k < FIGURES; k++) fprintf(f, ",%.6e", p->t[k]);
        fprintf(f, ",%.6e,%.6e,%.6e,%.6e,%.6e,%016llx,\"%s\"\n", p->relaxations, p->efficiency,
                p->t_paths, p->paths_ratio, p->max_diff, (unsigned long long)p->checksum,
                p->message);
    }
    rc = fclose(f) == 0 ? 0 : -1;
done:
    return rc;
}

int apsp_write_json(const char *path, const apsp_point *pts, int n, const apsp_opts_b *o,
                      krill_ctx *ctx, const double *peak)
{
    static const char *const keys[FIGURES] = {"t_compute_s", "t_pivot_s", "t_panels_s",
                                              "t_rest_s", "t_setup_s", "t_upload_s",
                                              "t_download_s", "t_total_s"};
    FILE *f = fopen(path, "w");
    int rc = -1;
    if (!f) goto done;
    fprintf(f, "{\"device\": \"%s\", \"describe\": ",
            o->device == KRILL_DEVICE_CUDA ? "gpu" : "cpu");
    bench_json_string(f, krill_ctx_describe(ctx));
    fprintf(f, ", \"threads\": %d, \"runs\": %d, \"warmup\": %d, ", krill_ctx_threads(ctx),
            o->runs, o->warmup);
    bench_json_number(f, "max_seconds", o->max_seconds, 0);
    fprintf(f, "\"peak_relax_per_s\": {");
    for (int w = 0; w < o->n_weights; w++) {
        bench_json_number(f, krill_apsp_weight_name(o->weights[w]), peak[o->weights[w]],
                          w + 1 == o->n_weights);
    }
    fprintf(f, "},\n\"results\": [\n");
    for (int i = 0; i < n; i++) {
        const apsp_point *p = &pts[i];
        const int ok = p->status == P_OK;
        fprintf(f, "  {\"n\": %d, \"arcs\": %lld, \"weight\": \"%s\", \"method\": \"%s\", "
                   "\"status\": \"%s\", \"tile\": %d, \"n_padded\": %d, ",
                p->n, (long long)p->arcs, krill_apsp_weight_name(p->weight), p->method,
                status_name(p->status), p->tile, p->n_padded);
        for (int k = 0; k < FIGURES; k++) bench_json_number(f, keys[k], ok ? p->t[k] : NAN, 0);
        bench_json_number(f, "t_compute_min_s", ok ? p->t_min : NAN, 0);
        bench_json_number(f, "t_compute_max_s", ok ? p->t_max : NAN, 0);
        bench_json_number(f, "relaxations", p->relaxations, 0);
        bench_json_number(f, "efficiency", ok ? p->efficiency : NAN, 0);
        bench_json_number(f, "t_paths_compute_s", p->t_paths > 0.0 ? p->t_paths : NAN, 0);
        bench_json_number(f, "paths_ratio", p->t_paths > 0.0 ? p->paths_ratio : NAN, 0);
        bench_json_number(f, "max_diff", p->max_diff, 0);
        fprintf(f, "\"checksum\": \"%016llx\", \"message\": ", (unsigned long long)p->checksum);
        bench_json_string(f, p->message);
        fprintf(f, "}%s\n", i + 1 < n ? "," : "");
    }
    fprintf(f, "]}\n");
    rc = fclose(f) == 0 ? 0 : -1;
done:
    return rc;
}


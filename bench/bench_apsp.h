/* bench/bench_apsp.h - what bench_apsp.c (the sweep) and bench_apsp_report.c (its table,
 * CSV and JSON) share: the options and one measured point. */
#ifndef KRILL_BENCH_APSP_H
#define KRILL_BENCH_APSP_H

#include <stdint.h>
#include "krill/apsp.h"
#include "krill/ctx.h"

#define MAX_SIZES 16
#define MAX_METHODS 8
#define MAX_WEIGHTS 3
#define FIGURES 8               /* per solve: the times of krill_apsp_info, in this order */
enum { F_COMPUTE, F_PIVOT, F_PANELS, F_REST, F_SETUP, F_UPLOAD, F_DOWNLOAD, F_TOTAL };

typedef struct apsp_opts_b {
    krill_device device;
    int threads;
    int sizes[MAX_SIZES], n_sizes;
    char methods[MAX_METHODS][16];
    int n_methods;
    krill_apsp_weight weights[MAX_WEIGHTS];
    int n_weights;
    int runs, warmup, paths;
    double max_seconds, peak_seconds;
    const char *graph_dir, *dist_dir, *csv_path, *json_path;
} apsp_opts_b;

typedef enum point_status { P_OK, P_SKIPPED, P_FAILED, P_WRONG } point_status;

typedef struct apsp_point {
    int n;
    int64_t arcs;
    char method[16];
    krill_apsp_weight weight;
    point_status status;
    char message[256];
    int tile, n_padded;
    double t[FIGURES];           /* medians, seconds */
    double t_min, t_max;         /* of t_compute */
    double relaxations, efficiency;
    double t_paths, paths_ratio; /* --paths: t_compute with P (median), / t[F_COMPUTE] */
    double max_diff;             /* against the reference method */
    uint64_t checksum;
} apsp_point;

void apsp_print_header(void);
void apsp_print_point(const apsp_point *p);
int apsp_write_csv(const char *path, const apsp_point *pts, int n);
int apsp_write_json(const char *path, const apsp_point *pts, int n, const apsp_opts_b *o,
                      krill_ctx *ctx, const double *peak);

#endif

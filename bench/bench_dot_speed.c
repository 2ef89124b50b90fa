/* bench/bench_dot_speed.c - bench_dot's speed table: cuBLAS ddot, krill's plain dot and the
 * Ozaki dots, median time per call, bytes moved and GB/s, checked against a second context
 * (bench_dot.c's opening comment says how). */
#include "bench/bench_dot.h"

#define CACHE_FLUSH_BYTES (256.0 * 1024 * 1024)   /* 5x an H100's L2 */
#define MAX_COPIES 64
#define BATCH_SECONDS 0.01      /* a timed batch lasts about this long */
#define MAX_BATCH 100000

/* ---- speed --------------------------------------------------------------------------------- */

typedef struct speed_cell {
    double seconds;              /* median per call; 0 = not measured */
    int batch;                   /* calls per timed batch */
    char note[96];               /* why not measured, or the check's verdict */
    int check_ok;
} speed_cell;

typedef struct speed_row {
    int64_t n;
    int copies;
    speed_cell cell[MAX_METHODS];
} speed_row;

static int speed_methods(krill_device device, dot_method *m)
{
    int n = 0;
    if (device == KRILL_DEVICE_CUDA)
        m[n++] = dot_make_method("cuBLAS ddot", DOT_CUBLAS, KRILL_REPRO_OFF, 0);
    m[n++] = dot_make_method("krill plain", DOT_BLAS, KRILL_REPRO_OFF, 0);
    m[n++] = dot_make_method("Ozaki exact", DOT_OZAKI, KRILL_REPRO_OZAKI, 0);
    m[n] = dot_make_method("exact, fast path off", DOT_OZAKI, KRILL_REPRO_OZAKI, 0);
    m[n++].no_fast_path = 1;
    m[n++] = dot_make_method("Ozaki S=2", DOT_OZAKI, KRILL_REPRO_OZAKI, 2);
    m[n++] = dot_make_method("Ozaki S=3", DOT_OZAKI, KRILL_REPRO_OZAKI, 3);
    m[n++] = dot_make_method("exact, stats given", DOT_OZAKI_STATS, KRILL_REPRO_OZAKI, 0);
    return n;
}

/* Median seconds per call of `m` over R batches, rotating through the copies. The W
 * warm-up calls are timed together to size the batches: as many calls as make BATCH_SECONDS
 * (at least one), so that the clock's resolution and a GPU's launch gaps do not count. */
static krill_status time_method(krill_ctx *ctx, bench_clock *clock, const dot_method *m,
                                int64_t n, int copies, krill_vec **xs, krill_vec **ys,
                                const double *stats, double *slots, const dot_opts *o,
                                double *times, double *median, int *batch)
{
    krill_status st = KRILL_OK;
    const int warmup = o->warmup > 0 ? o->warmup : 1;
    double seconds = 0.0;
    int call = 0;                /* the copy the next call reads */
    KRILL_TRY(dot_set_mode(ctx, m));
    KRILL_TRY(bench_clock_start(clock));
    for (int w = 0; w < warmup; w++, call = (call + 1) % copies)
        KRILL_TRY(dot_run(ctx, m, n, xs[call], ys[call], stats + 4 * call, &slots[call]));
    KRILL_TRY(bench_clock_stop(clock, &seconds));
    {
        const double per_call = seconds / warmup;
        const double wanted = per_call > 0.0 ? ceil(BATCH_SECONDS / per_call) : MAX_BATCH;
        *batch = wanted < 1.0 ? 1 : wanted > MAX_BATCH ? MAX_BATCH : (int)wanted;
    }
    for (int r = 0; r < o->reps; r++) {
        KRILL_TRY(bench_clock_start(clock));
        for (int b = 0; b < *batch; b++, call = (call + 1) % copies)
            KRILL_TRY(dot_run(ctx, m, n, xs[call], ys[call], stats + 4 * call, &slots[call]));
        KRILL_TRY(bench_clock_stop(clock, &seconds));
        times[r] = seconds / *batch;
    }
    *median = bench_median(times, o->reps);
cleanup:
    return st;
}

/* Check the value `m` left in slots[0] (copy 0 holds x, y): reproducible modes against the
 * same mode on `ref` (another device or thread count); plain ones against the error bound
 * n eps sum |x_i y_i| around exact mode. */
static krill_status check_method(krill_ctx *ctx, krill_ctx *ref, const dot_method *m,
                                 int64_t n, krill_vec *x, krill_vec *y, krill_vec *xr,
                                 krill_vec *yr, const double *stats, double *slot,
                                 double *slot_ref, double exact, double abs_sum,
                                 speed_cell *cell)
{
    krill_status st = KRILL_OK;
    double value = 0.0, expected = 0.0;
    int verdict = -1;
    KRILL_TRY(dot_value(ctx, m, n, x, y, stats, slot, &value));
    KRILL_TRY(krill_ozaki_fast_verdicts(ctx, 1, &verdict));
    if (dot_method_is_repro(m)) {
        const char *other = krill_on_gpu(ctx) ? "the CPU" : "1 thread";
        /* the reference computes its own stats (the given ones must not change the bits) and
         * runs the exact path alone */
        dot_method plain_call = dot_make_method(m->name, m->kind == DOT_OZAKI_STATS ? DOT_OZAKI
                                            : m->kind, m->mode, m->slices);
        plain_call.no_fast_path = 1;
        KRILL_TRY(dot_value(ref, &plain_call, n, xr, yr, NULL, slot_ref, &expected));
        cell->check_ok = memcmp(&value, &expected, sizeof value) == 0;
        if (cell->check_ok)
            snprintf(cell->note, sizeof cell->note, "bits = %s's%s", other,
                     verdict == 1 ? "; fast path decided"
                     : verdict == 0 ? "; fast path declined (exact path ran)" : "");
        else
            snprintf(cell->note, sizeof cell->note, "wrong result: %a, %s gives %a", value,
                     other, expected);
    } else {
        const double bound = (double)n * DBL_EPSILON * abs_sum;
        const double err = fabs(value - exact);
        cell->check_ok = err <= bound;
        snprintf(cell->note, sizeof cell->note, "%s|err| = %.2g of the bound n eps sum|x y|",
                 cell->check_ok ? "" : "wrong result: ", bound > 0 ? err / bound : err);
    }
cleanup:
    return st;
}

static void speed_write(FILE *f, const dot_opts *o, krill_ctx *ctx, const dot_method *m,
                        int n_methods, const speed_row *rows, int n_rows, int markdown)
{
    const int ref = 0;   /* the first method is the reference of the ratios */
    if (markdown) {
        fprintf(f, "### DOT speed on %s\n\nphi = %g; per call: median over %d batches of "
                   "batch time / calls (a batch is about %g ms of calls, at least one; %d "
                   "warm-up calls first; %s); `copies` pairs x, y rotated so that the data "
                   "pass 256 MiB; bytes = 16 n; first table: microseconds per dot (time / %s "
                   "time), second: effective GB/s = 16 n / time.\n\n",
                krill_ctx_describe(ctx), o->phi, o->reps, 1e3 * BATCH_SECONDS, o->warmup,
                krill_on_gpu(ctx) ? "CUDA events" : "host clock", m[ref].name);
        fprintf(f, "| n | copies |");
        for (int k = 0; k < n_methods; k++) fprintf(f, " %s us (ratio) |", m[k].name);
        fprintf(f, "\n|---:|---:|");
        for (int k = 0; k < n_methods; k++) fprintf(f, "---:|");
        fprintf(f, "\n");
    } else {
        fprintf(f, "%-10s %3s", "n", "cp");
        for (int k = 0; k < n_methods; k++) fprintf(f, " %22s", m[k].name);
        fprintf(f, "\n");
    }
    for (int r = 0; r < n_rows; r++) {
        fprintf(f, markdown ? "| 2^%d | %d |" : "2^%-8d %3d", (int)log2((double)rows[r].n),
                rows[r].copies);
        for (int k = 0; k < n_methods; k++) {
            const speed_cell *c = &rows[r].cell[k];
            const double t_ref = rows[r].cell[ref].seconds;
            char text[64];
            if (c->seconds > 0 && t_ref > 0)
                snprintf(text, sizeof text, "%.1f (%.2f)", c->seconds * 1e6, c->seconds / t_ref);
            else if (c->seconds > 0)
                snprintf(text, sizeof text, "%.1f", c->seconds * 1e6);
            else
                snprintf(text, sizeof text, "n/a");
            fprintf(f, markdown ? " %s |" : " %22s", text);
        }
        fprintf(f, "\n");
    }
    if (markdown) {
        fprintf(f, "\n| n |");
        for (int k = 0; k < n_methods; k++) fprintf(f, " %s GB/s |", m[k].name);
        fprintf(f, "\n|---:|");
        for (int k = 0; k < n_methods; k++) fprintf(f, "---:|");
        fprintf(f, "\n");
        for (int r = 0; r < n_rows; r++) {
            fprintf(f, "| 2^%d |", (int)log2((double)rows[r].n));
            for (int k = 0; k < n_methods; k++) {
                const speed_cell *c = &rows[r].cell[k];
                if (c->seconds > 0)
                    fprintf(f, " %.3g |", 16.0 * (double)rows[r].n / c->seconds * 1e-9);
                else
                    fprintf(f, " n/a |");
            }
            fprintf(f, "\n");
        }
        int checked = 0, problems = 0;
        for (int r = 0; r < n_rows; r++)
            for (int k = 0; k < n_methods; k++) {
                const speed_cell *c = &rows[r].cell[k];
                checked += c->seconds > 0 && c->note[0];
                problems += c->seconds <= 0 || !c->check_ok;
            }
        fprintf(f, "\nChecks (reproducible modes: the bits of %s; plain: within n eps "
                   "sum|x_i y_i| of exact mode): %d run, %d not measured or failed%s\n",
                krill_on_gpu(ctx) ? "the CPU" : "one thread", o->check ? checked : 0,
                problems, problems ? ":\n" : ".");
        for (int r = 0; r < n_rows; r++)
            for (int k = 0; k < n_methods; k++)
                if (rows[r].cell[k].seconds <= 0 || !rows[r].cell[k].check_ok)
                    fprintf(f, "- 2^%d, %s: %s\n", (int)log2((double)rows[r].n), m[k].name,
                            rows[r].cell[k].note[0] ? rows[r].cell[k].note : "check off");
    }
}

int run_speed(const dot_opts *o)
{
    int rc = 1;
    krill_status st = KRILL_OK;
    krill_ctx *ctx = NULL, *ref = NULL;
    bench_clock *clock = NULL;
    krill_vec *xs[MAX_COPIES] = { NULL }, *ys[MAX_COPIES] = { NULL };
    krill_vec *xr = NULL, *yr = NULL;
    double *x = NULL, *y = NULL, *slots = NULL, *slot_ref = NULL;
    double *stats = NULL;        /* ctx memory: x's then y's stats, 4 doubles per copy */
    double *rep_times = NULL;
    dot_method m[MAX_METHODS];
    speed_row rows[MAX_LIST];
    int n_rows = 0, copies = 0;
    long failures = 0;
    FILE *csv = NULL;

    const int n_methods = speed_methods(o->device, m);
    if (o->device == KRILL_DEVICE_CUDA && krill_cuda_device_count() <= 0) {
        printf("bench_dot speed: skipped: no CUDA device here (use --device cpu for the CPU "
               "table)\n");
        rc = EXIT_SKIPPED;
        goto cleanup;
    }
    KRILL_TRY(bench_ctx_create(o->device, o->threads, &ctx));
    /* the check's second context: the CPU for a GPU run, one thread for a CPU run */
    if (o->check) KRILL_TRY(bench_ctx_create(KRILL_DEVICE_CPU, krill_on_gpu(ctx) ? 0 : 1, &ref));
    KRILL_TRY(bench_clock_create(ctx, &clock));
    KRILL_ALLOC(rep_times, o->reps);
    KRILL_MEM_ALLOC(ctx, slots, MAX_COPIES);
    KRILL_MEM_ALLOC(ctx, stats, 4 * MAX_COPIES);
    if (ref) KRILL_MEM_ALLOC(ref, slot_ref, 1);
    printf("speed: %s; phi = %g; clock %s%s%s\n", krill_ctx_describe(ctx), o->phi,
           bench_clock_kind(clock), ref ? "; check against " : "",
           ref ? krill_ctx_describe(ref) : "");
    for (int s = 0; s < o->n_sizes; s++) {
        const int64_t n = (int64_t)1 << o->log2_sizes[s];
        speed_row *row = &rows[n_rows++];
        double exact = 0.0, abs_sum = 0.0;
        memset(row, 0, sizeof *row);
        row->n = n;
        copies = (int)ceil(CACHE_FLUSH_BYTES / (16.0 * (double)n));
        copies = copies < 1 ? 1 : copies > MAX_COPIES ? MAX_COPIES : copies;
        row->copies = copies;
        KRILL_ALLOC(x, n);
        KRILL_ALLOC(y, n);
        KRILL_TRY(krill_gen_dot_vectors(n, o->phi, 1, x, y));
        for (int c = 0; c < copies; c++) {
            KRILL_TRY(krill_vec_create(ctx, n, &xs[c]));
            KRILL_TRY(krill_vec_create(ctx, n, &ys[c]));
            KRILL_TRY(krill_vec_upload(xs[c], x));
            KRILL_TRY(krill_vec_upload(ys[c], y));
            KRILL_TRY(krill_ozaki_stats(ctx, n, krill_vec_data(xs[c]), stats + 4 * c));
            KRILL_TRY(krill_ozaki_stats(ctx, n, krill_vec_data(ys[c]), stats + 4 * c + 2));
        }
        if (ref) {
            const dot_method exact_mode = dot_make_method("exact", DOT_VEC, KRILL_REPRO_OZAKI, 0);
            KRILL_TRY(krill_vec_wrap(ref, n, x, &xr));
            KRILL_TRY(krill_vec_wrap(ref, n, y, &yr));
            if (dot_value(ref, &exact_mode, n, xr, yr, NULL, slot_ref, &exact) != KRILL_OK) {
                fprintf(stderr, "bench_dot: exact reference failed: %s\n", krill_last_error());
                exact = NAN;
            }
            for (int64_t i = 0; i < n; i++) abs_sum += fabs(x[i] * y[i]);
        }
        for (int k = 0; k < n_methods; k++) {
            speed_cell *cell = &row->cell[k];
            double median = 0.0;
            if (time_method(ctx, clock, &m[k], n, copies, xs, ys, stats, slots, o, rep_times,
                            &median, &cell->batch) != KRILL_OK) {
                snprintf(cell->note, sizeof cell->note, "%s", krill_last_error());
                continue;
            }
            cell->seconds = median;
            if (ref) {
                if (check_method(ctx, ref, &m[k], n, xs[0], ys[0], xr, yr, stats, slots,
                                 slot_ref, exact, abs_sum, cell) != KRILL_OK) {
                    snprintf(cell->note, sizeof cell->note, "check failed: %s",
                             krill_last_error());
                    cell->check_ok = 0;
                }
                if (!cell->check_ok) failures++;
            } else {
                cell->check_ok = 1;
            }
        }
        printf("n = 2^%d done (%d copies)\n", o->log2_sizes[s], copies);
        fflush(stdout);
        for (int c = 0; c < copies; c++) {
            krill_vec_destroy(&xs[c]);
            krill_vec_destroy(&ys[c]);
        }
        krill_vec_destroy(&xr);
        krill_vec_destroy(&yr);
        krill_free(x);
        krill_free(y);
        x = y = NULL;
    }
    (void)krill_ctx_set_repro(ctx, KRILL_REPRO_OFF, 0);
    printf("\n");
    speed_write(stdout, o, ctx, m, n_methods, rows, n_rows, 0);
    for (int r = 0; r < n_rows; r++)
        for (int k = 0; k < n_methods; k++)
            if (rows[r].cell[k].note[0])
                printf("  2^%d %s: %s\n", (int)log2((double)rows[r].n), m[k].name,
                       rows[r].cell[k].note);
    if (o->md_path) {
        FILE *md = fopen(o->md_path, "w");
        if (!md) {
            st = krill_error(KRILL_ERR_IO, "cannot write %s", o->md_path);
            goto cleanup;
        }
        speed_write(md, o, ctx, m, n_methods, rows, n_rows, 1);
        fclose(md);
    }
    if (o->csv_path) {
        csv = fopen(o->csv_path, "w");
        if (!csv) {
            st = krill_error(KRILL_ERR_IO, "cannot write %s", o->csv_path);
            goto cleanup;
        }
        fprintf(csv, "device,phi,n,copies,method,median_s,batch,bytes,gb_per_s,ratio,check_ok,"
                     "note\n");
        for (int r = 0; r < n_rows; r++)
            for (int k = 0; k < n_methods; k++) {
                const speed_cell *c = &rows[r].cell[k];
                const double bytes = 16.0 * (double)rows[r].n;
                const double t_ref = rows[r].cell[0].seconds;
                fprintf(csv, "%s,%g,%lld,%d,\"%s\",%.6e,%d,%.0f,%.3f,%.4f,%d,\"%s\"\n",
                        krill_on_gpu(ctx) ? "gpu" : "cpu", o->phi, (long long)rows[r].n,
                        rows[r].copies, m[k].name, c->seconds, c->batch, bytes,
                        c->seconds > 0 ? bytes / c->seconds * 1e-9 : 0.0,
                        c->seconds > 0 && t_ref > 0 ? c->seconds / t_ref : 0.0, c->check_ok,
                        c->note);
            }
    }
    if (failures) printf("wrong result: %ld check(s) failed\n", failures);
    rc = failures ? 1 : 0;
cleanup:
    if (st != KRILL_OK) fprintf(stderr, "bench_dot: %s\n", krill_last_error());
    if (csv) fclose(csv);
    for (int c = 0; c < MAX_COPIES; c++) {
        krill_vec_destroy(&xs[c]);
        krill_vec_destroy(&ys[c]);
    }
    krill_vec_destroy(&xr);
    krill_vec_destroy(&yr);
    krill_free(x);
    krill_free(y);
    krill_free(rep_times);
    if (ctx) krill_mem_free(ctx, slots);
    if (ctx) krill_mem_free(ctx, stats);
    if (ref) krill_mem_free(ref, slot_ref);
    bench_clock_destroy(&clock);
    krill_ctx_destroy(&ctx);
    krill_ctx_destroy(&ref);
    return rc;
}

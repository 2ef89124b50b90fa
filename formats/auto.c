/* formats/auto.c - `auto`: choose a storage format for a matrix, build it, say why.
 *
 * "auto" estimates, for every registered format that has an implementation on the
 * context's device, the bytes it would store (the RBP paper's formulas (1)-(6) with krill's
 * widths) and the time of one SpMV from a per-device model, then builds only the format
 * the model calls fastest. "auto:measure" builds every candidate the model puts within
 * AUTO_MEASURE_FACTOR of the best, times each with krill_mat_time_spmv, keeps the fastest
 * and frees the rest. Either way krill_mat_format() names the format built and
 * krill_mat_choice() gives the reason. The model, its constants and where they come from
 * are in doc/auto.md; the constants are first estimates, to be calibrated on an H100.
 *
 * Model of one SpMV on a device:
 *   t = launches * T_launch + max(traffic / bandwidth, steps * T_step)
 * traffic: the bytes the SpMV moves (matrix bytes it reads, x once, y written), each part
 *   divided by the bandwidth efficiency of its access pattern;
 * steps: the longest chain of entries that one thread sums alone (a row, for the formats
 *   that give each row to one thread): when one row is much longer than the rest, the
 *   SpMV waits for that thread however fast the others stream (the long-row case).
 * Rules on top of the model: a matrix with fewer than AUTO_TINY_NNZ entries (on the CPU
 * AUTO_CPU_SMALL_NNZ) gets csr; a
 * padded (ELL-family) format is not considered when it would store more than
 * AUTO_MAX_STORED_RATIO times csr's bytes, or more entries than its build accepts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "formats/formats_impl.h"

/* ---- rules ---------------------------------------------------------------------------- */

/* Below this many entries every format's SpMV is a few microseconds of launch or
 * fork/join latency and they differ by less than one cache's worth of bytes: csr, whose
 * build is a copy, is chosen whatever the estimates say. */
#define AUTO_TINY_NNZ 4096
/* On the CPU the same holds up to this many entries (about 12 MB of csr, inside the last-
 * level cache of the CPUs we time on): the SpMV is fork/join and scheduling, and csr's
 * static nnz-balanced blocks have the least of it. Measured on 16 threads of the H100
 * host: bcsstk13 (84k entries) csr 17 us, rbp-csr 29 us; bcsstk15 (118k) 21 vs 33 us. */
#define AUTO_CPU_SMALL_NNZ (1 << 20)
/* A padded format storing more than this multiple of csr's bytes is not considered: memory
 * is what the RBP formats exist to save, and ELL-R stores its padding although it does not
 * read it (a matrix with one long row would make ELL-R's N x K array enormous). */
#define AUTO_MAX_STORED_RATIO 2.0
/* Estimated times within this fraction of each other are a tie (the model is not finer
 * than that); the tie goes to the format storing fewer bytes. */
#define AUTO_TIE 0.02
/* auto:measure builds and times the candidates whose estimate is within this factor of
 * the best estimate: wide enough to cover the model's error, narrow enough not to build a
 * format the model is sure about. */
#define AUTO_MEASURE_FACTOR 2.0
/* auto:measure: untimed SpMVs per candidate (first touch, caches, clocks), then timed
 * ones, of which the median is kept. */
#define AUTO_MEASURE_WARMUP 2
#define AUTO_MEASURE_REPS 7

/* ---- GPU model (an H100 SXM; see doc/auto.md) --------------------------------------- */

/* Bytes per second of a well-coalesced streaming kernel: 90% of the H100 SXM's 3.35 TB/s
 * HBM3 peak, what copy kernels reach. */
#define GPU_BANDWIDTH 3.0e12
/* Seconds per kernel launch as seen by events on a stream (a few microseconds). */
#define GPU_LAUNCH 3.0e-6
/* Seconds per entry for one thread summing a row alone: a column index load then the
 * dependent x gather, two HBM latencies (~0.6 us together) per entry when no other warp
 * hides them, overlapped about two-fold by the unrolled loop. */
#define GPU_STEP 0.3e-6
/* Bytes fetched at once (one sector): consecutive threads of an ELL-family kernel read
 * 4 values or 8 column indices of 4 neighbouring rows per sector. */
#define GPU_SECTOR 32
/* Bandwidth efficiency of one thread per row on row-major arrays (the CSR part of the
 * isolated entries in RBP-ELL and RBP-ELL-R): a warp's loads touch 32 different rows'
 * sectors per step instead of one run of sectors, so the L1 serves 32 transactions where a
 * coalesced load needs 8. A guess until calibrated; it applies only above GPU_SHORT_ROWS
 * isolated entries per row, below which one thread per row is the best CSR kernel
 * (formats/csr.cu, measured on an H100). */
#define GPU_ROWMAJOR_EFFICIENCY 0.5
#define GPU_SHORT_ROWS 4.0
/* The GPU csr kernel choice (krill_gpu_lanes_per_row, formats/csr.c); rows longer than
 * CSR_LONG_ROUNDS * lanes go to formats/csr.cu's long-row path, whole blocks summing chunks
 * of CSR_CHUNK entries (two more launches), then one warp per long row adding its chunk
 * sums. */
#define CSR_LONG_ROUNDS 128
#define CSR_CHUNK 4096
#define CSR_CHUNK_STEPS 16              /* entries per thread of one chunk (4096 / 256) */
/* segscan's bandwidth efficiency: per element it reads 13 bytes and adds five shuffle
 * steps of the halving-threshold tree, work a row-parallel kernel does not do. Measured on
 * an H100 (bench/run_formats.sh): segscan moved its bytes at 0.85-0.94 of csr's GB/s on
 * poisson3d:160, band1, band101, and at 1.07 of it on band1x. Its layout (formats/segscan.c, KRILL_SEGSCAN_* in formats_impl.h) gives the
 * bytes exactly, see estimate_segscan. */
#define SEGSCAN_EFFICIENCY 0.9

/* ---- CPU model ----------------------------------------------------------------------- */

/* Bytes per second one core streams (sums 12-byte entries with an x gather), and the most
 * the memory system gives all cores together; the CPU bandwidth is threads x the first,
 * capped by the second. A core sums one entry in 12 / CPU_CORE_BANDWIDTH seconds. */
#define CPU_CORE_BANDWIDTH 8.0e9
#define CPU_MAX_BANDWIDTH 100.0e9
/* Seconds per OpenMP parallel region (fork and join of the team). */
#define CPU_FORK_JOIN 3.0e-6
/* Bytes of a cache line: ELL's column-major slots are read a line (8 rows) at a time. */
#define CPU_LINE 64
/* Bandwidth efficiency of the column-major (ELL-family) arrays on the CPU: a thread sums
 * a row from K streams N entries apart, one page each for large N, which the prefetchers
 * and the TLB serve worse than CSR's one stream. Measured on 16 threads of the H100 host
 * (bench/run_formats.sh DEVICE=cpu), ell's bytes over its time relative to csr's: 0.47 on
 * band1, 0.68 on band3, 0.3 on band101, 0.57 on rand100, 0.75 on poisson3d:160, 0.37 on
 * elasticity3d:160,64,64. */
#define CPU_COLUMN_MAJOR_EFFICIENCY 0.45
/* segscan on the CPU, likewise: 0.62 on band1, 0.6 on band3, 0.5 on poisson3d:160. */
#define CPU_SEGSCAN_EFFICIENCY 0.5
/* rbp-csr on the CPU pays three row pointers and a run loop per row: on rows shorter than
 * CPU_RBP_SHORT_ROWS (mean) its bytes went at 0.6 of csr's rate (band1 0.6, band3 0.55,
 * poisson3d:160 0.8); on long rows at csr's (band101 0.95, elasticity3d 0.96). */
#define CPU_RBP_CSR_SHORT_EFFICIENCY 0.6
#define CPU_RBP_SHORT_ROWS 8.0

/* The model's view of a device. */
typedef struct auto_device {
    int gpu;
    double bandwidth;        /* bytes / s */
    double launch;           /* seconds per kernel or parallel region */
    double step;             /* seconds per entry of one thread's serial chain */
    int line;                /* bytes fetched at once: sector (GPU) or cache line (CPU) */
} auto_device;

/* What the chooser reads from the CSR: row and run statistics, and how much of a
 * column-major padded array a loop ending at each row's length touches. */
typedef struct auto_profile {
    krill_format_stats s;    /* n_rows ... empty_rows, n_val ... kc */
    double row_sd;           /* standard deviation of the row lengths */
    int64_t longest_short;   /* longest row that GPU csr's row kernel sums (not a long row) */
    double touched_val;      /* bytes of ELL values in lines an ELL-R loop reads */
    double touched_col;      /* bytes of ELL column indices likewise */
    double xy;               /* x read once, y written: 8 (n_cols + n_rows) */
} auto_profile;

/* auto_estimate.skip of a format the registry lacks on the device: not worth a mention */
static const char SKIP_ABSENT[] = "absent";

/* One format's estimate. */
typedef struct auto_estimate {
    const char *name;
    double stored;           /* bytes the format would store */
    double traffic;          /* bytes one SpMV moves, each part over its efficiency */
    double steps;            /* longest serial chain of entries of one thread */
    int launches;
    double seconds;          /* the model's time */
    const char *skip;        /* why it is not a candidate: NULL (it is one), SKIP_ABSENT
                                (not registered on this device), "padding" or "size" */
    double measured;         /* auto:measure: median seconds (0: not timed) */
} auto_estimate;

/* ---- the estimates ------------------------------------------------------------------- */

static double csr_stored(const auto_profile *p, const auto_device *d)
{
    const krill_format_stats *s = &p->s;
    /* GPU: 4-byte offsets unless nnz needs 8 (formats/csr.cu); CPU: 8-byte offsets */
    const double offset = d->gpu && s->nnz <= INT32_MAX ? 4.0 : 8.0;
    return offset * (double)(s->n_rows + 1) + 12.0 * (double)s->nnz;
}

/* Lanes per row of the GPU csr kernel (formats/csr.cu's rule). */
static int csr_lanes(const krill_format_stats *s)
{
    return krill_gpu_lanes_per_row(s->mean_row_nnz, s->n_rows, 1);
}

static void estimate_csr(const auto_profile *p, const auto_device *d, auto_estimate *e)
{
    const double k = (double)p->s.max_row_nnz;
    e->stored = csr_stored(p, d);
    e->traffic = e->stored + p->xy;
    e->launches = 1;
    e->steps = k;                           /* CPU: a row is never split between threads */
    if (d->gpu) {
        const int lanes = csr_lanes(&p->s);
        const double long_min = (double)CSR_LONG_ROUNDS * lanes;
        e->steps = ceil(k / lanes);
        if (k > long_min) {                 /* long rows: chunked by whole blocks */
            e->launches = 3;
            e->steps = fmax(ceil((double)p->longest_short / lanes),
                            CSR_CHUNK_STEPS + ceil(k / CSR_CHUNK / 32.0));
        }
    }
}

/* Efficiency of reading a column-major (ELL-family) array (CPU_COLUMN_MAJOR_EFFICIENCY). */
static double column_major_efficiency(const auto_device *d)
{
    return d->gpu ? 1.0 : CPU_COLUMN_MAJOR_EFFICIENCY;
}

/* ELL: every slot's column index is read (padding is recognised by it); values only in
 * the lines that hold a real entry. */
static void estimate_ell(const auto_profile *p, const auto_device *d, auto_estimate *e)
{
    const double nk = (double)p->s.n_rows * (double)p->s.max_row_nnz;
    e->stored = 12.0 * nk;
    e->traffic = (4.0 * nk + p->touched_val) / column_major_efficiency(d) + p->xy;
    e->launches = 1;
    e->steps = (double)p->s.max_row_nnz;
    if (nk > INT32_MAX) e->skip = "size";          /* N K above 2^31: the build refuses */
}

static void estimate_ellr(const auto_profile *p, const auto_device *d, auto_estimate *e)
{
    const double n = (double)p->s.n_rows, nk = n * (double)p->s.max_row_nnz;
    e->stored = 12.0 * nk + 4.0 * n;
    e->traffic = (p->touched_val + p->touched_col) / column_major_efficiency(d) + 4.0 * n +
                 p->xy;
    e->launches = 1;
    e->steps = (double)p->s.max_row_nnz;
    if (nk > INT32_MAX) e->skip = "size";          /* N K above 2^31: the build refuses */
}

/* The GPU rbp-csr sub-warp kernel (formats/rbp_csr.cu) finds each value's run by walking
 * the row's (first, last) pairs, one dependent load per run crossed, so rows of many short
 * runs and few lanes' worth of entries pay latency that csr does not. Measured on an H100
 * (bench/run_formats.sh), its GB/s over csr's: 0.52 on elasticity3d:160,64,64 (runs of 9,
 * 16 lanes), 0.48-0.64 on bcsstk13/15, 0.92 on poisson3d:160, 0.81 on band101 (runs of 101).
 * RBP_CSR_GPU_EFFICIENCY applies when the mean run is shorter than RBP_CSR_LONG_RUN, and
 * RBP_CSR_GPU_STEP_FACTOR scales its serial chain (two loops and the run walk per row). */
#define RBP_CSR_GPU_EFFICIENCY 0.5
#define RBP_CSR_LONG_RUN 32.0
#define RBP_CSR_GPU_STEP_FACTOR 2.0

/* Formula (4): 12 (N + 1) + 4 N_col + 8 N_val + 12 N_non. On the GPU (formats/rbp_csr.cu)
 * a sub-warp per row chosen by csr's rule, lanes striding over the row's run values and
 * isolated entries (coalesced); on the CPU a thread per row. */
static void estimate_rbp_csr(const auto_profile *p, const auto_device *d, auto_estimate *e)
{
    const krill_format_stats *s = &p->s;
    e->stored = 12.0 * (double)(s->n_rows + 1) + 4.0 * (double)s->n_col +
                8.0 * (double)s->n_val + 12.0 * (double)s->n_non;
    const double mean_run = s->n_col > 0 ? 2.0 * (double)s->n_val / (double)s->n_col : 0.0;
    const double efficiency =
        d->gpu ? (s->n_col > 0 && mean_run < RBP_CSR_LONG_RUN ? RBP_CSR_GPU_EFFICIENCY : 1.0)
               : (s->mean_row_nnz < CPU_RBP_SHORT_ROWS ? CPU_RBP_CSR_SHORT_EFFICIENCY : 1.0);
    e->traffic = e->stored / efficiency + p->xy;
    e->launches = 1;
    e->steps = d->gpu ? RBP_CSR_GPU_STEP_FACTOR * ceil((double)s->max_row_nnz / csr_lanes(s))
                      : (double)s->max_row_nnz;
    if (s->n_val > INT32_MAX || s->n_non > INT32_MAX) e->skip = "size";   /* 4-byte offsets */
}

/* Formula (5) (with_len = 0) and (6): the compressed ELL (8 N K_v + 4 N K_c, + 4 N row
 * lengths for -r) and the CSR part of the isolated entries (12 N_non + 4 (N + 1)). Algorithm
 * 5 (formats/rbp_ell.cu): one thread per row, its loop stopping at the row's end, so of the
 * compressed ELL it reads about the fraction of slots an ELL-R loop reads; the CSR part is
 * one thread per row on row-major arrays (GPU_ROWMAJOR_EFFICIENCY). */
static void estimate_rbp_ell_any(const auto_profile *p, const auto_device *d, int with_len,
                                 auto_estimate *e)
{
    const krill_format_stats *s = &p->s;
    const double n = (double)s->n_rows, nk = n * (double)s->max_row_nnz;
    const double ell = 8.0 * n * (double)s->kv + 4.0 * n * (double)s->kc;
    const double csr_part = 12.0 * (double)s->n_non + 4.0 * (n + 1.0);
    const double lengths = with_len ? 4.0 * n : 0.0;
    const double read = nk > 0 ? (p->touched_val + p->touched_col) / (12.0 * nk) : 0.0;
    const double isolated_per_row = n > 0 ? (double)s->n_non / n : 0.0;
    const double efficiency =
        d->gpu ? (isolated_per_row > GPU_SHORT_ROWS ? GPU_ROWMAJOR_EFFICIENCY : 1.0)
               : (s->mean_row_nnz < CPU_RBP_SHORT_ROWS ? CPU_RBP_CSR_SHORT_EFFICIENCY : 1.0);
    e->stored = ell + csr_part + lengths;
    e->traffic = read * ell / column_major_efficiency(d) + csr_part / efficiency + lengths +
                 p->xy;
    e->launches = 1;
    e->steps = (double)s->max_row_nnz;
    if (n * (double)s->kv > INT32_MAX || s->n_non > INT32_MAX)
        e->skip = "size";                           /* the build refuses */
}

static void estimate_rbp_ell(const auto_profile *p, const auto_device *d, auto_estimate *e)
{
    estimate_rbp_ell_any(p, d, 0, e);
}

static void estimate_rbp_ellr(const auto_profile *p, const auto_device *d, auto_estimate *e)
{
    estimate_rbp_ell_any(p, d, 1, e);
}

/* Segmented scan (formats/segscan.c): a stream of L = nnz + empty rows elements, padded to
 * whole warp tiles, of 13 bytes each (value, column, hint byte), 4 bytes of row heads per
 * warp tile, 16 bytes of partial sums per tile and 12 per span (a row crossing a tile
 * edge: at most one per tile edge, counted as one per tile). One kernel, and a fix-up
 * kernel when rows cross tiles; no thread owns a row, so no serial chain. */
static void estimate_segscan(const auto_profile *p, const auto_device *d, auto_estimate *e)
{
    const double tile = KRILL_SEGSCAN_WARP_TILE;
    const double len = ceil((double)(p->s.nnz + p->s.empty_rows) / tile) * tile;
    const double tiles = ceil(len / KRILL_SEGSCAN_TILE);
    e->stored = 13.0 * len + 4.0 * (len / tile) + 16.0 * tiles + 12.0 * tiles;
    e->traffic = e->stored / (d->gpu ? SEGSCAN_EFFICIENCY : CPU_SEGSCAN_EFFICIENCY) + p->xy;
    e->launches = p->s.max_row_nnz > 1 ? 2 : 1;
    e->steps = 0.0;
}

/* The formats the chooser knows, csr first (the reference of every ratio). A format
 * becomes a candidate only once the registry has it for the context's device. */
static const struct {
    const char *name;
    int padded;              /* an ELL layout: subject to AUTO_MAX_STORED_RATIO */
    void (*estimate)(const auto_profile *, const auto_device *, auto_estimate *);
} known[] = {
    {"csr", 0, estimate_csr},           {"ell", 1, estimate_ell},
    {"ellr", 1, estimate_ellr},         {"rbp-csr", 0, estimate_rbp_csr},
    {"rbp-ell", 1, estimate_rbp_ell},   {"rbp-ellr", 1, estimate_rbp_ellr},
    {"segscan", 0, estimate_segscan},
};
#define N_KNOWN (sizeof known / sizeof known[0])

/* ---- profile and choice -------------------------------------------------------------- */

/* Bytes of a column-major N x K array of `width`-byte slots that a loop ending at each
 * row's length reads when `line` bytes are fetched at once: each group of line / width
 * consecutive rows costs one line per slot up to its longest row. Groups in parallel; each
 * term is an integer, so the sum is exact (below 2^53) in any order. */
static double touched_bytes(const krill_csr *a, int line, int width, int threads)
{
    const int32_t group = line / width;
    const int64_t groups = ((int64_t)a->n_rows + group - 1) / group;
    double bytes = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : bytes) num_threads(threads) \
    if (a->nnz >= KRILL_BUILD_PARALLEL_MIN)
    for (int64_t g = 0; g < groups; g++) {
        const int64_t first = g * group;
        const int64_t last = a->n_rows - first < group ? a->n_rows : first + group;
        int64_t longest = 0;
        for (int64_t i = first; i < last; i++) {
            const int64_t len = a->row_ptr[i + 1] - a->row_ptr[i];
            if (len > longest) longest = len;
        }
        bytes += (double)line * (double)longest;
    }
    return bytes;
}

/* The profile of a, in one parallel pass over its rows (the context's threads): the row
 * statistics and the runs (the fields of krill_csr_row_stats and krill_csr_run_stats, the
 * latter Algorithm 3 of the RBP paper), the spread of the row lengths, the longest row GPU
 * csr's row kernel sums, then the ELL lines an ELL-R loop touches. Every sum but the
 * spread's is of integers, so the profile, and the choice, are the same on any thread count
 * (the spread only appears in the reason). `rows_only`: the row statistics and the spread
 * alone (a small matrix gets csr without estimates). One read of row_ptr and, unless
 * rows_only, one of col, then two of row_ptr for the lines. */
static void profile(const krill_csr *a, const auto_device *d, int threads, int rows_only,
                    auto_profile *p)
{
    krill_format_stats *s = &p->s;
    int64_t max_len = 0, empty = 0, n_val = 0, n_col = 0, n_non = 0, kv = 0, kc = 0;
    int64_t longest_short = 0, long_min;
    double sq = 0.0;
    memset(p, 0, sizeof *p);
    s->n_rows = a->n_rows;
    s->n_cols = a->n_cols;
    s->nnz = a->nnz;
    s->mean_row_nnz = a->n_rows ? (double)a->nnz / a->n_rows : 0.0;
    long_min = (int64_t)CSR_LONG_ROUNDS * csr_lanes(s);
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : empty, n_val, \
    n_col, n_non, sq) reduction(max : max_len, kv, kc, longest_short) \
    if (a->nnz >= KRILL_BUILD_PARALLEL_MIN)
    for (int32_t i = 0; i < a->n_rows; i++) {
        const int64_t len = a->row_ptr[i + 1] - a->row_ptr[i];
        const double dev = (double)len - s->mean_row_nnz;
        int64_t row_val = 0, row_col = 0, isolated = 0;
        if (len > max_len) max_len = len;
        if (len == 0) empty++;
        if (len <= long_min && len > longest_short) longest_short = len;
        sq += dev * dev;
        if (!rows_only) krill_csr_row_runs(a, i, &row_val, &row_col, &isolated);
        n_non += isolated;
        n_val += row_val;
        n_col += row_col;
        if (row_val > kv) kv = row_val;
        if (row_col > kc) kc = row_col;
    }
    s->max_row_nnz = max_len;
    s->empty_rows = empty;
    s->n_val = n_val;
    s->n_col = n_col;
    s->n_non = n_non;
    s->kv = kv;
    s->kc = kc;
    p->longest_short = longest_short;
    p->row_sd = a->n_rows > 0 ? sqrt(sq / a->n_rows) : 0.0;
    if (!rows_only) {
        p->touched_val = touched_bytes(a, d->line, (int)sizeof(double), threads);
        p->touched_col = touched_bytes(a, d->line, (int)sizeof(int32_t), threads);
    }
    p->xy = 8.0 * ((double)a->n_cols + (double)a->n_rows);
}

static void device_model(krill_ctx *ctx, auto_device *d)
{
    memset(d, 0, sizeof *d);
    d->gpu = krill_on_gpu(ctx);
    if (d->gpu) {
        d->bandwidth = GPU_BANDWIDTH;
        d->launch = GPU_LAUNCH;
        d->step = GPU_STEP;
        d->line = GPU_SECTOR;
    } else {
        const int threads = krill_ctx_threads(ctx) > 0 ? krill_ctx_threads(ctx) : 1;
        d->bandwidth = fmin(threads * CPU_CORE_BANDWIDTH, CPU_MAX_BANDWIDTH);
        d->launch = CPU_FORK_JOIN;
        d->step = 12.0 / CPU_CORE_BANDWIDTH;
        d->line = CPU_LINE;
    }
}

/* 1 when the registry has `name` with an implementation on this device */
static int available(const char *name, int gpu)
{
    const char *param = NULL;
    const krill_format_entry *e = krill_format_find(name, &param);
    return e && param == NULL && (gpu ? e->cuda != NULL : e->cpu != NULL);
}

/* Estimate every known format (est[0] is csr); returns how many there are. */
static int estimate_all(const auto_profile *p, const auto_device *d, auto_estimate *est)
{
    const double csr_bytes = csr_stored(p, d);
    for (size_t f = 0; f < N_KNOWN; f++) {
        auto_estimate *e = &est[f];
        memset(e, 0, sizeof *e);
        e->name = known[f].name;
        known[f].estimate(p, d, e);
        e->seconds = e->launches * d->launch + fmax(e->traffic / d->bandwidth,
                                                    e->steps * d->step);
        if (!available(e->name, d->gpu))
            e->skip = SKIP_ABSENT;
        else if (!e->skip && known[f].padded && e->stored > AUTO_MAX_STORED_RATIO * csr_bytes)
            e->skip = "padding";
    }
    return (int)N_KNOWN;
}

/* The fastest candidate by the model; ties (AUTO_TIE) go to fewer stored bytes. */
static int best_estimate(const auto_estimate *est, int n)
{
    int best = -1;
    for (int f = 0; f < n; f++) {
        if (est[f].skip) continue;
        if (best < 0 || est[f].seconds < est[best].seconds * (1.0 - AUTO_TIE)) {
            best = f;
        } else if (est[f].seconds <= est[best].seconds * (1.0 + AUTO_TIE) &&
                   est[f].stored < est[best].stored) {
            best = f;
        }
    }
    return best;
}

/* ---- the two modes ------------------------------------------------------------------- */

/* Append text to the string in buf (size bytes), cutting it if it does not fit. */
static void append(char *buf, size_t size, const char *text)
{
    const size_t used = strlen(buf);
    if (used + 1 < size) strncat(buf, text, size - used - 1);
}

/* "rows 27 +- 3, longest 81" */
static void describe_rows(const auto_profile *p, char *buf, size_t len)
{
    snprintf(buf, len, "rows %.3g +- %.3g, longest %lld", p->s.mean_row_nnz, p->row_sd,
             (long long)p->s.max_row_nnz);
}

/* The rule before the model: few entries get csr (AUTO_TINY_NNZ, AUTO_CPU_SMALL_NNZ). */
static int small_matrix(const krill_ctx *ctx, const krill_csr *csr)
{
    return csr->nnz < (krill_on_gpu(ctx) ? AUTO_TINY_NNZ : AUTO_CPU_SMALL_NNZ);
}

/* Build the format the model calls fastest of est[0..n-1] and say why; a small matrix gets
 * csr by the rule first (est may then be NULL: it is not read). */
static krill_status choose_by_model(krill_ctx *ctx, const krill_csr *csr, const auto_profile *p,
                                    const auto_estimate *est, int n, krill_mat **out)
{
    krill_status st = KRILL_OK;
    krill_mat *m = NULL;
    char rows[96], next_text[64] = "", left_out[128] = "";
    int best, next = -1;
    describe_rows(p, rows, sizeof rows);
    if (small_matrix(ctx, csr)) {
        KRILL_TRY(krill_mat_build(ctx, csr, "csr", &m));
        snprintf(m->choice, sizeof m->choice, "csr: small matrix (%lld entries, under %d): "
                 "every format costs about one %s; %s", (long long)p->s.nnz,
                 krill_on_gpu(ctx) ? AUTO_TINY_NNZ : AUTO_CPU_SMALL_NNZ,
                 krill_on_gpu(ctx) ? "launch" : "parallel region", rows);
        goto done;
    }
    best = best_estimate(est, n);
    for (int f = 0; f < n; f++)
        if (f != best && !est[f].skip && (next < 0 || est[f].seconds < est[next].seconds))
            next = f;
    if (next >= 0)
        snprintf(next_text, sizeof next_text, "; next %s at %.2fx", est[next].name,
                 est[next].seconds / est[best].seconds);
    for (int f = 0; f < n; f++) {
        if (!est[f].skip || est[f].skip == SKIP_ABSENT) continue;
        append(left_out, sizeof left_out, left_out[0] ? ", " : "; left out: ");
        append(left_out, sizeof left_out, est[f].name);
        append(left_out, sizeof left_out, " (");
        append(left_out, sizeof left_out, est[f].skip);
        append(left_out, sizeof left_out, ")");
    }
    KRILL_TRY(krill_mat_build(ctx, csr, est[best].name, &m));
    snprintf(m->choice, sizeof m->choice,
             "%s: estimated %.2f of csr's bytes and %.2f of its SpMV time (%s model)%s; %s",
             est[best].name, est[best].stored / est[0].stored, est[best].seconds / est[0].seconds,
             krill_on_gpu(ctx) ? "gpu" : "cpu", next_text, rows);
    append(m->choice, sizeof m->choice, left_out);
done:
    *out = m;
    m = NULL;
cleanup:
    krill_mat_destroy(&m);
    return st;
}

/* A build that fails for want of memory or support leaves the candidate out of the
 * measurement; any other failure is an error. */
static int build_may_fail(krill_status st)
{
    return st == KRILL_ERR_ALLOC || st == KRILL_ERR_DEVICE_ALLOC || st == KRILL_ERR_UNSUPPORTED;
}

/* Build and time every candidate within AUTO_MEASURE_FACTOR of the best estimate; keep the
 * fastest. The reason lists each median ("csr 1.234e-05 s"), in the order timed. */
static krill_status choose_by_measure(krill_ctx *ctx, const krill_csr *csr,
                                      auto_estimate *est, int n, krill_mat **out)
{
    krill_status st = KRILL_OK;
    krill_mat *m = NULL, *fastest = NULL;
    int best = best_estimate(est, n), winner = -1, timed = 0, not_built = 0;
    char times[224] = "", skipped[96] = "";
    for (int f = 0; f < n; f++) {
        size_t used;
        if (est[f].skip || est[f].seconds > AUTO_MEASURE_FACTOR * est[best].seconds) continue;
        st = krill_mat_build(ctx, csr, est[f].name, &m);
        if (st != KRILL_OK && build_may_fail(st)) {
            used = strlen(skipped);
            snprintf(skipped + used, sizeof skipped - used, "%s%s", not_built ? ", " : "",
                     est[f].name);
            not_built++;
            st = KRILL_OK;
            continue;
        }
        KRILL_TRY(st);
        KRILL_TRY(krill_mat_time_spmv(m, AUTO_MEASURE_WARMUP, AUTO_MEASURE_REPS,
                                      &est[f].measured));
        used = strlen(times);
        snprintf(times + used, sizeof times - used, "%s%s %.3e s", timed ? ", " : "",
                 est[f].name, est[f].measured);
        timed++;
        if (winner < 0 || est[f].measured < est[winner].measured) {
            winner = f;
            krill_mat_destroy(&fastest);
            fastest = m;
        } else {
            krill_mat_destroy(&m);
        }
        m = NULL;
    }
    if (winner < 0) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "auto:measure: none of the candidate formats "
                         "could be built (%s); use csr", skipped);
        goto cleanup;
    }
    snprintf(fastest->choice, sizeof fastest->choice, "%s: fastest of %d measured on the %s "
             "(median of %d): ", est[winner].name, timed, krill_on_gpu(ctx) ? "gpu" : "cpu",
             AUTO_MEASURE_REPS);
    append(fastest->choice, sizeof fastest->choice, times);
    if (not_built) {
        append(fastest->choice, sizeof fastest->choice, "; not built: ");
        append(fastest->choice, sizeof fastest->choice, skipped);
    }
    *out = fastest;
    fastest = NULL;
cleanup:
    krill_mat_destroy(&m);
    krill_mat_destroy(&fastest);
    return st;
}

krill_status krill_auto_estimate(krill_ctx *ctx, const krill_csr *csr, const char *format,
                                 double *stored_bytes, double *seconds)
{
    krill_status st = KRILL_OK;
    auto_device d;
    auto_profile p;
    auto_estimate est[N_KNOWN];
    const int n = (int)N_KNOWN;
    int f = 0;
    while (f < n && strcmp(known[f].name, format) != 0) f++;
    KRILL_REQUIRE(f < n, "krill_auto_estimate: auto does not estimate format '%s'", format);
    device_model(ctx, &d);
    profile(csr, &d, ctx->threads, 0, &p);
    estimate_all(&p, &d, est);
    *stored_bytes = est[f].stored;
    *seconds = est[f].seconds;
cleanup:
    return st;
}

krill_status krill_auto_create(krill_ctx *ctx, const krill_csr *csr, const char *param,
                               krill_mat **out)
{
    krill_status st = KRILL_OK;
    auto_device d;
    auto_profile p;
    auto_estimate est[N_KNOWN];
    int n;
    *out = NULL;
    KRILL_REQUIRE(param == NULL || strcmp(param, "measure") == 0,
                  "format 'auto:%s': unknown option '%s' (auto takes none, or 'measure')",
                  param, param);
    device_model(ctx, &d);
    /* a small matrix gets csr by the rule: its reason needs the row statistics alone */
    if (!param && small_matrix(ctx, csr)) {
        profile(csr, &d, ctx->threads, 1, &p);
        st = choose_by_model(ctx, csr, &p, NULL, 0, out);
        goto cleanup;
    }
    profile(csr, &d, ctx->threads, 0, &p);
    n = estimate_all(&p, &d, est);
    if (best_estimate(est, n) < 0) {
        st = krill_error(KRILL_ERR_INTERNAL, "auto: no candidate format on this device");
        goto cleanup;
    }
    if (param)
        st = choose_by_measure(ctx, csr, est, n, out);
    else
        st = choose_by_model(ctx, csr, &p, est, n, out);
cleanup:
    return st;
}

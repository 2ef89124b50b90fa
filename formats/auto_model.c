/* formats/auto_model.c - the model behind `auto` (formats/auto.c): the profile of a CSR
 * and, for every format the chooser knows, the bytes it would store, the time of one SpMV
 * and the time of its build beyond csr's, on the context's device. The constants, and the
 * measurements they come from, are in doc/auto.md.
 *
 * One SpMV on a device:
 *   t = launches * T_launch + max(traffic / bandwidth, steps * T_step)
 * traffic: the bytes the SpMV moves (matrix bytes it reads, x once, y written), each part
 *   divided by the bandwidth efficiency of its access pattern;
 * steps: the longest chain of entries that one thread sums alone (a row, for the formats
 *   that give each row to one thread): when one row is much longer than the rest, the
 *   SpMV waits for that thread however fast the others stream (the long-row case).
 *
 * The build of a format beyond csr's (what choosing it costs before its first SpMV):
 *   build = scale * (c_entry * I + c_run * V + c_slot * S + c_row * N)
 * I: entries the build handles one at a time (segscan: all of them; the RBP formats: the
 *   isolated ones, N_non), V: values in runs (N_val; rbp-csr copies them as they lie),
 *   S: 12-byte slots of column-major ELL arrays written (ell: N K; rbp-ell: (8 N K_v +
 *   4 N K_c) / 12), N: rows; c_*: seconds per item, per format and device (build_costs
 *   below); scale: 1 on the GPU, the thread count's factor on the CPU. */
#include <math.h>
#include <string.h>

#include "formats/auto_model.h"

const char AUTO_SKIP_ABSENT[] = "absent";
const char AUTO_SKIP_UNCOUNTED[] = "uncounted";

/* A padded format storing more than this multiple of csr's bytes is not considered: memory
 * is what the RBP formats exist to save, and ELL-R stores its padding although it does not
 * read it (a matrix with one long row would make ELL-R's N x K array enormous). */
#define AUTO_MAX_STORED_RATIO 2.0

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
 * poisson3d:160, band1, band101, and at 1.07 of it on band1x. Its layout (formats/segscan.c,
 * KRILL_SEGSCAN_* in formats_impl.h) gives the bytes exactly, see estimate_segscan. */
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

/* ---- the build model ----------------------------------------------------------------- */

/* Seconds per item of a format's build beyond csr's (the formula at the top). Fitted by
 * least squares (relative error, 5 ms floor) to krill_mat_create's wall time minus csr's,
 * medians of 3, on band1, band3, band101, rand1, rand100, band1x, poisson3d:160 and
 * elasticity3d:160,64,64 (the CPU also elasticity3d:100,40,40):
 *   build-h1/bench/bench_gmres_formats --device D [--threads 16] --formats
 *       csr,ell,ellr,rbp-csr,rbp-ell,rbp-ellr,segscan,auto --maxit 100 (CPU: 1) --runs 3
 * GPU: an NVIDIA H200 and its 16-core host (build + transfer columns), where the RBP and
 * segscan builds are host work on 16 threads followed by the upload; the fit is within 10%
 * of every extra above 50 ms but ell's on elasticity3d (72 ms against 55 measured; rbp-ell
 * 504 against 516, rbp-csr 182 against 169, segscan 321 against 304), and up to 2x off on
 * the extras of 15-50 ms (band3's segscan: 12 against 25). CPU: 16 threads of that host;
 * within 20% of every extra above 25 ms but ellr's on elasticity3d:160,64,64 (40 against
 * 57), 2x off on poisson3d:160's segscan (11 against 23). A row's cost can be negative: csr's
 * own build spends more per row than ell's (GPU: three serial passes over the rows, for
 * the statistics, the 32-bit offsets and the long-row scan; CPU: the 8-byte offsets
 * copied and the row statistics on one thread), so on short rows ell builds faster than
 * csr (band1 on the GPU: 12.3 ms against 18.5). Much of the residual is the noise of one
 * host: the same build measured 10-15 ms apart between rounds on the small matrices. */
typedef struct build_cost {
    double entry;            /* per entry handled one at a time (I) */
    double run;              /* per value in a run copied as it lies (V) */
    double slot;             /* per 12-byte slot of column-major ELL array (S) */
    double row;              /* per row (N) */
} build_cost;

/* The CPU constants were measured on 16 threads, where the CPU model's bandwidth is at its
 * cap (CPU_MAX_BANDWIDTH); fewer threads scale them as the model's bandwidth falls: 6.25x
 * at 2 threads, where the same host measured the builds 2-4x slower than on 16 (and the
 * 2-core development VM 1-2x). The model then overestimates small thread counts' builds,
 * which errs towards csr; only a build dearer than csr's is scaled (a saving over csr's
 * build, ell's on short rows, is not: scaled, it would err away from csr). The GPU
 * constants are not scaled: they were fitted with the host work of the RBP and segscan
 * builds on 16 threads, so on a GPU context with fewer host threads (an MPI rank, --threads
 * 2) those builds are underestimated -- a known limit of the model. */
#define CPU_BUILD_REFERENCE_BANDWIDTH CPU_MAX_BANDWIDTH
/* A value in a run fills at least 8 of a 12-byte ELL slot (RBP-ELL's ValuesELL): the
 * least build per entry of a format whose runs are not yet counted (auto_estimate_all). */
#define RUN_VALUE_SLOT_SHARE (8.0 / 12.0)

/* What a format's build handles, for the items I, V, S of the formula. */
typedef enum build_shape {
    BUILD_CSR,               /* csr itself: the reference, 0 */
    BUILD_ELL,               /* S = N K */
    BUILD_RBP_CSR,           /* I = N_non, V = N_val */
    BUILD_RBP_ELL,           /* I = N_non, S = (8 N K_v + 4 N K_c) / 12 */
    BUILD_STREAM             /* I = nnz (segscan's stream) */
} build_shape;

/* ---- the formats ---------------------------------------------------------------------- */

/* The formats the chooser knows, csr first (the reference of every ratio). A format
 * becomes a candidate only once the registry has it for the context's device. Build costs
 * in seconds (see build_cost): {entry, run, slot, row}. */
static const struct {
    const char *name;
    int padded;              /* an ELL layout: subject to AUTO_MAX_STORED_RATIO */
    int runs;                /* its estimates need the run statistics */
    void (*estimate)(const auto_profile *, const auto_device *, auto_estimate *);
    build_shape shape;
    build_cost gpu, cpu;
} known[] = {
    {"csr", 0, 0, estimate_csr, BUILD_CSR, {0, 0, 0, 0}, {0, 0, 0, 0}},
    {"ell", 1, 0, estimate_ell, BUILD_ELL, {0, 0, 0.48e-9, -3.3e-9}, {0, 0, 0.25e-9, -2.0e-9}},
    {"ellr", 1, 0, estimate_ellr, BUILD_ELL, {0, 0, 0.45e-9, -2.0e-9},
     {0, 0, 0.27e-9, -2.1e-9}},
    {"rbp-csr", 0, 1, estimate_rbp_csr, BUILD_RBP_CSR, {1.6e-9, 1.1e-9, 0, 3.0e-9},
     {0.26e-9, 0.10e-9, 0, 2.6e-9}},
    {"rbp-ell", 1, 1, estimate_rbp_ell, BUILD_RBP_ELL, {1.6e-9, 0, 4.1e-9, 2.6e-9},
     {0.29e-9, 0, 2.3e-9, 2.8e-9}},
    {"rbp-ellr", 1, 1, estimate_rbp_ellr, BUILD_RBP_ELL, {1.7e-9, 0, 4.3e-9, 1.4e-9},
     {0.24e-9, 0, 2.5e-9, 2.4e-9}},
    {"segscan", 0, 0, estimate_segscan, BUILD_STREAM, {2.0e-9, 0, 0, 0},
     {0.22e-9, 0, 0, 1.2e-9}},
};
_Static_assert(sizeof known / sizeof known[0] == AUTO_N_KNOWN, "AUTO_N_KNOWN");

/* Seconds of format f's build beyond csr's (the formula at the top); the runs counted. */
static double build_seconds(int f, const auto_profile *p, const auto_device *d)
{
    const krill_format_stats *s = &p->s;
    const build_cost *c = d->gpu ? &known[f].gpu : &known[f].cpu;
    const double n = (double)s->n_rows;
    double entries = 0.0, run_values = 0.0, slots = 0.0;
    switch (known[f].shape) {
    case BUILD_CSR: break;
    case BUILD_ELL: slots = n * (double)s->max_row_nnz; break;
    case BUILD_RBP_CSR:
        entries = (double)s->n_non;
        run_values = (double)s->n_val;
        break;
    case BUILD_RBP_ELL:
        entries = (double)s->n_non;
        slots = (8.0 * n * (double)s->kv + 4.0 * n * (double)s->kc) / 12.0;
        break;
    case BUILD_STREAM: entries = (double)s->nnz; break;
    }
    const double build = c->entry * entries + c->run * run_values + c->slot * slots + c->row * n;
    return build > 0 ? d->build_scale * build : build;
}

/* The least build beyond csr's that format f can have whatever its runs: each entry is
 * isolated or a run value, which copies (c_run) and fills at least RUN_VALUE_SLOT_SHARE of
 * a slot. What decides, before the runs are counted, whether they are worth counting. */
static double build_floor(int f, const auto_profile *p, const auto_device *d)
{
    const build_cost *c = d->gpu ? &known[f].gpu : &known[f].cpu;
    const double per_entry = fmin(c->entry, c->run + RUN_VALUE_SLOT_SHARE * c->slot);
    const double build = per_entry * (double)p->s.nnz + c->row * (double)p->s.n_rows;
    return build > 0 ? d->build_scale * build : build;
}

/* ---- the profile ---------------------------------------------------------------------- */

/* The row statistics (krill_csr_row_stats' fields), the spread of the row lengths, the
 * longest row GPU csr's row kernel sums and, with `lines`, the bytes of column-major N x K
 * arrays of 8-byte values and 4-byte columns that a loop ending at each row's length reads
 * when `line` bytes are fetched at once (each group of line / width consecutive rows costs
 * one line per slot up to its longest row): one parallel pass over row_ptr, in groups of
 * line / 4 rows (a column group, two value groups). Every sum but the spread's is of
 * integers, exact below 2^53 in any order, so the profile, and the choice, are the same on
 * any thread count (the spread only appears in the reason). */
_Static_assert(GPU_SECTOR % 8 == 0 && CPU_LINE % 8 == 0,
               "auto_profile_rows: a line holds whole doubles");

/* The profile's pass reads row_ptr alone (8 bytes a row): in parallel only from this many
 * rows (1 MB, about 0.1 ms on one core), since a team woken for less can cost more than the
 * pass (the entries, which the pass never reads, do not count) */
#define AUTO_PROFILE_PARALLEL_ROWS (1 << 17)

void auto_profile_rows(const krill_csr *a, const auto_device *d, int threads, int lines,
                       auto_profile *p)
{
    krill_format_stats *s = &p->s;
    const int32_t half = d->line / (int32_t)sizeof(double);   /* a value group's rows */
    const int64_t groups = ((int64_t)a->n_rows + 2 * half - 1) / (2 * half);
    int64_t max_len = 0, empty = 0, longest_short = 0, long_min;
    double sq = 0.0, touched_val = 0.0, touched_col = 0.0;
    memset(p, 0, sizeof *p);
    s->n_rows = a->n_rows;
    s->n_cols = a->n_cols;
    s->nnz = a->nnz;
    s->mean_row_nnz = a->n_rows ? (double)a->nnz / a->n_rows : 0.0;
    long_min = (int64_t)CSR_LONG_ROUNDS * csr_lanes(s);
#pragma omp parallel for schedule(static) num_threads(threads) \
    reduction(+ : empty, sq, touched_val, touched_col) reduction(max : max_len, longest_short) \
    if (a->n_rows >= AUTO_PROFILE_PARALLEL_ROWS)
    for (int64_t g = 0; g < groups; g++) {
        const int64_t first = g * 2 * half;
        const int64_t last = a->n_rows - first < 2 * half ? a->n_rows : first + 2 * half;
        int64_t longest[2] = {0, 0};
        for (int64_t i = first; i < last; i++) {
            const int64_t len = a->row_ptr[i + 1] - a->row_ptr[i];
            const double dev = (double)len - s->mean_row_nnz;
            int64_t *l = &longest[i - first >= half];
            if (len > *l) *l = len;
            if (len == 0) empty++;
            if (len <= long_min && len > longest_short) longest_short = len;
            sq += dev * dev;
        }
        touched_val += (double)d->line * (double)(longest[0] + longest[1]);
        touched_col += (double)d->line *
                       (double)(longest[0] > longest[1] ? longest[0] : longest[1]);
        if (longest[0] > max_len) max_len = longest[0];
        if (longest[1] > max_len) max_len = longest[1];
    }
    s->max_row_nnz = max_len;
    s->empty_rows = empty;
    p->longest_short = longest_short;
    p->row_sd = a->n_rows > 0 ? sqrt(sq / a->n_rows) : 0.0;
    if (lines) {
        p->touched_val = touched_val;
        p->touched_col = touched_col;
    }
    p->xy = 8.0 * ((double)a->n_cols + (double)a->n_rows);
}

/* Rows in the sample of auto_profile_run_sample: a few thousand rows cost some tens of
 * microseconds, against milliseconds for the pass over every column index (rand100 on two
 * threads: 10 ms). */
#define AUTO_RUN_SAMPLE_ROWS 4096

void auto_profile_run_sample(const krill_csr *a, auto_profile *p)
{
    const int64_t n = a->n_rows, window = n / AUTO_RUN_SAMPLE_ROWS;
    int64_t n_val = 0, n_col = 0, n_non = 0, kv = 0, kc = 0, entries = 0;
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    p->sampled = 0;
    if (window < 2) goto done;                     /* no more rows than a sample: count all */
    for (int64_t w = 0; w < AUTO_RUN_SAMPLE_ROWS; w++) {
        int64_t run_values, run_cols, isolated, i;
        h = h * 6364136223846793005ULL + 1442695040888963407ULL;   /* a fixed LCG */
        i = w * window + (int64_t)((h >> 33) % (uint64_t)window);
        krill_csr_row_runs(a, i, &run_values, &run_cols, &isolated);
        n_val += run_values, n_col += run_cols, n_non += isolated;
        if (run_values > kv) kv = run_values;
        if (run_cols > kc) kc = run_cols;
        entries += a->row_ptr[i + 1] - a->row_ptr[i];
    }
    if (entries == 0) goto done;
    {   /* the counts scaled to the matrix's entries (rounded down: whole entries) */
        const double scale = (double)a->nnz / (double)entries;
        p->sample = p->s;
        p->sample.n_val = (int64_t)((double)n_val * scale);
        p->sample.n_col = (int64_t)((double)n_col * scale);
        p->sample.n_non = (int64_t)((double)n_non * scale);
        p->sample.kv = kv;
        p->sample.kc = kc;
        p->sampled = 1;
    }
done:
    return;
}

void auto_profile_runs(const krill_csr *a, int threads, auto_profile *p)
{
    krill_csr_run_stats(a, threads, &p->s);    /* the pass the RBP builds make (formats/csr.c) */
    p->runs = 1;
}

/* ---- the device and the estimates ----------------------------------------------------- */

void auto_device_model(krill_ctx *ctx, auto_device *d)
{
    memset(d, 0, sizeof *d);
    d->gpu = krill_on_gpu(ctx);
    if (d->gpu) {
        d->bandwidth = GPU_BANDWIDTH;
        d->launch = GPU_LAUNCH;
        d->step = GPU_STEP;
        d->line = GPU_SECTOR;
        d->build_scale = 1.0;
    } else {
        const int threads = krill_ctx_threads(ctx) > 0 ? krill_ctx_threads(ctx) : 1;
        d->bandwidth = fmin(threads * CPU_CORE_BANDWIDTH, CPU_MAX_BANDWIDTH);
        d->launch = CPU_FORK_JOIN;
        d->step = 12.0 / CPU_CORE_BANDWIDTH;
        d->line = CPU_LINE;
        d->build_scale = CPU_BUILD_REFERENCE_BANDWIDTH / d->bandwidth;
    }
}

/* 1 when the registry has `name` with an implementation on this device */
static int available(const char *name, int gpu)
{
    const char *param = NULL;
    const krill_format_entry *e = krill_format_find(name, &param);
    return e && param == NULL && (gpu ? e->cuda != NULL : e->cpu != NULL);
}

int auto_estimate_all(const auto_profile *p, const auto_device *d, auto_estimate *est)
{
    const double csr_bytes = csr_stored(p, d);
    for (int f = 0; f < AUTO_N_KNOWN; f++) {
        auto_estimate *e = &est[f];
        memset(e, 0, sizeof *e);
        e->name = known[f].name;
        if (known[f].runs && !p->runs) {
            e->skip = AUTO_SKIP_UNCOUNTED;
            e->build = build_floor(f, p, d);
        } else {
            known[f].estimate(p, d, e);
            e->seconds = e->launches * d->launch + fmax(e->traffic / d->bandwidth,
                                                        e->steps * d->step);
            e->build = build_seconds(f, p, d);
            if (!e->skip && known[f].padded && e->stored > AUTO_MAX_STORED_RATIO * csr_bytes)
                e->skip = "padding";
        }
        if (!available(e->name, d->gpu)) e->skip = AUTO_SKIP_ABSENT;
    }
    return AUTO_N_KNOWN;
}

int auto_known_index(const char *name)
{
    int f = 0;
    while (f < AUTO_N_KNOWN && strcmp(known[f].name, name) != 0) f++;
    return f < AUTO_N_KNOWN ? f : -1;
}

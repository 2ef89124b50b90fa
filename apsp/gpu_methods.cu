/* apsp/gpu_methods.cu - the APSP methods on the GPU (their apsp_ops tables): the launches
 * of the kernels of gpu_kernels.cuh for each round, fw-a's lookahead, fw-rec, plain.
 *
 * Blocked Floyd-Warshall (the APSP paper, Okuyama, Ino and Hagihara; section 4), rounds of
 * tile t = APSP_GPU_TILE, npad = n rounded up to t:
 *   pivot   k_fw_tile, one block: tile (K,K) closed by FW, t steps. The paper's 4.1 design:
 *           every thread keeps its elements in registers; before step k the owners of row
 *           k and column k copy them to shared memory (2t values), one barrier, every
 *           element updated, one barrier.
 *   panels  k_fw_tile, 2(npad/t - 1) blocks: the pivot row tiles (K,J) and column tiles
 *           (I,K), the same loop with the pivot tile (read only) preloaded into shared
 *           memory as the other operand.
 *   rest    every other tile: D_IJ = min(D_IJ, D_IK (x) D_KJ), an independent min-plus
 *           product with inner dimension t. Method A (k_minplus, section 4.2): each thread
 *           keeps a TM x TN block of D in registers, the operands stream through shared
 *           memory in chunks of APSP_GPU_BK steps (the next chunk is loaded into registers
 *           while the current one is used; 4-byte distances: copied asynchronously two
 *           chunks ahead into a third shared stage), and each step costs TM + TN shared loads (four
 *           values per 16-byte load) for TM * TN relaxations: int32 through the DPX
 *           instruction min(a + b, c) (__viaddmin_s32), one instruction per relaxation.
 *           Method B (k_minplus_b, section 4.3): two-level blocking: the tile's k steps in
 *           sub-panels of t' = APSP_GPU_BK staged in shared memory; a thread keeps a column
 *           strip of 32 elements and takes the row operand from shared memory at every
 *           update (a broadcast load + the relaxation: the paper's "3-instruction" update,
 *           2 with DPX).
 * Traffic per round: the rest reads and writes all of D once (2 npad^2 elements) for
 * npad^2 t relaxations, so t = 128 moves 1/16 byte of int32 per relaxation: at ~3 TB/s
 * that allows ~48 G relaxations/s per TB/s... well above the ~15 T/s the H100 computes, so
 * the rest is compute bound (t = 64 would be at the limit, t = 32 -- the paper's choice for
 * a GTX 280 -- memory bound). The pivot and panels cost O(npad^2 t) of the O(npad^3).
 * Recursive FW (fw-rec, the paper's Fig. 6): the host recursion on quadrants, each product
 * a k_minplus launch on submatrix views (a product whose output is also an operand goes to
 * a scratch matrix and is copied back, so no block reads what another writes), the base
 * case a k_fw_tile on a diagonal tile.
 * plain: k_fw_plain, one launch per k over all of D: 2 npad^2 elements moved per k, the
 * pre-blocking baseline.
 * int32 clamping and the predecessor rule: apsp_impl.h. */
#include "apsp/gpu_minplus.cuh"

template <typename T, bool WP>
static size_t tile_smem(int pivot_only)
{
    const size_t t = APSP_GPU_TILE;
    return (pivot_only ? 0 : t * t * sizeof(T)) + 2 * t * sizeof(T) + (WP ? t * 4 : 0);
}

template <typename T, bool WP>
static krill_status launch_tile(apsp_run *run, int32_t K, int pivot_only)
{
    krill_status st = KRILL_OK;
    const int32_t nt = run->npad / APSP_GPU_TILE;
    const size_t smem = tile_smem<T, WP>(pivot_only);
    const int blocks = pivot_only ? 1 : 2 * (nt - 1);
    if (blocks > 0) {
        KRILL_TRY(cuda_ok(cudaFuncSetAttribute(k_fw_tile<T, WP>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               (int)smem), "shared memory of the tile kernel"));
        k_fw_tile<T, WP><<<blocks, APSP_TILE_THREADS, smem, stream_of(run)>>>(
            (T *)run->d, run->p, run->npad, K, nt, run->clamp_hi, pivot_only, big_flag(run));
        KRILL_TRY(krill_cuda_check_launch(pivot_only ? "apsp pivot tile" : "apsp panel tiles"));
    }
cleanup:
    return st;
}

/* Block tile rows and per-thread blocks of method A by type and paths: 128 threads a block
 * and up to 255 registers a thread, so that two blocks share an SM (one block's barriers,
 * prologue and write-back overlap the other's relaxations: 7% on int32 n = 16384 and 12% on
 * n = 32768 against one 256-thread block per SM, H200): 4-byte weights 8 x 8 per thread (64
 * accumulators, with P 64 predecessors beside them: 255 registers, no spill) on 64-row tiles
 * (with P: fw-rec int32 n = 16384 478 ms on the H100, against 501 ms with 8 x 4 on 32-row
 * tiles); double (two registers a value) 8 x 4 on 32-row tiles; double with P 4 x 4 on
 * 16-row tiles. BK: steps per chunk (32 for int32 without P spilled its 48 prefetch
 * registers at 128 threads: kept at 16). cfg_whole: 128-row tiles, one block per whole tile
 * (the panels' products). */
template <typename T, bool WP> struct cfg_a {
    static constexpr int BM = sizeof(T) == 8 ? 32 : 64, TM = 8, TN = sizeof(T) == 8 ? 4 : 8,
                         BK = APSP_GPU_BK;
};
template <> struct cfg_a<double, true> {
    static constexpr int BM = 16, TM = 4, TN = 4, BK = APSP_GPU_BK;
};
template <typename T, bool WP> struct cfg_whole {
    static constexpr int BM = 128, TM = WP ? 16 : 8, TN = WP ? 4 : 8, BK = APSP_GPU_BK;
};

/* Launch a product over rows x cols of output (multiples of the block tile) with method A's
 * kernel in configuration C, or with method B's. */
template <typename T, bool WP, typename C = cfg_a<T, WP>>
static krill_status launch_product(apsp_run *run, const mp_args &g, int64_t rows, int64_t cols,
                                   int method_b)
{
    krill_status st = KRILL_OK;
    const int bm = method_b ? cfg_b<T, WP>::BM : C::BM;
    dim3 grid((unsigned)(cols / 128), (unsigned)(rows / bm));
    if (grid.x > 0 && grid.y > 0) {
        if (method_b)
            k_minplus_b<T, WP><<<grid, APSP_B_THREADS, 0, stream_of(run)>>>(g);
        else
            k_minplus<T, WP, C::BM, C::TM, C::TN, C::BK>
                <<<grid, (C::BM / C::TM) * (128 / C::TN), 0, stream_of(run)>>>(g);
        KRILL_TRY(krill_cuda_check_launch(method_b ? "apsp min-plus product (method B)"
                                                   : "apsp min-plus product (method A)"));
    }
cleanup:
    return st;
}

static krill_status gpu_pivot(apsp_run *run, int32_t k)
{
    return APSP_DISPATCH(run, launch_tile, run, k, 1);
}

/* The panels of round K as two min-plus products with the closed pivot tile P* (zero
 * diagonal): row tiles D_KJ = min(D_KJ, P* (x) D_KJ), column tiles D_IK = min(D_IK, D_IK (x)
 * P*) -- the paths through the pivot block, which is what the k loop of k_fw_tile finds.
 * A product's output is also an operand, which is safe when one block computes a whole
 * tile: it reads its operand chunks before it writes (cfg_whole). So this serves int32 and
 * float; double (whose whole-tile blocks would not fit the registers) uses k_fw_tile. */
template <typename T, bool WP>
static krill_status panels_products(apsp_run *run, int32_t K)
{
    krill_status st = KRILL_OK;
    const int64_t ld = run->npad, t = APSP_GPU_TILE;
    T *d = (T *)run->d;
    mp_args g;
    memset(&g, 0, sizeof g);
    g.lda = g.ldb = g.ldc = g.ldo = ld;
    g.kdim = APSP_GPU_TILE;
    g.hi = run->clamp_hi;
    g.big = big_flag(run);
    int32_t *p = run->p;                             /* P beside D, same offsets */
    g.a = d + K * t * ld + K * t;                    /* row tiles: P* (x) D_K. */
    g.b = g.cin = g.cout = d + K * t * ld;
    if (WP) g.pb = g.pcin = g.pcout = p + K * t * ld;
    g.skip_r = g.skip_r2 = g.skip_c2 = APSP_NO_SKIP;
    g.skip_c = K;
    KRILL_TRY((launch_product<T, WP, cfg_whole<T, WP>>(run, g, t, ld - t, 0)));
    g.a = g.cin = g.cout = d + K * t;                /* column tiles: D_.K (x) P* */
    g.b = d + K * t * ld + K * t;
    if (WP) {
        g.pcin = g.pcout = p + K * t;
        g.pb = p + K * t * ld + K * t;
    }
    g.skip_r = K;
    g.skip_c = APSP_NO_SKIP;
    KRILL_TRY((launch_product<T, WP, cfg_whole<T, WP>>(run, g, ld - t, t, 0)));
cleanup:
    return st;
}

template <typename T, bool WP>
static krill_status panels_round(apsp_run *run, int32_t K)
{
    if constexpr (sizeof(T) == 8)
        return launch_tile<T, WP>(run, K, 0);
    else
        return panels_products<T, WP>(run, K);
}

static krill_status gpu_panels(apsp_run *run, int32_t k)
{
    return APSP_DISPATCH(run, panels_round, run, k);
}

/* The rest of round K (inner dimension t) over one part of D:
 *   REST_ALL    every tile but tile row and column K
 *   REST_MAIN   every tile but tile rows and columns K and K + 1 (the lookahead's main part)
 *   REST_ROW    tile row K + 1 but column K
 *   REST_COL    tile column K + 1 but rows K and K + 1 */
enum { REST_ALL, REST_MAIN, REST_ROW, REST_COL };

template <typename T, bool WP>
static krill_status rest_part(apsp_run *run, int32_t K, int part, int method_b)
{
    const int64_t ld = run->npad, t = APSP_GPU_TILE;
    const int64_t next = (int64_t)(K + 1) * t;
    T *d = (T *)run->d;
    int64_t rows = ld - t, cols = ld - t, c_off = 0;
    mp_args g;
    g.a = d + K * t;                 /* the pivot column panel: rows 0.., columns K t.. */
    g.b = d + K * t * ld;            /* the pivot row panel */
    g.pb = run->p ? run->p + K * t * ld : nullptr;
    g.lda = g.ldb = g.ldc = g.ldo = ld;
    g.kdim = APSP_GPU_TILE;
    g.skip_r = g.skip_c = K;
    g.skip_r2 = g.skip_c2 = APSP_NO_SKIP;
    g.hi = run->clamp_hi;
    g.big = big_flag(run);
    if (part == REST_MAIN) {
        g.skip_r2 = g.skip_c2 = K + 1;
        rows = cols = ld - 2 * t;
    } else if (part == REST_ROW) {
        g.a = (const T *)g.a + next * ld;
        c_off = next * ld;
        g.skip_r = APSP_NO_SKIP;
        rows = t;
    } else if (part == REST_COL) {
        g.b = (const T *)g.b + next;
        if (g.pb) g.pb += next;
        c_off = next;
        g.skip_c = APSP_NO_SKIP;
        g.skip_r2 = K + 1;
        rows = ld - 2 * t;
        cols = t;
    }
    g.cin = g.cout = d + c_off;
    g.pcin = g.pcout = run->p ? run->p + c_off : nullptr;
    return launch_product<T, WP>(run, g, rows, cols, method_b);
}

static krill_status gpu_rest_a(apsp_run *run, int32_t k)
{
    return APSP_DISPATCH(run, rest_part, run, k, REST_ALL, 0);
}
static krill_status gpu_rest_b(apsp_run *run, int32_t k)
{
    return APSP_DISPATCH(run, rest_part, run, k, REST_ALL, 1);
}

/* ---- fw-a's lookahead --------------------------------------------------------------------
 * Round K + 1's pivot and panels need from round K's rest only tile row and column K + 1.
 * So rest(K) computes those first on a second stream, which then goes on with pivot(K + 1)
 * and panels(K + 1), while the main stream computes the rest of round K (REST_MAIN, the
 * disjoint bulk); the main stream waits for the second before round K + 1. The pivot's
 * single block and the panels' few blocks then run beside the rest's many, instead of
 * between them. Their time, from events on the second stream, goes to t_pivot and t_panels
 * (run->t_hidden_*) without adding to the rounds' time. */
typedef struct la_state {
    cudaStream_t side;
    cudaEvent_t fork, join;
    cudaEvent_t *ev;             /* round k >= 1: before pivot(k), after it, after panels(k) */
    int n_ev, rounds;
} la_state;

static void la_end(apsp_run *run)
{
    la_state *la = (la_state *)run->state;
    if (la) {
        if (la->side) (void)cudaStreamSynchronize(la->side);
        for (int i = 0; i < la->n_ev; i++) (void)cudaEventDestroy(la->ev[i]);
        if (la->fork) (void)cudaEventDestroy(la->fork);
        if (la->join) (void)cudaEventDestroy(la->join);
        if (la->side) (void)cudaStreamDestroy(la->side);
        krill_free(la->ev);
        krill_free(la);
    }
    run->state = NULL;
}

static krill_status la_begin(apsp_run *run)
{
    krill_status st = KRILL_OK;
    la_state *la = NULL;
    KRILL_CALLOC(la, 1);
    run->state = la;
    la->rounds = run->npad / APSP_GPU_TILE;
    if (la->rounds >= 2) {
        KRILL_TRY(cuda_ok(cudaStreamCreateWithFlags(&la->side, cudaStreamNonBlocking),
                          "lookahead stream"));
        KRILL_TRY(cuda_ok(cudaEventCreateWithFlags(&la->fork, cudaEventDisableTiming), "event"));
        KRILL_TRY(cuda_ok(cudaEventCreateWithFlags(&la->join, cudaEventDisableTiming), "event"));
        KRILL_CALLOC(la->ev, 3 * la->rounds);
        for (; la->n_ev < 3 * la->rounds; la->n_ev++)
            KRILL_TRY(cuda_ok(cudaEventCreate(&la->ev[la->n_ev]), "event"));
    }
cleanup:
    return st;
}

static int la_on(const apsp_run *run) { return ((const la_state *)run->state)->rounds >= 2; }

static krill_status la_pivot(apsp_run *run, int32_t k)
{
    return k > 0 && la_on(run) ? KRILL_OK : APSP_DISPATCH(run, launch_tile, run, k, 1);
}

static krill_status la_panels(apsp_run *run, int32_t k)
{
    return k > 0 && la_on(run) ? KRILL_OK : gpu_panels(run, k);
}

/* The hidden pivot and panel times, once the last lookahead is done. */
static krill_status la_times(apsp_run *run)
{
    krill_status st = KRILL_OK;
    la_state *la = (la_state *)run->state;
    KRILL_TRY(cuda_ok(cudaEventSynchronize(la->ev[la->n_ev - 1]), "cudaEventSynchronize"));
    for (int k = 1; k < la->rounds; k++) {
        float a = 0, b = 0;
        KRILL_TRY(cuda_ok(cudaEventElapsedTime(&a, la->ev[3 * k], la->ev[3 * k + 1]), "lookahead time"));
        KRILL_TRY(cuda_ok(cudaEventElapsedTime(&b, la->ev[3 * k + 1], la->ev[3 * k + 2]), "lookahead time"));
        run->t_hidden_pivot += 1e-3 * a;
        run->t_hidden_panels += 1e-3 * b;
    }
cleanup:
    return st;
}

static krill_status la_rest(apsp_run *run, int32_t K)
{
    krill_status st = KRILL_OK;
    la_state *la = (la_state *)run->state;
    gpu_state *gs = (gpu_state *)run->device_state;
    cudaStream_t main_stream = stream_of(run);
    if (!la_on(run) || K + 1 >= la->rounds) {
        KRILL_TRY(gpu_rest_a(run, K));
        if (la_on(run)) KRILL_TRY(la_times(run));
    } else {
        cudaEvent_t *ev = la->ev + 3 * (K + 1);
        KRILL_TRY(cuda_ok(cudaEventRecord(la->fork, main_stream), "lookahead fork"));
        KRILL_TRY(cuda_ok(cudaStreamWaitEvent(la->side, la->fork, 0), "lookahead fork"));
        gs->side = la->side;
        KRILL_TRY(APSP_DISPATCH(run, rest_part, run, K, REST_ROW, 0));
        KRILL_TRY(APSP_DISPATCH(run, rest_part, run, K, REST_COL, 0));
        KRILL_TRY(cuda_ok(cudaEventRecord(ev[0], la->side), "lookahead event"));
        KRILL_TRY(APSP_DISPATCH(run, launch_tile, run, K + 1, 1));
        KRILL_TRY(cuda_ok(cudaEventRecord(ev[1], la->side), "lookahead event"));
        KRILL_TRY(gpu_panels(run, K + 1));
        KRILL_TRY(cuda_ok(cudaEventRecord(ev[2], la->side), "lookahead event"));
        KRILL_TRY(cuda_ok(cudaEventRecord(la->join, la->side), "lookahead join"));
        gs->side = NULL;
        KRILL_TRY(APSP_DISPATCH(run, rest_part, run, K, REST_MAIN, 0));
        KRILL_TRY(cuda_ok(cudaStreamWaitEvent(main_stream, la->join, 0), "lookahead join"));
    }
cleanup:
    gs->side = NULL;
    return st;
}

template <typename T, bool WP>
static krill_status plain_all(apsp_run *run)
{
    krill_status st = KRILL_OK;
    const dim3 block(32, 8);
    const dim3 grid((unsigned)((run->n + 31) / 32), (unsigned)((run->n + 7) / 8));
    for (int32_t k = 0; k < run->n; k++) {
        k_fw_plain<T, WP><<<grid, block, 0, stream_of(run)>>>((T *)run->d, run->p, run->npad,
                                                               run->n, k, run->clamp_hi);
        KRILL_TRY(krill_cuda_check_launch("apsp plain FW step"));
    }
cleanup:
    return st;
}

static krill_status gpu_plain_whole(apsp_run *run) { return APSP_DISPATCH(run, plain_all, run); }

/* ---- fw-rec -------------------------------------------------------------------------------- */

typedef struct rec_state {
    void *tmp;                   /* scratch for products whose output is an operand */
    int32_t *ptmp;
    int64_t ldt;                 /* its leading dimension */
} rec_state;

/* One view product: C[rc.., cc..] (rows x cols) = min(C, A[ra.., ca..] (x) B[rb.., cb..]),
 * inner kd; through the scratch when C is also A or B. */
template <typename T, bool WP>
static krill_status rec_product(apsp_run *run, int64_t rc, int64_t cc, int64_t ra, int64_t ca,
                                int64_t rb, int64_t cb, int64_t rows, int64_t cols, int64_t kd)
{
    krill_status st = KRILL_OK;
    const rec_state *rs = (const rec_state *)run->state;
    const int64_t ld = run->npad;
    T *d = (T *)run->d;
    const int alias = (ra == rc && ca == cc) || (rb == rc && cb == cc);
    mp_args g;
    g.a = d + ra * ld + ca;
    g.b = d + rb * ld + cb;
    g.cin = d + rc * ld + cc;
    g.pb = WP ? run->p + rb * ld + cb : nullptr;
    g.pcin = WP ? run->p + rc * ld + cc : nullptr;
    g.lda = g.ldb = g.ldc = ld;
    g.kdim = (int32_t)kd;
    g.skip_r = g.skip_c = g.skip_r2 = g.skip_c2 = APSP_NO_SKIP;
    g.hi = run->clamp_hi;
    g.big = big_flag(run);
    if (alias) {
        g.cout = rs->tmp;
        g.pcout = WP ? rs->ptmp : nullptr;
        g.ldo = rs->ldt;
    } else {
        g.cout = d + rc * ld + cc;
        g.pcout = WP ? run->p + rc * ld + cc : nullptr;
        g.ldo = ld;
    }
    KRILL_TRY((launch_product<T, WP>(run, g, rows, cols, 0)));
    if (alias) {
        KRILL_TRY(cuda_ok(cudaMemcpy2DAsync(d + rc * ld + cc, ld * sizeof(T), rs->tmp,
                                            rs->ldt * sizeof(T), cols * sizeof(T), rows,
                                            cudaMemcpyDeviceToDevice, stream_of(run)),
                          "fw-rec copy back"));
        if (WP)
            KRILL_TRY(cuda_ok(cudaMemcpy2DAsync(run->p + rc * ld + cc, ld * 4, rs->ptmp,
                                                rs->ldt * 4, cols * 4, rows,
                                                cudaMemcpyDeviceToDevice, stream_of(run)),
                              "fw-rec copy back"));
    }
cleanup:
    return st;
}

/* The paper's Fig. 6 on the diagonal block at o of side s (multiples of t): split at h. */
template <typename T, bool WP>
static krill_status rec_fw(apsp_run *run, int64_t o, int64_t s)
{
    krill_status st = KRILL_OK;
    const int64_t t = APSP_GPU_TILE;
    if (s <= t) {
        KRILL_TRY((launch_tile<T, WP>(run, (int32_t)(o / t), 1)));
    } else {
        const int64_t h = s / t / 2 * t, o2 = o + h, s2 = s - h;
        KRILL_TRY((rec_fw<T, WP>(run, o, h)));
        KRILL_TRY((rec_product<T, WP>(run, o, o2, o, o, o, o2, h, s2, h)));      /* M12 = M11 M12 */
        KRILL_TRY((rec_product<T, WP>(run, o2, o, o2, o, o, o, s2, h, h)));      /* M21 = M21 M11 */
        KRILL_TRY((rec_product<T, WP>(run, o2, o2, o2, o, o, o2, s2, s2, h)));   /* M22 = min(M22, M21 M12) */
        KRILL_TRY((rec_fw<T, WP>(run, o2, s2)));
        KRILL_TRY((rec_product<T, WP>(run, o2, o, o2, o2, o2, o, s2, h, s2)));   /* M21 = M22 M21 */
        KRILL_TRY((rec_product<T, WP>(run, o, o2, o, o2, o2, o2, h, s2, s2)));   /* M12 = M12 M22 */
        KRILL_TRY((rec_product<T, WP>(run, o, o, o, o2, o2, o, h, h, s2)));      /* M11 = min(M11, M12 M21) */
    }
cleanup:
    return st;
}

template <typename T, bool WP>
static krill_status rec_all(apsp_run *run) { return rec_fw<T, WP>(run, 0, run->npad); }

static krill_status gpu_rec_begin(apsp_run *run)
{
    krill_status st = KRILL_OK;
    rec_state *rs = NULL;
    const int64_t t = APSP_GPU_TILE, h = run->npad / t / 2 * t, side = run->npad - h;
    KRILL_CALLOC(rs, 1);
    run->state = rs;
    rs->ldt = side;
    if (h > 0) {
        KRILL_TRY(krill_cuda_alloc(run->ctx, &rs->tmp, (size_t)(side * side) * run->elem,
                                   "fw-rec scratch"));
        if (run->p)
            KRILL_TRY(krill_cuda_alloc(run->ctx, (void **)&rs->ptmp, (size_t)(side * side) * 4,
                                       "fw-rec scratch P"));
    }
cleanup:
    return st;
}

static void gpu_rec_end(apsp_run *run)
{
    rec_state *rs = (rec_state *)run->state;
    if (rs) {
        krill_cuda_free(run->ctx, rs->tmp);
        krill_cuda_free(run->ctx, rs->ptmp);
        krill_free(rs);
    }
    run->state = NULL;
}

static krill_status gpu_rec_whole(apsp_run *run) { return APSP_DISPATCH(run, rec_all, run); }

/* fw-rec's scratch (gpu_rec_begin): the larger quadrant's square, for D and P */
static double gpu_rec_bytes(const apsp_run *run, int paths)
{
    const double side = run->npad - (double)(run->npad / APSP_GPU_TILE / 2 * APSP_GPU_TILE);
    return side * side * ((double)run->elem + (paths ? 4.0 : 0.0));
}

/* The product of gpu_minplus.cuh's apsp_gpu_product: method A, no predecessors. */
template <typename T, bool WP>
static krill_status product_a(apsp_run *run, const mp_args &g, int64_t rows, int64_t cols)
{
    return launch_product<T, false>(run, g, rows, cols, 0);
}

krill_status apsp_gpu_product(apsp_run *run, const mp_args &g, int64_t rows, int64_t cols)
{
    return APSP_DISPATCH(run, product_a, run, g, rows, cols);
}

extern "C" {
/* tile, granule, begin, pivot, panels, rest, whole, end, extra_bytes */
const apsp_ops apsp_gpu_plain = {1, 1, NULL, NULL, NULL, NULL, gpu_plain_whole, NULL, NULL};
const apsp_ops apsp_gpu_fw_a = {APSP_GPU_TILE, 0, la_begin, la_pivot, la_panels, la_rest,
                                NULL, la_end, NULL};
const apsp_ops apsp_gpu_fw_b = {APSP_GPU_TILE, 0, NULL, gpu_pivot, gpu_panels,
                                gpu_rest_b, NULL, NULL, NULL};
const apsp_ops apsp_gpu_fw_rec = {APSP_GPU_TILE, 0, gpu_rec_begin, NULL, NULL,
                                  NULL, gpu_rec_whole, gpu_rec_end, gpu_rec_bytes};
}

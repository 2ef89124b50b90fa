/* ozaki/ozaki_row.cuh - the GPU half of every format's reproducible SpMV (spmv_repro):
 * y_i = alpha s_i + beta y_i with s_i the correctly rounded exact sum of row i's stored
 * products (ozaki/ozaki_row.h), one thread per row. Included by CUDA sources only.
 *
 * A format describes its storage by a row visitor V, a small struct of device pointers:
 *   typename V::row                        what locating a row yields (an index, a range);
 *   __device__ V::row V::locate(int64_t i) const;
 *   template <class Op> __device__ void V::visit(const V::row &r, const double *x, Op &op)
 *                                          calls op(a_ij, x_j) once for every stored entry
 *                                          of the row, in any order, padding skipped (never
 *                                          op(0, x_j): 0 * Inf would be a NaN).
 * krill_oz_spmv_kernel<V> locates each row once and visits it twice, as ozaki_row.h says:
 * its statistics, then the exact digit products into per-diagonal int64 sums, one
 * rounding. The bits are those of the CPU's krill_row_sum_repro (formats/spmv_repro.c) for
 * the same products, whatever the format and the launch geometry.
 *
 * Scratch: each thread's int64_t acc[KRILL_OZ_ROW_MAX_DIAG] (1768 bytes) in local memory,
 * enough for rows of up to KRILL_OZ_ROW_MAX_N entries; krill_oz_spmv_launch refuses a
 * matrix whose longest row (known from the build) is longer, before any launch. The kernel's
 * stack frame is 1904 bytes (`-Xptxas -v`, CUDA 13.0, sm_90: acc, the two 8-digit windows of
 * krill_oz_accumulate, 8 more), and the driver reserves local memory for every thread the
 * GPU can hold at once: 1904 B x 2048 threads x 132 SMs = 515 MB on an H100, of which a CUDA
 * context holds 277 MB from its start (the default 1 KB stack); the first launch takes the
 * other 238 MB (measured with cudaMemGetInfo), and the context keeps it. */
#ifndef KRILL_OZAKI_ROW_CUH
#define KRILL_OZAKI_ROW_CUH

#include "kernels/kernels_impl.cuh"
#include "ozaki/ozaki_row.h"

/* pass 1: a term into the row's statistics */
struct krill_oz_stats_op {
    krill_oz_row *r;
    __device__ __forceinline__ void operator()(double a, double x) const
    {
        krill_oz_row_stats(r, a, x);
    }
};

/* pass 2: a term's digit products into the diagonal sums */
struct krill_oz_add_op {
    const krill_oz_params *p;
    int64_t *acc;
    __device__ __forceinline__ void operator()(double a, double x) const
    {
        krill_oz_row_add(p, a, x, acc);
    }
};

/* y_i = krill_oz_axpby(alpha, s_i, beta, y_i) for i < n_rows (beta == 0: y not read), rows
 * cyclic over a grid-stride loop. Every operation whose bits matter is ozaki_row.h's
 * (__dadd_rn / __dmul_rn, integer steps), so nvcc cannot contract anything. */
template <class V>
__global__ void __launch_bounds__(KRILL_CUDA_THREADS)
krill_oz_spmv_kernel(V v, int64_t n_rows, double alpha, const double *__restrict__ x,
                     double beta, double *__restrict__ y)
{
    int64_t acc[KRILL_OZ_ROW_MAX_DIAG];
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_rows; i += stride) {
        const typename V::row where = v.locate(i);
        krill_oz_row r;
        krill_oz_params p;
        krill_oz_row_init(&r);
        krill_oz_stats_op stats{&r};
        v.visit(where, x, stats);
        const int nd = krill_oz_row_begin(&r, &p);
        for (int c = 0; c < nd; c++) acc[c] = 0;
        if (nd > 0) {
            krill_oz_add_op add{&p, acc};
            v.visit(where, x, add);
        }
        const double s = krill_oz_row_end(&r, &p, acc);
        y[i] = beta == 0.0 ? krill_oz_axpby(alpha, s, 0.0, 0.0)
                           : krill_oz_axpby(alpha, s, beta, y[i]);
    }
}

/* The spmv_repro of a format on ctx's stream: KRILL_ERR_UNSUPPORTED naming `format` when
 * max_row_nnz (the longest row of the build) passes KRILL_OZ_ROW_MAX_N, nothing for no
 * rows, else one launch of a thread per row (at most a resident wave of blocks). */
template <class V>
krill_status krill_oz_spmv_launch(krill_ctx *ctx, const char *format, const V &v, int64_t n_rows,
                                  int64_t max_row_nnz, double alpha, const double *x,
                                  double beta, double *y)
{
    if (max_row_nnz > KRILL_OZ_ROW_MAX_N)
        return krill_error(KRILL_ERR_UNSUPPORTED, "%s: reproducible SpMV on the GPU: a row has "
                           "%lld entries, more than the %lld a GPU thread's exact row sum holds "
                           "(KRILL_OZ_ROW_MAX_N); run this matrix on a CPU context", format,
                           (long long)max_row_nnz, (long long)KRILL_OZ_ROW_MAX_N);
    if (n_rows == 0) return KRILL_OK;
    krill_oz_spmv_kernel<V><<<krill_cuda_blocks(ctx, n_rows), KRILL_CUDA_THREADS, 0,
                              krill_cuda_stream(ctx)>>>(v, n_rows, alpha, x, beta, y);
    return krill_cuda_check_launch("krill_oz_spmv_kernel");
}

#endif

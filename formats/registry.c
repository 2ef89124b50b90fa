/* formats/registry.c - every sparse format krill knows, by name. One line per format. */
#include <string.h>

#include "formats/formats_impl.h"

#ifdef KRILL_HAVE_CUDA
#define CUDA_OPS(ops) (&(ops))
#else
#define CUDA_OPS(ops) NULL
#endif

static const krill_format_entry registry[] = {
    {"csr", "compressed sparse row; GPU kernels: thread per row (scalar) or sub-warp per row "
            "(vector), chosen by row lengths; forced: scalar, cyclic, block, warp, vector[:N]",
     &krill_csr_cpu_ops, CUDA_OPS(krill_csr_cuda_ops)},
    {"ell", "ELLPACK: N x K column-major, padded to the longest row K (formula (2))",
     &krill_ell_cpu_ops, CUDA_OPS(krill_ell_cuda_ops)},
    {"ellr", "ELL-R: ELL plus row lengths, loops end at each row's length (formula (3))",
     &krill_ellr_cpu_ops, CUDA_OPS(krill_ellr_cuda_ops)},
    {"rbp-csr", "Row Block Packing on CSR: runs of consecutive columns as (first, last) pairs, "
                "isolated entries in CSR (Algorithms 3-4, formula (4))",
     &krill_rbp_csr_cpu_ops, CUDA_OPS(krill_rbp_csr_cuda_ops)},
    {"rbp-ell", "Row Block Packing on ELL: runs in a compressed ELL, isolated entries in CSR "
                "(Algorithm 5, formula (5))",
     &krill_rbp_ell_cpu_ops, CUDA_OPS(krill_rbp_ell_cuda_ops)},
    {"rbp-ellr", "RBP-ELL plus run lengths, loops end at each row's length (formula (6))",
     &krill_rbp_ellr_cpu_ops, CUDA_OPS(krill_rbp_ellr_cuda_ops)},
    {"segscan", "segmented scan: nonzero stream in segments of 32 with build-time row flags and "
                "run indices, tree sums, carries between segments", &krill_segscan_cpu_ops,
     CUDA_OPS(krill_segscan_cuda_ops)},
    {"cusparse", "cuSPARSE cusparseSpMV on the same CSR (GPU only; the reference peer)", NULL,
     CUDA_OPS(krill_cusparse_cuda_ops)},
};

#define N_FORMATS (sizeof registry / sizeof registry[0])

const krill_format_entry *krill_format_find(const char *name, const char **param)
{
    const char *colon = strchr(name, ':');
    size_t len = colon ? (size_t)(colon - name) : strlen(name);
    *param = colon ? colon + 1 : NULL;
    for (size_t i = 0; i < N_FORMATS; i++)
        if (strlen(registry[i].name) == len && strncmp(registry[i].name, name, len) == 0)
            return &registry[i];
    return NULL;
}

const char *const *krill_format_names(void)
{
    static const char *names[N_FORMATS + 1];
    for (size_t i = 0; i < N_FORMATS; i++) names[i] = registry[i].name;
    names[N_FORMATS] = NULL;
    return names;
}

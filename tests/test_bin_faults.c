/* test_bin_faults: allocation faults through the public functions of krill's binary CSR
 * files (io/bin_write.c, io/bin_read.c), walked with tu_alloc_fault_walk: krill_bin_write
 * (a failure leaves neither the target nor a temporary file behind), krill_bin_read and
 * krill_bin_read_rows (a failure returns no matrix), each on a file of 64-byte chunks so
 * that every buffer of the reader (checksums, a partial chunk, row offsets) is taken. */
#define _XOPEN_SOURCE 700   /* mkdtemp */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core_impl.h"
#include "testutil.h"

static char dir[64], target[128], source[128];

typedef struct bin_call {
    const krill_csr *a;
    krill_csr *out;
} bin_call;

/* files in dir besides `source` */
static int others(void)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d) closedir(d);
    return n - 1;
}

static krill_status run_write(void *user)
{
    return krill_bin_write(target, ((bin_call *)user)->a, 64);
}

static int write_intact(void *user)
{
    (void)user;
    return access(target, F_OK) != 0 && others() == 0;
}

static void write_undo(void *user)
{
    bin_call *c = user;
    krill_csr *back = NULL;
    CHECK_OK(krill_bin_read(target, &back, NULL));
    CHECK(back && back->nnz == c->a->nnz &&
          !memcmp(back->val, c->a->val, (size_t)back->nnz * sizeof *back->val));
    krill_csr_destroy(&back);
    remove(target);
}

static krill_status run_read(void *user)
{
    return krill_bin_read(source, &((bin_call *)user)->out, NULL);
}

static krill_status run_read_rows(void *user)
{
    return krill_bin_read_rows(source, 5, 40, &((bin_call *)user)->out, NULL);
}

static int out_null(void *user) { return ((bin_call *)user)->out == NULL; }

static void out_free(void *user) { krill_csr_destroy(&((bin_call *)user)->out); }

int main(void)
{
    krill_csr *a = NULL;
    bin_call c = { NULL, NULL };
    snprintf(dir, sizeof dir, "/tmp/krill-binf-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    snprintf(target, sizeof target, "%s/w.krill", dir);
    snprintf(source, sizeof source, "%s/a.krill", dir);
    CHECK_OK(krill_gen("poisson3d:4", &a));
    CHECK_OK(krill_bin_write(source, a, 64));
    c.a = a;
    /* the writer's symmetry test survives a refused allocation (test_faults.c): walk all */
    tu_fault_call w = { "krill_bin_write", run_write, write_intact, write_undo, &c, 1 };
    tu_alloc_fault_walk(&w);
    tu_fault_call r = { "krill_bin_read", run_read, out_null, out_free, &c, 0 };
    tu_alloc_fault_walk(&r);
    tu_fault_call s = { "krill_bin_read_rows", run_read_rows, out_null, out_free, &c, 0 };
    tu_alloc_fault_walk(&s);
    krill_csr_destroy(&a);
    remove(source);
    rmdir(dir);
    return tu_finish("test_bin_faults");
}

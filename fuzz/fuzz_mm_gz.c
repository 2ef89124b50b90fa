/* fuzz/fuzz_mm_gz.c - libFuzzer harness of the Matrix Market reader on gzip files.
 *
 * The input is the plain text. It is compressed here (one gzip member, or two when its
 * length is odd: the reader must join the members) into a scratch .mtx.gz, read with
 * krill_mm_read, and compared with krill_mm_read_buffer of the plain text under the same
 * name: the same status, message and matrix bit for bit; a matrix read without error
 * passes fuzz_check_matrix. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_util.h"
#include "krill/io.h"

#define GZIP_WINDOW (16 + MAX_WBITS)   /* deflateInit2: write a gzip header and trailer */

/* Append the gzip member of src[0..n) to out (room: cap bytes) at *used. */
static void gzip_member(const uint8_t *src, size_t n, uint8_t *out, size_t cap, size_t *used)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, 6, Z_DEFLATED, GZIP_WINDOW, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        fuzz_fail("deflateInit2 failed");
    zs.next_in = (Bytef *)(uintptr_t)src;
    zs.avail_in = (uInt)n;
    zs.next_out = out + *used;
    zs.avail_out = (uInt)(cap - *used);
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END) fuzz_fail("deflate did not finish");
    *used = cap - zs.avail_out;
    deflateEnd(&zs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    krill_csr *from_gzip = NULL, *from_text = NULL;
    fuzz_outcome gzip_read, text_read;
    const char *path = fuzz_path("input.mtx.gz");
    const size_t cap = 2 * (compressBound((uLong)size) + 64);
    const size_t half = size % 2 ? size / 2 : size;
    size_t used = 0;
    uint8_t *z = malloc(cap);
    if (!z) fuzz_fail("out of memory compressing %zu bytes", size);
    gzip_member(data, half, z, cap, &used);
    if (half < size) gzip_member(data + half, size - half, z, cap, &used);
    fuzz_write(path, z, used);
    free(z);
    fuzz_record(&gzip_read, krill_mm_read(path, &from_gzip, NULL));
    fuzz_record(&text_read, krill_mm_read_buffer(path, (const char *)data, size, &from_text, NULL));
    fuzz_same_outcome(&gzip_read, &text_read, "gzip file and plain buffer reads");
    fuzz_same_csr(from_gzip, from_text, "gzip file and plain buffer reads");
    if (from_gzip) fuzz_check_matrix(from_gzip);
    krill_csr_destroy(&from_gzip);
    krill_csr_destroy(&from_text);
    return 0;
}

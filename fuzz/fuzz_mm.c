/* fuzz/fuzz_mm.c - libFuzzer harness of the Matrix Market reader on a file and on a buffer.
 *
 * The input is written to a scratch file and read with krill_mm_read (which inflates it
 * when it starts with the gzip magic bytes: the corpus holds a few .gz files, so corrupt
 * gzip data is explored too) and, unless it is gzip data, with krill_mm_read_buffer under
 * the same name. Properties: both reads end alike (status, message, header info, matrix bit
 * for bit), and a matrix read without error passes fuzz_check_matrix. */
#include <string.h>

#include "fuzz_util.h"
#include "krill/io.h"

static void same_info(const krill_mm_info *a, const krill_mm_info *b)
{
    if (a->is_array != b->is_array || a->field != b->field || a->symmetry != b->symmetry ||
        a->rows != b->rows || a->cols != b->cols || a->entries != b->entries)
        fuzz_fail("file and buffer reads report different header info");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    krill_csr *from_file = NULL, *from_buffer = NULL;
    krill_mm_info file_info, buffer_info;
    fuzz_outcome file_read, buffer_read;
    const char *path = fuzz_path("input.mtx");
    const int gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    memset(&file_info, 0, sizeof file_info);
    memset(&buffer_info, 0, sizeof buffer_info);
    fuzz_write(path, data, size);
    fuzz_record(&file_read, krill_mm_read(path, &from_file, &file_info));
    if (!gzip) {
        fuzz_record(&buffer_read, krill_mm_read_buffer(path, (const char *)data, size,
                                                       &from_buffer, &buffer_info));
        fuzz_same_outcome(&file_read, &buffer_read, "file and buffer reads");
        same_info(&file_info, &buffer_info);
        fuzz_same_csr(from_file, from_buffer, "file and buffer reads");
    }
    if ((file_read.st == KRILL_OK) != (from_file != NULL))
        fuzz_fail("status %d with%s a matrix", (int)file_read.st, from_file ? "" : "out");
    if (from_file) fuzz_check_matrix(from_file);
    krill_csr_destroy(&from_file);
    krill_csr_destroy(&from_buffer);
    return 0;
}

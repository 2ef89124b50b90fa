/* tests/test_npy_write.c - krill_npy_write: each dtype read back byte for byte (magic,
 * version, header length, the header dict and its padding to 64 bytes, the data in C
 * order, little endian), empty and wide shapes, and the refusals: a bad dtype or shape, no
 * data, an unwritable path (no file is left), a full disk (/dev/full, where it is the
 * character device: never a regular file that a test would write over). */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static char path_buf[256];

static const char *tmp_path(const char *suffix)
{
    snprintf(path_buf, sizeof path_buf, "test_npy_write_%d%s", (int)getpid(), suffix);
    return path_buf;
}

static int exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

/* The whole file into a malloc'ed buffer (*len bytes); NULL if it cannot be read. */
static unsigned char *slurp(const char *path, size_t *len)
{
    unsigned char *buf = NULL;
    long size = -1;
    FILE *f = fopen(path, "rb");
    if (f && fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0) buf = malloc((size_t)size + 1);
    if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    if (f) fclose(f);
    *len = buf ? (size_t)size : 0;
    return buf;
}

/* Write `data` as dtype with the shape, read the file back and check every byte. */
static void check_roundtrip(const char *dtype, int64_t rows, int64_t cols, const void *data,
                            size_t elem)
{
    const char *path = tmp_path(".npy");
    char dict[160];
    size_t len = 0;
    unsigned char *buf = NULL;
    CHECK_OK(krill_npy_write(path, dtype, rows, cols, data));
    buf = slurp(path, &len);
    CHECK(buf != NULL);
    if (buf) {
        const size_t data_bytes = (size_t)rows * (size_t)cols * elem;
        const size_t header_len = len >= 10 ? (size_t)buf[8] | (size_t)buf[9] << 8 : 0;
        const int dict_len = snprintf(dict, sizeof dict,
                                      "{'descr': '%s', 'fortran_order': False, "
                                      "'shape': (%lld, %lld), }",
                                      dtype, (long long)rows, (long long)cols);
        CHECK(len >= 10 && !memcmp(buf, "\x93NUMPY\x01\x00", 8));
        CHECK((10 + header_len) % 64 == 0);
        CHECK(len == 10 + header_len + data_bytes);
        if (len == 10 + header_len + data_bytes && header_len > (size_t)dict_len) {
            const char *header = (const char *)buf + 10;
            CHECK(!memcmp(header, dict, (size_t)dict_len));
            for (size_t k = (size_t)dict_len; k + 1 < header_len; k++) CHECK(header[k] == ' ');
            CHECK(header[header_len - 1] == '\n');
            /* on the little-endian hosts krill builds for, the bytes are memory's */
            CHECK(data_bytes == 0 || !memcmp(buf + 10 + header_len, data, data_bytes));
        } else {
            CHECK(!"file length or header length wrong");
        }
    }
    free(buf);
    remove(path);
}

static void test_dtypes(void)
{
    int32_t i4[15];
    float f4[15];
    double f8[15];
    for (int k = 0; k < 15; k++) {
        i4[k] = k % 2 ? -k * 1000003 : k;
        f4[k] = (float)k / 7.0f - 1.0f;
        f8[k] = (double)k / 3.0 - 2.0;
    }
    i4[14] = KRILL_APSP_INT32_INF;
    f4[13] = INFINITY;                        /* infinities are stored as they are */
    f8[13] = -INFINITY;
    check_roundtrip("<i4", 3, 5, i4, 4);
    check_roundtrip("<f4", 5, 3, f4, 4);
    check_roundtrip("<f8", 1, 15, f8, 8);
    check_roundtrip("<f8", 15, 1, f8, 8);
    check_roundtrip("<i4", 0, 0, NULL, 4);    /* empty: header only */
    check_roundtrip("<f4", 0, 7, NULL, 4);
    /* a wide shape: 10-digit sizes still pad to 64 (the dict is longer than one line) */
    check_roundtrip("<i4", 1234567890, 0, NULL, 4);
}

static void test_refusals(void)
{
    const int32_t v[4] = { 1, 2, 3, 4 };
    const char *path = tmp_path("_bad.npy");
    CHECK_STATUS(krill_npy_write(path, "<i8", 2, 2, v), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "<i8") != NULL);
    CHECK_STATUS(krill_npy_write(path, ">i4", 2, 2, v), KRILL_ERR_ARG);
    CHECK_STATUS(krill_npy_write(path, NULL, 2, 2, v), KRILL_ERR_ARG);
    CHECK_STATUS(krill_npy_write(path, "<i4", -1, 2, v), KRILL_ERR_ARG);
    CHECK_STATUS(krill_npy_write(path, "<i4", 2, 2, NULL), KRILL_ERR_ARG);
    CHECK_STATUS(krill_npy_write(path, "<f8", INT64_MAX, 2, v), KRILL_ERR_ARG);
    CHECK_STATUS(krill_npy_write(NULL, "<i4", 2, 2, v), KRILL_ERR_ARG);
    CHECK(!exists(path));
    CHECK_STATUS(krill_npy_write("no-such-dir/x.npy", "<i4", 2, 2, v), KRILL_ERR_IO);
    CHECK(strstr(krill_last_error(), "no-such-dir/x.npy") != NULL);
    struct stat sb;
    if (stat("/dev/full", &sb) == 0 && S_ISCHR(sb.st_mode)) {   /* writes fail: ENOSPC */
        static int32_t big[1 << 16];
        CHECK_STATUS(krill_npy_write("/dev/full", "<i4", 1, 1 << 16, big), KRILL_ERR_IO);
        CHECK(strstr(krill_last_error(), "/dev/full") != NULL);
    }
}

int main(void)
{
    test_dtypes();
    test_refusals();
    return tu_finish("test_npy_write");
}

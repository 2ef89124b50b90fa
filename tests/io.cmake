# tests of area io: the Matrix Market reader and writer
krill_test(test_mm_read test_mm_read.c LABELS unit)
krill_test(test_mm_write test_mm_write.c LABELS unit)
krill_test(test_mm_testdata test_mm_testdata.c LABELS data)
krill_test(test_npy_write test_npy_write.c LABELS unit)
krill_test(test_mm_edges test_mm_edges.c LABELS unit)
krill_test(test_outfile test_outfile.c LABELS unit)   # output files written whole or not at all
# krill's binary CSR files: round trips, slices, every corruption, hostile sizes
krill_test(test_bin_io test_bin_io.c LABELS unit)

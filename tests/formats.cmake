# The formats through the krill_mat API, on the CPU (GPU: gpu.cmake)
krill_test(test_csr_format test_csr_format.c LABELS unit)
krill_test(test_csr_testdata test_csr_testdata.c LABELS data)

krill_test(test_core test_core.c LABELS unit)
krill_test(test_csr_format test_csr_format.c LABELS unit)
krill_test(test_csr_testdata test_csr_testdata.c LABELS data)

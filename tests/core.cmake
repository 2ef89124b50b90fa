krill_test(test_core test_core.c LABELS unit)
krill_test(test_ctx_threads test_ctx_threads.c LABELS unit)

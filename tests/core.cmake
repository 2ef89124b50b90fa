krill_test(test_core test_core.c LABELS unit)

# allocation faults walked through every public function that allocates and has no walk
# of its own elsewhere (tu_alloc_fault_walk in testutil.c; issue 17)
krill_test(test_faults test_faults.c LABELS unit)
# krill_bin_write, krill_bin_read and krill_bin_read_rows (krill's binary CSR files)
krill_test(test_bin_faults test_bin_faults.c LABELS unit)

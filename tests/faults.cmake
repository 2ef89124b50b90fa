# allocation faults walked through every public function that allocates and has no walk
# of its own elsewhere (tu_alloc_fault_walk in testutil.c; issue 17)
krill_test(test_faults test_faults.c LABELS unit)

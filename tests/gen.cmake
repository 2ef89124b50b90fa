# tests of area gen: the generators behind krill_gen (sizes, entries against independent
# oracles, the SpMV paper's Table 2 at full size, determinism, bad specs).
krill_test(test_gen test_gen.c LABELS unit)
# the vectors of the accuracy experiment (krill_gen_dot_vectors; `krill dot`, bench_dot)
krill_test(test_gen_vectors test_gen_vectors.c LABELS unit)

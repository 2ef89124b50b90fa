# benchmark programs of area io: Matrix Market read speed (bench/mm_read_vs_scipy.py runs it
# beside scipy.io.mmread on the same files)
krill_bench(bench_mm_read bench_mm_read.c)

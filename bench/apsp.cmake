# APSP benchmarks

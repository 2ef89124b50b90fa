# tests of the lanes of the reproducible row sums on the GPU (ozaki/ozaki_row.cuh's range
# kernel, bjacobi's and the ILU/IC solves' lanes): GPU bits = CPU bits on rows the fast
# path decides and rows the first lane finishes alone on the exact path (label gpu).
krill_test(test_gpu_repro_lanes test_gpu_repro_lanes.c LABELS gpu)
target_link_libraries(test_gpu_repro_lanes PRIVATE krill_repro_spmv_data)

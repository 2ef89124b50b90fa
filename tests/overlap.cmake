# tests of overlap/ (the CPU executor stands in for the GPU's lanes; test_gpu_overlap runs
# the same clients on a GPU). The model's cache goes to the build tree.
krill_test(test_overlap_plan test_overlap_plan.c LABELS unit)
krill_test(test_overlap test_overlap.c LABELS unit)
krill_test(test_gpu_overlap test_gpu_overlap.c LABELS gpu)
foreach(t test_overlap test_gpu_overlap)
  set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_CURRENT_BINARY_DIR}/cache")
endforeach()

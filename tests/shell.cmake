# matrix-free operators (issue 20): shell matrices and shell preconditioners against the
# formats and the jacobi they wrap (bits, every solver, 1 and 2 threads), refusals, failing
# callbacks, argument checks and allocation faults; the CPU only (the shells have no device
# code: on a GPU context the callback gets device pointers)
krill_test(test_shell test_shell.c LABELS unit data)
# the same on a GPU context, where the callbacks get device pointers (skips without a GPU)
krill_test(test_gpu_shell test_gpu_shell.c LABELS gpu)
# a caller's CSR arrays in device memory, wrapped without a copy (krill_mat_create_device_csr)
# against the copied GPU csr: bits, solves, update_values, refusals, faults (skips without a GPU)
krill_test(test_gpu_device_csr test_gpu_device_csr.c LABELS gpu)

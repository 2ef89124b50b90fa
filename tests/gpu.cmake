# tests of area gpu: need a CUDA device; each exits 77 (skipped) with a message where there is
# none (or in a build without CUDA), so they are built everywhere and run on a GPU machine.
krill_test(test_gpu_ctx test_gpu_ctx.c LABELS gpu)
krill_test(test_gpu_blas1 test_gpu_blas1.c LABELS gpu)
krill_test(test_gpu_csr test_gpu_csr.c LABELS gpu)
krill_test(test_gpu_setup test_gpu_setup.c LABELS gpu)   # staged uploads, the pipelined format builds

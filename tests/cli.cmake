# The `krill` command (label cli) and the installed package (label install).
set(KRILL_CLI_DIR ${CMAKE_CURRENT_SOURCE_DIR}/cli)
set(KRILL_CLI_ENV "KRILL_TESTDATA=${KRILL_TESTDATA_DIR};KRILL_TESTDATA_LOCAL=${KRILL_TESTDATA_LOCAL_DIR};OMP_NUM_THREADS=2")

# krill_cli_case(NAME EXIT STDOUT_ERE STDERR_ERE ARGS...): one run of krill, checked.
function(krill_cli_case name expected out_re err_re)
  add_test(NAME cli_${name} COMMAND sh ${KRILL_CLI_DIR}/run_case.sh ${expected}
           "${out_re}" "${err_re}" -- $<TARGET_FILE:krill_cli> ${ARGN})
  set_tests_properties(cli_${name} PROPERTIES LABELS cli ENVIRONMENT "${KRILL_CLI_ENV}")
endfunction()

# krill_cli_scenario(NAME): a multi-step case of scenarios.sh (exit 77 = skipped).
function(krill_cli_scenario name)
  add_test(NAME cli_${name} COMMAND bash ${KRILL_CLI_DIR}/scenarios.sh
           $<TARGET_FILE:krill_cli> ${name})
  set_tests_properties(cli_${name} PROPERTIES LABELS cli SKIP_RETURN_CODE 77
                       ENVIRONMENT "${KRILL_CLI_ENV}")
endfunction()

krill_cli_case(default_problem 0 "^matrix +elasticity3d:.* \\(default problem\\)" "" solve)
krill_cli_case(solve_converges 0 "^result +converged" "" solve --gen poisson3d:10)
krill_cli_case(solve_rhs_random 0 "^result +converged" "" solve --gen poisson3d:6 --rhs random)
krill_cli_case(solve_jacobi 0 "precond jacobi" "" solve --gen poisson3d:6 --precond jacobi)
krill_cli_case(solve_gmres_mgs 0 "ortho mgs" "" solve --gen poisson3d:6 --solver gmres
               --ortho mgs --restart 5)
# DCGS2 (issue 18): runs and says so; a bad --ortho names the option, the choices and the value
krill_cli_case(solve_gmres_dcgs2 0 "ortho dcgs2" "" solve --gen convdiff3d:6 --solver gmres
               --ortho dcgs2)
krill_cli_case(solve_fgmres_dcgs2 0 "^result +converged" "" solve --gen convdiff3d:6
               --solver fgmres --precond jacobi --ortho dcgs2)
krill_cli_case(bad_ortho 2 "" "--ortho expects one of cgs2, mgs, dcgs2; got 'cgs3'" solve
               --gen poisson3d:4 --ortho cgs3)
# s-step GMRES (issue 18's stretch): runs and says so; a restart that is not a multiple of S,
# S out of range and S with CG are refused with the reason
krill_cli_case(solve_sstep 0 "s-step 4 \\(Newton basis" "" solve --gen convdiff3d:8 --solver gmres
               --sstep 4 --restart 32)
krill_cli_case(solve_sstep_converges 0 "^result +converged" "" solve --gen convdiff3d:8
               --solver gmres --sstep 8 --restart 16 --precond jacobi)
krill_cli_case(sstep_restart 2 "" "restart = 30 is not a multiple of sstep = 4" solve
               --gen convdiff3d:6 --solver gmres --sstep 4)
krill_cli_case(sstep_range 2 "" "--sstep" solve --gen convdiff3d:6 --solver gmres --sstep 33)
krill_cli_case(sstep_cg 2 "" "sstep = 2 applies to GMRES only, not to cg" solve
               --gen poisson3d:4 --solver cg --sstep 2 --restart 4)
krill_cli_case(sstep_chooses_gmres 0 "^solver +gmres \\(--sstep asks for s-step GMRES\\)" ""
               solve --gen poisson3d:6 --sstep 2 --restart 4)
krill_cli_case(monitor 0 "" "^iter +[0-9]+ +resid" solve --gen poisson3d:4 --monitor)
krill_cli_case(unknown_option 2 "" "--bogus" solve --gen poisson3d:4 --bogus)
krill_cli_case(threads_zero 2 "" "--threads" solve --gen poisson3d:4 --threads 0)
krill_cli_case(threads_negative 2 "" "--threads" solve --gen poisson3d:4 --threads=-3)
krill_cli_case(rtol_garbage 2 "" "--rtol.*abc" solve --gen poisson3d:4 --rtol abc)
krill_cli_case(missing_value 2 "" "--maxit" solve --gen poisson3d:4 --maxit)
krill_cli_case(bad_choice 2 "" "--solver" solve --gen poisson3d:4 --solver bicg)
krill_cli_case(bad_spec 2 "" "" solve --gen poisson3d:abc)
krill_cli_case(file_and_gen 2 "" "either" solve a.mtx --gen poisson3d:4)
krill_cli_case(missing_file 2 "" "no-such.mtx" solve no-such.mtx)
krill_cli_case(bad_format 2 "" "" solve --gen poisson3d:4 --format nosuchformat)
# --format auto (issue 18): the solve's expected SpMVs (one restart cycle, at most --maxit)
# weigh the builds: band101:20000 on 2 CPU threads keeps csr for 3 iterations (5 SpMVs;
# rbp-csr's build needs 7 to clear the model's margin) and builds rbp-csr for a full cycle
krill_cli_case(solve_auto_short 1 "\"format\": \"csr\"" "" solve --gen band101:20000
               --device cpu --threads 2 --format auto --maxit 3 --json)
krill_cli_case(solve_auto_cycle 0 "\"format\": \"rbp-csr\"" "" solve --gen band101:20000
               --device cpu --threads 2 --format auto --json)
krill_cli_case(solve_auto_reason 0 "\"format_choice\": \"rbp-csr: estimated" "" solve
               --gen band101:20000 --device cpu --threads 2 --format auto --json)
krill_cli_case(solve_auto_reason_text 0 "auto: csr: small matrix" "" solve --gen poisson3d:8
               --device cpu --format auto)
krill_cli_case(solve_no_auto_reason 0 "\"format_choice\": null" "" solve --gen poisson3d:8
               --device cpu --json)
krill_cli_case(solve_auto_bad_spmvs 2 "" "spmvs must be a whole number" solve
               --gen poisson3d:4 --format auto:spmvs=0)
krill_cli_case(info 0 "CUDA" "" info)
krill_cli_case(gen_list 0 "poisson3d" "" gen --list)
krill_cli_case(gen_no_output 2 "" "-o" gen poisson3d:4)
krill_cli_case(version 0 "^krill [0-9]+\\.[0-9]+\\.[0-9]+$" "" --version)
krill_cli_case(help 0 "^usage: krill COMMAND" "" --help)
krill_cli_case(help_solve 0 "^usage: krill solve" "" solve --help)
krill_cli_case(help_gen 0 "^usage: krill gen" "" help gen)
krill_cli_case(no_command 2 "" "usage" )
krill_cli_case(unknown_command 2 "" "frobnicate" frobnicate)

krill_cli_case(solve_fgmres 0 "^solver +fgmres" "" solve --gen convdiff3d:6 --solver fgmres
               --precond jacobi)
krill_cli_case(solve_bicgstab 0 "^result +converged" "" solve --gen convdiff3d:6 --solver bicgstab)
krill_cli_case(bad_precond 2 "" "unknown preconditioner \"nosuch\" \\(known: none, jacobi" solve
               --gen poisson3d:4 --precond nosuch)
krill_cli_case(bad_precond_param 2 "" "jacobi.*parameter" solve --gen poisson3d:4
               --precond jacobi:3)
krill_cli_case(help_solve_preconds 0 "one of: none, jacobi" "" solve --help)
foreach(scenario json maxit malformed default_solver gen_solve out history gmres solvers rhs_length
                 no_gpu rectangular complex runs)
  krill_cli_scenario(${scenario})
endforeach()

# krill formats: argument errors here, the multi-step cases in cli/formats.sh.
krill_cli_case(help_lists_formats 0 "^  formats +compare" "" help)
krill_cli_case(formats_help 0 "^usage: krill formats" "" formats --help)
krill_cli_case(formats_no_matrix 2 "" "matrix file or --gen" formats)
krill_cli_case(formats_file_and_gen 2 "" "either" formats a.mtx --gen poisson3d:4)
krill_cli_case(formats_missing_file 2 "" "no-such.mtx" formats no-such.mtx)
krill_cli_case(formats_bad_option 2 "" "--bogus" formats --gen poisson3d:4 --bogus)
krill_cli_case(formats_unknown_format 2 "" "--formats.*nosuch" formats --gen poisson3d:4
               --formats csr,nosuch)
krill_cli_case(formats_bad_variant 2 "" "--formats.*ell:x" formats --gen poisson3d:4
               --formats ell:x)
krill_cli_case(formats_twice 2 "" "--formats.*twice" formats --gen poisson3d:4 --formats csr,csr)
krill_cli_case(formats_empty_name 2 "" "--formats.*empty" formats --gen poisson3d:4
               --formats csr,,ell)
krill_cli_case(formats_reps_zero 2 "" "--reps" formats --gen poisson3d:4 --reps 0)
krill_cli_case(formats_bad_reorder 2 "" "--reorder" formats --gen poisson3d:4 --reorder amd)
krill_cli_case(formats_two_stdout 2 "" "stdout" formats --gen poisson3d:4 --json - --csv -)
krill_cli_case(formats_unwritable 2 "" "--plot no-such-dir/f.svg" formats --gen poisson3d:4
               --plot no-such-dir/f.svg)
foreach(scenario table outputs stdout escape not_built reorder rectangular testdata)
  add_test(NAME cli_formats_${scenario} COMMAND bash ${KRILL_CLI_DIR}/formats.sh
           $<TARGET_FILE:krill_cli> ${scenario})
  set_tests_properties(cli_formats_${scenario} PROPERTIES LABELS cli SKIP_RETURN_CODE 77
                       ENVIRONMENT "${KRILL_CLI_ENV}")
endforeach()
add_test(NAME cli_formats_gpu COMMAND bash ${KRILL_CLI_DIR}/formats.sh $<TARGET_FILE:krill_cli>
         gpu)
set_tests_properties(cli_formats_gpu PROPERTIES LABELS "cli;gpu" SKIP_RETURN_CODE 77
                     ENVIRONMENT "${KRILL_CLI_ENV}")

# Install into a temporary prefix, build examples/ against it with find_package(krill)
# and with pkg-config, and run it.
set(KRILL_INSTALL_TEST_ARGS)
if(KRILL_HAVE_CUDA)
  get_filename_component(KRILL_CUDA_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
  list(APPEND KRILL_INSTALL_TEST_ARGS "-DCUDAToolkit_ROOT=${KRILL_CUDA_ROOT}")
endif()
add_test(NAME install_package COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test_install.sh
         ${CMAKE_COMMAND} ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR}/examples
         "${CMAKE_GENERATOR}" ${CMAKE_C_COMPILER} ${CMAKE_INSTALL_LIBDIR}
         ${KRILL_INSTALL_TEST_ARGS})
# In a sanitizer build libkrill.so needs the sanitizer runtimes: build the example alike.
set(KRILL_EXAMPLE_CFLAGS "")
if(KRILL_SANITIZE)
  set(KRILL_EXAMPLE_CFLAGS "-fsanitize=address,undefined")
endif()
set_tests_properties(install_package PROPERTIES LABELS install TIMEOUT 600
                     ENVIRONMENT "OMP_NUM_THREADS=2;KRILL_EXAMPLE_CFLAGS=${KRILL_EXAMPLE_CFLAGS}")

# krill dot (the accuracy experiment of the reproducible mode): argument errors here, the
# output and the exact values in cli/dot.sh.
krill_cli_case(dot_help 0 "^usage: krill dot --n N --phi P" "" dot --help)
krill_cli_case(help_lists_dot 0 "^  dot +one dot product" "" help)
krill_cli_case(dot_no_n 2 "" "missing --n" dot --phi 1)
krill_cli_case(dot_no_phi 2 "" "missing --phi" dot --n 10)
krill_cli_case(dot_n_zero 2 "" "--n expects an integer in \\[1, " dot --n 0 --phi 1)
krill_cli_case(dot_n_garbage 2 "" "--n .*'12x'" dot --n 12x --phi 1)
krill_cli_case(dot_phi_negative 2 "" "--phi expects a number in \\[0, 20\\], got '-1'" dot
               --n 10 --phi=-1)
krill_cli_case(dot_phi_too_big 2 "" "--phi .*'21'" dot --n 10 --phi 21)
krill_cli_case(dot_phi_nan 2 "" "--phi .*'nan'" dot --n 10 --phi nan)
krill_cli_case(dot_slices_too_many 2 "" "--slices expects an integer in \\[0, 64\\], got '65'" dot
               --n 10 --phi 1 --slices 65)
krill_cli_case(dot_fast_no_slices 2 "" "--fast needs --slices S >= 1 \\(got no --slices\\)" dot
               --n 10 --phi 1 --fast)
krill_cli_case(dot_fast_slices_zero 2 "" "--fast needs --slices S >= 1 \\(got --slices 0\\)" dot
               --n 10 --phi 1 --fast --slices 0)
krill_cli_case(dot_bad_device 2 "" "--device expects one of auto, cpu, gpu; got 'tpu'" dot
               --n 10 --phi 1 --device tpu)
krill_cli_case(dot_threads_zero 2 "" "--threads" dot --n 10 --phi 1 --threads 0)
krill_cli_case(dot_reps_zero 2 "" "--reps" dot --n 10 --phi 1 --reps 0)
krill_cli_case(dot_extra_argument 2 "" "unexpected argument 'x'" dot --n 10 --phi 1 x)
krill_cli_case(dot_unknown_option 2 "" "unknown option '--bogus'" dot --n 10 --phi 1 --bogus)
foreach(scenario shape fast exact_only threads)
  add_test(NAME cli_dot_${scenario} COMMAND bash ${KRILL_CLI_DIR}/dot.sh
           $<TARGET_FILE:krill_cli> ${scenario})
  set_tests_properties(cli_dot_${scenario} PROPERTIES LABELS cli SKIP_RETURN_CODE 77
                       ENVIRONMENT "${KRILL_CLI_ENV}")
endforeach()
add_test(NAME cli_dot_gpu COMMAND bash ${KRILL_CLI_DIR}/dot.sh $<TARGET_FILE:krill_cli> gpu)
set_tests_properties(cli_dot_gpu PROPERTIES LABELS "cli;gpu" SKIP_RETURN_CODE 77
                     ENVIRONMENT "${KRILL_CLI_ENV}")

# krill solve --repro: the solution hash across threads, formats and devices (cli/repro.sh).
krill_cli_case(solve_repro 0 "^repro +on: Ozaki scheme, exact" "" solve --gen poisson3d:6 --repro)
krill_cli_case(solve_repro_slices 0 "^repro +on: Ozaki scheme, at most 2 slices" "" solve
               --gen poisson3d:6 --repro=2)
krill_cli_case(solve_hash 0 "solution hash [0-9a-f]{16} " "" solve --gen poisson3d:6)
krill_cli_case(solve_repro_negative 2 "" "--repro expects an integer in \\[0, 64\\], got '-1'"
               solve --gen poisson3d:6 --repro=-1)
foreach(scenario threads formats plain_differs)
  add_test(NAME cli_repro_${scenario} COMMAND bash ${KRILL_CLI_DIR}/repro.sh
           $<TARGET_FILE:krill_cli> ${scenario})
  set_tests_properties(cli_repro_${scenario} PROPERTIES LABELS "cli;slow" SKIP_RETURN_CODE 77
                       ENVIRONMENT "${KRILL_CLI_ENV}")
endforeach()
add_test(NAME cli_repro_gpu COMMAND bash ${KRILL_CLI_DIR}/repro.sh $<TARGET_FILE:krill_cli> gpu)
set_tests_properties(cli_repro_gpu PROPERTIES LABELS "cli;gpu" SKIP_RETURN_CODE 77
                     ENVIRONMENT "${KRILL_CLI_ENV}")

# krill apsp (all-pairs shortest paths): argument errors here, the multi-step cases (the
# summary, JSON, paths, files, checksums across methods and threads) in cli/apsp.sh.
krill_cli_case(apsp_help 0 "^usage: krill apsp GRAPH.--gen SPEC" "" apsp --help)
krill_cli_case(apsp_help_gen_specs 0 "random:N" "" help apsp)
krill_cli_case(help_lists_apsp 0 "^  apsp +all-pairs shortest paths" "" help)
krill_cli_case(apsp_unknown_option 2 "" "unknown option '--bogus'" apsp --gen random:20 --bogus)
krill_cli_case(apsp_file_and_gen 2 "" "either a graph file or --gen" apsp g.gr --gen random:20)
krill_cli_case(apsp_no_graph 2 "" "missing the graph" apsp)
krill_cli_case(apsp_two_files 2 "" "unexpected argument 'b.gr'" apsp a.gr b.gr)
krill_cli_case(apsp_bad_weights 2 "" "--weights expects one of int32, float, double; got 'int64'"
               apsp --gen random:20 --weights int64)
krill_cli_case(apsp_bad_method 2 "" "--method expects one of auto, .*fw-a.*; got 'fw-z'" apsp
               --gen random:20 --method fw-z)
krill_cli_case(apsp_bad_device 2 "" "--device expects one of auto, cpu, gpu" apsp --gen random:20
               --device tpu)
krill_cli_case(apsp_bad_format 2 "" "--format expects one of auto, dimacs" apsp g.gr --format csv)
krill_cli_case(apsp_bad_ids 2 "" "--ids expects one of remap, 0, 1" apsp g.txt --ids 2)
krill_cli_case(apsp_format_with_gen 2 "" "--format applies to graph files" apsp --gen random:20
               --format dimacs)
krill_cli_case(apsp_path_out_of_range 2 "" "--path 0 20: vertex 20 is out of range" apsp
               --gen random:20 --path 0 20)
krill_cli_case(apsp_path_negative 2 "" "--path -1 3: vertex -1 is out of range" apsp
               --gen random:20 --path -1 3)
krill_cli_case(apsp_path_comma_out_of_range 2 "" "vertex 25 is out of range" apsp --gen random:20
               --path 25,1)
krill_cli_case(apsp_path_one_value 2 "" "--path expects two vertices.*got '3'" apsp
               --gen random:20 --path 3)
krill_cli_case(apsp_path_garbage 2 "" "--path expects two vertices.*got '1,x'" apsp
               --gen random:20 --path 1,x)
krill_cli_case(apsp_pred_not_npy 2 "" "--pred p.txt: P is written as .npy only" apsp
               --gen random:20 --pred p.txt)
krill_cli_case(apsp_out_bad_extension 2 "" "--out d.csv: unknown extension" apsp --gen random:20
               --out d.csv)
krill_cli_case(apsp_out_unwritable 2 "" "no-such-dir/d.npy" apsp --gen random:20 --device cpu
               --out no-such-dir/d.npy)
krill_cli_case(apsp_threads_zero 2 "" "--threads" apsp --gen random:20 --threads 0)
krill_cli_case(apsp_tile_zero 2 "" "--tile" apsp --gen random:20 --tile 0)
krill_cli_case(apsp_tile_not_multiple 2 "" "--tile 7: .*multiple" apsp --gen random:20
               --device cpu --method fw-a --tile 7)
krill_cli_case(apsp_out_of_memory 3 "" "bytes" apsp --gen random:1000000 --device cpu)
krill_cli_case(apsp_missing_file 2 "" "no-such.gr" apsp no-such.gr)
krill_cli_case(apsp_bad_spec 2 "" "" apsp --gen random:abc)
krill_cli_case(apsp_gen_runs 0 "^ +checksum [0-9a-f]{16} " "" apsp --gen random:100
               --device cpu)
foreach(scenario summary json path negative negative_cycle malformed edgelist outputs methods
                 out_of_core testdata no_gpu)
  add_test(NAME cli_apsp_${scenario} COMMAND bash ${KRILL_CLI_DIR}/apsp.sh
           $<TARGET_FILE:krill_cli> ${scenario})
  set_tests_properties(cli_apsp_${scenario} PROPERTIES LABELS cli SKIP_RETURN_CODE 77
                       ENVIRONMENT "${KRILL_CLI_ENV}")
endforeach()
add_test(NAME cli_apsp_gpu COMMAND bash ${KRILL_CLI_DIR}/apsp.sh $<TARGET_FILE:krill_cli> gpu)
set_tests_properties(cli_apsp_gpu PROPERTIES LABELS "cli;gpu" SKIP_RETURN_CODE 77
                     ENVIRONMENT "${KRILL_CLI_ENV}")

# Hostile thread counts and outputs that cannot be written (issue 17): cli/reliability.sh.
foreach(scenario threads_limit threads_refused stdout_full stdout_closed files_full
                 files_unwritable)
  add_test(NAME cli_reliability_${scenario} COMMAND bash ${KRILL_CLI_DIR}/reliability.sh
           $<TARGET_FILE:krill_cli> ${scenario})
  set_tests_properties(cli_reliability_${scenario} PROPERTIES LABELS cli SKIP_RETURN_CODE 77
                       ENVIRONMENT "${KRILL_CLI_ENV}")
endforeach()

# krill convert and krill solve A.krill (krill's binary CSR files): cli/convert.sh.
add_test(NAME cli_convert COMMAND bash ${KRILL_CLI_DIR}/convert.sh $<TARGET_FILE:krill_cli>
         ${KRILL_TESTDATA_LOCAL_DIR}/mtx)
set_tests_properties(cli_convert PROPERTIES LABELS cli ENVIRONMENT "${KRILL_CLI_ENV}")

# bench/ab_solve.py (two builds against each other): the same binary twice gives a table with
# the reproducible case's bits equal; a binary that cannot run is a failed run and exit 1
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  foreach(ab ab_solve_same ab_solve_missing)
    if(ab STREQUAL "ab_solve_same")
      set(ab_old $<TARGET_FILE:krill_cli>)
      set(ab_exit 0)
      set(ab_out "^\\| poisson3d:8 cg jacobi csr --repro \\| [0-9.]+ / [0-9.]+ \\| [0-9.]+ / [0-9.]+ \\| [0-9.]+ \\| yes \\|$")
    else()
      set(ab_old ${CMAKE_CURRENT_BINARY_DIR}/no-such-krill)
      set(ab_exit 1)
      set(ab_out "^FAILED: round 1, old: cannot run .*no-such-krill")
    endif()
    add_test(NAME cli_${ab} COMMAND sh ${KRILL_CLI_DIR}/run_case.sh ${ab_exit} "${ab_out}" ""
             -- ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/bench/ab_solve.py --old ${ab_old}
             --new $<TARGET_FILE:krill_cli> --device cpu --rounds 2 --runs 1 --maxit 4
             --case "poisson3d:8 cg jacobi csr --repro" --case "convdiff3d:6 gmres none csr")
    set_tests_properties(cli_${ab} PROPERTIES LABELS cli ENVIRONMENT "${KRILL_CLI_ENV}")
  endforeach()
endif()

! tests/test_fortran.f90 - module krill (fortran/krill.f90) beyond what examples/fem2d.f90
! does: the wrappers' strings and error messages (the module's own checks and the C
! library's), 1-based CSR input, vectors over Fortran arrays, the defaults of the bind(C)
! types, Matrix Market and generators, the monitor's user pointer and its stop, new values.
! On the CPU (the GPU is tests/gpu's business). Prints one line a failed check and exits 1
! if there was one. Run by tests/test_fortran.sh against the installed package.
module test_fortran_util
  use, intrinsic :: iso_c_binding
  implicit none
  integer :: failures = 0
contains
  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(a, a)', 'test_fortran: FAIL: ', what
      failures = failures + 1
    end if
  end subroutine expect

  ! A krill_monitor_fn: counts calls in the integer that user points to; stops at 2
  function stop_at_2(iteration, residual_norm, user) bind(C) result(stop_solve)
    integer(c_int), value :: iteration
    real(c_double), value :: residual_norm
    type(c_ptr), value :: user
    integer(c_int) :: stop_solve
    integer(c_int), pointer :: count
    call c_f_pointer(user, count)
    count = count + 1
    stop_solve = merge(1, 0, iteration >= 2 .and. residual_norm > 0)
  end function stop_at_2
end module test_fortran_util

program test_fortran
  use, intrinsic :: iso_c_binding
  use krill
  use test_fortran_util
  implicit none
  type(c_ptr) :: ctx, csr, csr2, mat, mat2, pc, vx, vy
  type(krill_ctx_alloc_stats) :: stats0, stats1
  type(krill_csr), pointer :: c
  integer(c_int64_t), pointer :: row_ptr(:)
  integer(c_int32_t), pointer :: col(:)
  real(c_double), pointer :: val(:)
  type(krill_solver_opts) :: opts, defaults
  type(krill_solve_info) :: info
  real(c_double), target :: x(4), y(4)
  real(c_double) :: b(4), r
  integer(c_int), target :: monitor_calls
  integer(c_int) :: st
  character(len=:), allocatable :: msg

  ! ---- strings -------------------------------------------------------------------------
  call expect(len(krill_version()) > 0, 'krill_version is empty')
  call expect(krill_status_string(KRILL_ERR_PARSE) == 'parse error', &
              'krill_status_string(KRILL_ERR_PARSE) = ' // krill_status_string(KRILL_ERR_PARSE))
  call expect(krill_reason_string(KRILL_CONVERGED_RTOL) == 'converged (rtol)', &
              'krill_reason_string(KRILL_CONVERGED_RTOL)')
  call expect(krill_solver_name(KRILL_SOLVER_PIPECG) == 'pipecg', &
              'krill_solver_name(KRILL_SOLVER_PIPECG) = ' // krill_solver_name(KRILL_SOLVER_PIPECG))
  call krill_clear_error()
  call expect(krill_last_error() == '', 'krill_last_error is not empty at the start')

  ! ---- the defaults of the bind(C) types are the C API's ---------------------------------
  call krill_solver_opts_default(defaults)
  call expect(opts%solver == defaults%solver .and. opts%rtol == defaults%rtol .and. &
              opts%atol == defaults%atol .and. opts%maxit == defaults%maxit .and. &
              opts%restart == defaults%restart .and. opts%ortho == defaults%ortho .and. &
              .not. c_associated(opts%monitor) .and. .not. c_associated(opts%monitor_data), &
              'type(krill_solver_opts)''s default initialization is not ' // &
              'krill_solver_opts_default''s')

  st = krill_ctx_create(krill_ctx_opts(device=KRILL_DEVICE_CPU, threads=2), ctx)
  call expect(st == KRILL_OK, 'krill_ctx_create: ' // krill_last_error())
  if (st /= KRILL_OK) stop 1
  call expect(krill_ctx_device(ctx) == KRILL_DEVICE_CPU, 'krill_ctx_device is not the CPU')
  call expect(krill_ctx_threads(ctx) == 2, 'krill_ctx_threads is not 2')
  call expect(index(krill_ctx_describe(ctx), 'cpu') == 1, &
              'krill_ctx_describe: ' // krill_ctx_describe(ctx))

  ! ---- the module's own argument checks, and their messages ------------------------------
  st = krill_csr_from_coo(2, 2, [1, 2], [1, 2], [1d0], csr)
  msg = krill_last_error()
  call expect(st == KRILL_ERR_ARG .and. .not. c_associated(csr) .and. &
              index(msg, 'differ in length (2, 2, 1)') > 0, 'coo length mismatch: ' // msg)
  st = krill_csr_from_coo(2, 3, [1, 2], [1, 4], [1d0, 2d0], csr)
  msg = krill_last_error()
  call expect(st == KRILL_ERR_ARG .and. index(msg, 'entry 2 is (2, 4), outside the ' // &
              '1-based 2 x 3 matrix') > 0, 'coo index out of range: ' // msg)
  st = krill_csr_from_coo(2, 2, [0, 1], [1, 1], [1d0, 2d0], csr)
  call expect(st == KRILL_ERR_ARG, 'coo row index 0 is accepted')
  st = krill_csr_from_arrays(2, 2, [0, 1, 2], [1, 2], [1d0, 2d0], csr)
  msg = krill_last_error()
  call expect(st == KRILL_ERR_ARG .and. index(msg, 'row_ptr(1) = 0, must be 1') > 0, &
              'csr row_ptr(1) = 0: ' // msg)
  st = krill_csr_from_arrays(2, 2, [1, 3], [1, 2], [1d0, 2d0], csr)
  msg = krill_last_error()
  call expect(st == KRILL_ERR_ARG .and. index(msg, 'row_ptr has 2 entries for 2 rows') > 0, &
              'csr short row_ptr: ' // msg)
  st = krill_csr_from_arrays(2, 2, [1, 2, 4], [1, 2], [1d0, 2d0], csr)
  msg = krill_last_error()
  call expect(st == KRILL_ERR_ARG .and. index(msg, '3 entries but col has 2') > 0, &
              'csr short col: ' // msg)
  ! a later failure of the C library replaces the module's message; clearing clears both
  st = krill_mm_read('no/such/file.mtx', csr)
  msg = krill_last_error()
  call expect(st == KRILL_ERR_IO .and. index(msg, 'no/such/file.mtx') > 0, &
              'krill_mm_read of a missing file: ' // msg)
  st = krill_csr_from_coo(1, 1, [1], [2], [1d0], csr)
  call krill_clear_error()
  call expect(krill_last_error() == '', 'krill_clear_error left a message')

  ! ---- a 1-based CSR with unsorted columns and a duplicate -------------------------------
  ! [ 4 -1  0  0 ]
  ! [-1  4 -1  0 ]   row 2 given as (3, -1), (1, -1), (2, 3), (2, 1)
  ! [ 0 -1  4 -1 ]
  ! [ 0  0 -1  4 ]
  st = krill_csr_from_arrays(4, 4, [1, 3, 7, 10, 12], &
                             [1, 2,  3, 1, 2, 2,  2, 3, 4,  3, 4], &
                             [4d0, -1d0,  -1d0, -1d0, 3d0, 1d0,  -1d0, 4d0, -1d0, &
                              -1d0, 4d0], csr)
  call expect(st == KRILL_OK, 'krill_csr_from_arrays: ' // krill_last_error())
  call c_f_pointer(csr, c)
  call expect(c%n_rows == 4 .and. c%n_cols == 4 .and. c%nnz == 10, 'the CSR''s sizes')
  call c_f_pointer(c%row_ptr, row_ptr, [c%n_rows + 1])
  call c_f_pointer(c%col, col, [c%nnz])
  call c_f_pointer(c%val, val, [c%nnz])
  call expect(all(row_ptr == [0, 2, 5, 8, 10]), 'row_ptr is not 0-based [0 2 5 8 10]')
  call expect(all(col == [0, 1, 0, 1, 2, 1, 2, 3, 2, 3]), 'col is not 0-based and sorted')
  call expect(all(val == [4d0, -1d0, -1d0, 4d0, -1d0, -1d0, 4d0, -1d0, -1d0, 4d0]), &
              'duplicates not summed')
  call expect(krill_csr_is_symmetric(csr) == 1, 'krill_csr_is_symmetric')

  ! ---- Matrix Market round trip, a generator ---------------------------------------------
  st = krill_mm_write('test_fortran.mtx', csr)
  call expect(st == KRILL_OK, 'krill_mm_write: ' // krill_last_error())
  st = krill_mm_read('test_fortran.mtx  ', csr2)         ! trailing blanks are trimmed
  call expect(st == KRILL_OK, 'krill_mm_read: ' // krill_last_error())
  if (st == KRILL_OK) then
    call c_f_pointer(csr2, c)
    call c_f_pointer(c%val, val, [c%nnz])
    call expect(c%nnz == 10 .and. all(val == [4d0, -1d0, -1d0, 4d0, -1d0, -1d0, 4d0, -1d0, &
                                              -1d0, 4d0]), 'the Matrix Market round trip')
  end if
  call krill_csr_destroy(csr2)
  call expect(.not. c_associated(csr2), 'krill_csr_destroy did not null the handle')
  st = krill_gen('poisson3d:3', csr2)
  call c_f_pointer(csr2, c)
  call expect(st == KRILL_OK .and. c%n_rows == 27, 'krill_gen poisson3d:3: ' // krill_last_error())
  call krill_csr_destroy(csr2)

  ! ---- matrix, wrapped vectors, SpMV ------------------------------------------------------
  st = krill_mat_create(ctx, csr, 'nonesuch', mat)
  msg = krill_last_error()
  call expect(st == KRILL_ERR_ARG .and. index(msg, 'nonesuch') > 0 .and. &
              .not. c_associated(mat), 'unknown format: ' // msg)
  st = krill_mat_create(ctx, csr, ' ', mat)                 ! blank: the default, csr
  call expect(st == KRILL_OK .and. krill_mat_format(mat) == 'csr', 'krill_mat_create blank')
  call krill_csr_destroy(csr)
  call expect(krill_mat_rows(mat) == 4 .and. krill_mat_cols(mat) == 4 .and. &
              krill_mat_nnz(mat) == 10, 'krill_mat_rows / cols / nnz')
  x = [1d0, 2d0, 3d0, 4d0]
  y = -1
  call krill_ctx_alloc_stats_get(ctx, stats0)
  st = krill_vec_wrap(ctx, 4, c_loc(x), vx)
  call expect(st == KRILL_OK, 'krill_vec_wrap: ' // krill_last_error())
  call krill_ctx_alloc_stats_get(ctx, stats1)
  call expect(stats1%allocations == stats0%allocations .and. stats1%bytes == stats0%bytes, &
              'krill_vec_wrap allocated context memory')
  ! a device CSR needs a GPU context: refused on this CPU one, naming the CPU
  st = krill_mat_create_device_csr(ctx, 4_c_int64_t, 4_c_int64_t, 10_c_int64_t, c_loc(x), 4, &
                                   c_loc(x), c_loc(x), mat2)
  msg = krill_last_error()
  call expect(st == KRILL_ERR_UNSUPPORTED .and. .not. c_associated(mat2) .and. &
              index(msg, 'CPU') > 0, 'krill_mat_create_device_csr on a CPU context: ' // msg)
  st = krill_vec_wrap(ctx, 4_c_int64_t, c_loc(y), vy)
  call expect(st == KRILL_OK .and. krill_vec_size(vy) == 4, 'krill_vec_wrap (int64)')
  call expect(c_associated(krill_vec_data(vx), c_loc(x)), 'krill_vec_data is not the array')
  st = krill_mat_spmv(mat, 1d0, vx, 0d0, vy)               ! y = A x, in y itself
  call expect(st == KRILL_OK .and. all(y == [2d0, 4d0, 6d0, 13d0]), 'spmv into wrapped y')
  st = krill_vec_dot(vx, vy, r)
  call expect(st == KRILL_OK .and. r == 2d0 + 8d0 + 18d0 + 52d0, 'krill_vec_dot')
  st = krill_vec_nrm2(vx, r)
  call expect(st == KRILL_OK .and. abs(r - sqrt(30d0)) < 1d-15, 'krill_vec_nrm2')
  st = krill_vec_axpy(-1d0, vx, vy)
  call expect(st == KRILL_OK .and. all(y == [1d0, 2d0, 3d0, 9d0]), 'krill_vec_axpy')
  call krill_vec_destroy(vy)
  call krill_vec_destroy(vx)
  call expect(all(x == [1d0, 2d0, 3d0, 4d0]), 'destroying a wrapped vector changed the array')

  ! ---- solves: a named preconditioner, the monitor's user pointer and stop, zero rhs -----
  st = krill_pc_create(mat, 'nonesuch', pc)
  msg = krill_last_error()
  call expect(st == KRILL_ERR_ARG .and. index(msg, 'nonesuch') > 0, 'unknown pc: ' // msg)
  st = krill_pc_create(mat, 'jacobi', pc)
  call expect(st == KRILL_OK .and. len(krill_pc_describe(pc)) > 0, 'krill_pc_create jacobi')
  call krill_ctx_alloc_stats_get(ctx, stats0)
  st = krill_vec_create(ctx, 4, vx)
  st = krill_vec_create(ctx, 4_c_int64_t, vy)
  call krill_ctx_alloc_stats_get(ctx, stats1)
  call expect(stats1%allocations == stats0%allocations + 2 .and. &
              stats1%bytes == stats0%bytes + 64, 'krill_ctx_alloc_stats_get: two vectors of 4')
  b = [3d0, 2d0, 2d0, 3d0]                                  ! A 1
  st = krill_vec_upload(vy, b)
  opts%solver = KRILL_SOLVER_CG
  opts%rtol = 1d-14
  st = krill_solve(mat, pc, vy, vx, opts, info)
  st = krill_vec_download(vx, x)
  call expect(st == KRILL_OK .and. info%reason > 0 .and. maxval(abs(x - 1)) < 1d-12, &
              'CG + jacobi on the 4 x 4 matrix: ' // krill_reason_string(info%reason))
  ! the same info again: krill_solve frees the first history itself
  monitor_calls = 0
  opts%solver = KRILL_SOLVER_GMRES
  opts%rtol = 1d-300
  opts%monitor = c_funloc(stop_at_2)
  opts%monitor_data = c_loc(monitor_calls)
  st = krill_vec_fill(vx, 0d0)
  st = krill_solve(mat, c_null_ptr, vy, vx, opts, info)
  call expect(st == KRILL_OK .and. info%reason == KRILL_DIVERGED_MAXIT .and. &
              info%iterations == 2 .and. monitor_calls == 2, 'a monitor that stops at 2')
  call expect(size(krill_solve_history(info)) == 3, 'the history of 2 iterations')
  ! new values, same pattern: 2 A x = b gives x = 1/2
  call krill_solve_info_free(info)
  call expect(.not. c_associated(info%history), 'krill_solve_info_free left the history')
  st = krill_mat_update_values(mat, 2 * [4d0, -1d0, -1d0, 4d0, -1d0, -1d0, 4d0, -1d0, &
                                         -1d0, 4d0])
  call expect(st == KRILL_OK, 'krill_mat_update_values: ' // krill_last_error())
  st = krill_pc_update_values(pc)
  opts = krill_solver_opts(solver=KRILL_SOLVER_BICGSTAB, rtol=1d-14)
  st = krill_vec_fill(vx, 0d0)
  st = krill_solve(mat, pc, vy, vx, opts, info)
  st = krill_vec_download(vx, x)
  call expect(st == KRILL_OK .and. maxval(abs(x - 0.5d0)) < 1d-12, 'solve after new values')
  st = krill_vec_fill(vy, 0d0)
  st = krill_solve(mat, pc, vy, vx, opts, info)
  call expect(st == KRILL_OK .and. info%reason == KRILL_CONVERGED_ZERO_RHS, 'b = 0')
  ! a repeated solve takes the kept workspace back; after the release it allocates again
  st = krill_vec_upload(vy, b)
  st = krill_solve(mat, pc, vy, vx, opts, info)
  call krill_ctx_alloc_stats_get(ctx, stats0)
  st = krill_solve(mat, pc, vy, vx, opts, info)
  call krill_ctx_alloc_stats_get(ctx, stats1)
  call expect(stats1%allocations == stats0%allocations, 'a repeated solve allocates nothing')
  call krill_ctx_release_cache(ctx)
  st = krill_solve(mat, pc, vy, vx, opts, info)
  call krill_ctx_alloc_stats_get(ctx, stats0)
  call expect(st == KRILL_OK .and. stats0%allocations > stats1%allocations, &
              'after krill_ctx_release_cache a solve allocates')
  call krill_solve_info_free(info)

  call krill_vec_destroy(vy)
  call krill_vec_destroy(vx)
  call krill_pc_destroy(pc)
  call krill_mat_destroy(mat)
  call krill_ctx_destroy(ctx)
  call krill_ctx_destroy(ctx)                               ! NULL-safe
  call expect(.not. (c_associated(vx) .or. c_associated(pc) .or. c_associated(mat) .or. &
              c_associated(ctx)), 'a destroyed handle is not null')
  deallocate(msg)                       ! the main program's are never freed implicitly
  if (failures > 0) stop 1
  print '(a)', 'test_fortran: all checks passed'
end program test_fortran

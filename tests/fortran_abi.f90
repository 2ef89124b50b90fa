! tests/fortran_abi.f90 - module krill's side of tests/fortran_abi.c: the same lines, from
! the module's parameters and bind(C) types (a field's offset as the distance between c_loc
! of the field and c_loc of the whole, its size by c_sizeof). tests/test_fortran.sh compares
! the two outputs.
program fortran_abi
  use, intrinsic :: iso_c_binding
  use krill
  implicit none
  type(krill_ctx_opts), target :: co
  type(krill_csr), target :: csr
  type(krill_ctx_alloc_stats), target :: stats
  type(krill_solver_opts), target :: so
  type(krill_solve_times), target :: times
  type(krill_solve_info), target :: info
  integer(kind(KRILL_OK)), target :: an_enum

  call value('KRILL_OK', KRILL_OK)
  call value('KRILL_ERR_ARG', KRILL_ERR_ARG)
  call value('KRILL_ERR_ALLOC', KRILL_ERR_ALLOC)
  call value('KRILL_ERR_IO', KRILL_ERR_IO)
  call value('KRILL_ERR_PARSE', KRILL_ERR_PARSE)
  call value('KRILL_ERR_UNSUPPORTED', KRILL_ERR_UNSUPPORTED)
  call value('KRILL_ERR_NUMERIC', KRILL_ERR_NUMERIC)
  call value('KRILL_ERR_NO_DEVICE', KRILL_ERR_NO_DEVICE)
  call value('KRILL_ERR_DEVICE', KRILL_ERR_DEVICE)
  call value('KRILL_ERR_DEVICE_ALLOC', KRILL_ERR_DEVICE_ALLOC)
  call value('KRILL_ERR_INTERNAL', KRILL_ERR_INTERNAL)
  call value('KRILL_DEVICE_AUTO', KRILL_DEVICE_AUTO)
  call value('KRILL_DEVICE_CPU', KRILL_DEVICE_CPU)
  call value('KRILL_DEVICE_CUDA', KRILL_DEVICE_CUDA)
  call value('KRILL_MAX_THREADS', KRILL_MAX_THREADS)
  call value('KRILL_REPRO_OFF', KRILL_REPRO_OFF)
  call value('KRILL_REPRO_OZAKI', KRILL_REPRO_OZAKI)
  call value('KRILL_REPRO_OZAKI_FAST', KRILL_REPRO_OZAKI_FAST)
  call value('KRILL_SOLVER_GMRES', KRILL_SOLVER_GMRES)
  call value('KRILL_SOLVER_CG', KRILL_SOLVER_CG)
  call value('KRILL_SOLVER_FGMRES', KRILL_SOLVER_FGMRES)
  call value('KRILL_SOLVER_BICGSTAB', KRILL_SOLVER_BICGSTAB)
  call value('KRILL_SOLVER_MINRES', KRILL_SOLVER_MINRES)
  call value('KRILL_SOLVER_PIPECG', KRILL_SOLVER_PIPECG)
  call value('KRILL_ORTHO_CGS2', KRILL_ORTHO_CGS2)
  call value('KRILL_ORTHO_MGS', KRILL_ORTHO_MGS)
  call value('KRILL_ORTHO_DCGS2', KRILL_ORTHO_DCGS2)
  call value('KRILL_REASON_NONE', KRILL_REASON_NONE)
  call value('KRILL_CONVERGED_RTOL', KRILL_CONVERGED_RTOL)
  call value('KRILL_CONVERGED_ATOL', KRILL_CONVERGED_ATOL)
  call value('KRILL_CONVERGED_ZERO_RHS', KRILL_CONVERGED_ZERO_RHS)
  call value('KRILL_DIVERGED_MAXIT', KRILL_DIVERGED_MAXIT)
  call value('KRILL_DIVERGED_BREAKDOWN', KRILL_DIVERGED_BREAKDOWN)
  call value('KRILL_DIVERGED_INDEFINITE', KRILL_DIVERGED_INDEFINITE)
  call value('KRILL_DIVERGED_NAN', KRILL_DIVERGED_NAN)
  call size_of('krill_status', c_sizeof(an_enum))
  call size_of('krill_device', c_sizeof(an_enum))
  call size_of('krill_repro_mode', c_sizeof(an_enum))
  call size_of('krill_solver_type', c_sizeof(an_enum))
  call size_of('krill_ortho', c_sizeof(an_enum))
  call size_of('krill_reason', c_sizeof(an_enum))

  call size_of('krill_ctx_opts', c_sizeof(co))
  call field('krill_ctx_opts device', c_loc(co), c_loc(co%device), c_sizeof(co%device))
  call field('krill_ctx_opts threads', c_loc(co), c_loc(co%threads), c_sizeof(co%threads))
  call field('krill_ctx_opts device_id', c_loc(co), c_loc(co%device_id), c_sizeof(co%device_id))
  call field('krill_ctx_opts comm', c_loc(co), c_loc(co%comm), c_sizeof(co%comm))
  co = krill_ctx_opts()
  print '(a, 4(1x, i0))', 'init krill_ctx_opts', co%device, co%threads, co%device_id, &
    merge(1, 0, c_associated(co%comm))
  call size_of('krill_ctx_alloc_stats', c_sizeof(stats))
  call field('krill_ctx_alloc_stats allocations', c_loc(stats), c_loc(stats%allocations), &
             c_sizeof(stats%allocations))
  call field('krill_ctx_alloc_stats bytes', c_loc(stats), c_loc(stats%bytes), &
             c_sizeof(stats%bytes))
  call size_of('krill_csr', c_sizeof(csr))
  call field('krill_csr n_rows', c_loc(csr), c_loc(csr%n_rows), c_sizeof(csr%n_rows))
  call field('krill_csr n_cols', c_loc(csr), c_loc(csr%n_cols), c_sizeof(csr%n_cols))
  call field('krill_csr nnz', c_loc(csr), c_loc(csr%nnz), c_sizeof(csr%nnz))
  call field('krill_csr row_ptr', c_loc(csr), c_loc(csr%row_ptr), c_sizeof(csr%row_ptr))
  call field('krill_csr col', c_loc(csr), c_loc(csr%col), c_sizeof(csr%col))
  call field('krill_csr val', c_loc(csr), c_loc(csr%val), c_sizeof(csr%val))
  call size_of('krill_solver_opts', c_sizeof(so))
  call field('krill_solver_opts solver', c_loc(so), c_loc(so%solver), c_sizeof(so%solver))
  call field('krill_solver_opts rtol', c_loc(so), c_loc(so%rtol), c_sizeof(so%rtol))
  call field('krill_solver_opts atol', c_loc(so), c_loc(so%atol), c_sizeof(so%atol))
  call field('krill_solver_opts maxit', c_loc(so), c_loc(so%maxit), c_sizeof(so%maxit))
  call field('krill_solver_opts restart', c_loc(so), c_loc(so%restart), c_sizeof(so%restart))
  call field('krill_solver_opts ortho', c_loc(so), c_loc(so%ortho), c_sizeof(so%ortho))
  call field('krill_solver_opts sstep', c_loc(so), c_loc(so%sstep), c_sizeof(so%sstep))
  call field('krill_solver_opts monitor', c_loc(so), c_loc(so%monitor), c_sizeof(so%monitor))
  call field('krill_solver_opts monitor_data', c_loc(so), &
    c_loc(so%monitor_data), c_sizeof(so%monitor_data))
  call size_of('krill_solve_times', c_sizeof(times))
  call field('krill_solve_times setup', c_loc(times), c_loc(times%setup), c_sizeof(times%setup))
  call field('krill_solve_times spmv', c_loc(times), c_loc(times%spmv), c_sizeof(times%spmv))
  call field('krill_solve_times precond', c_loc(times), &
    c_loc(times%precond), c_sizeof(times%precond))
  call field('krill_solve_times ortho', c_loc(times), c_loc(times%ortho), c_sizeof(times%ortho))
  call field('krill_solve_times other', c_loc(times), c_loc(times%other), c_sizeof(times%other))
  call field('krill_solve_times total', c_loc(times), c_loc(times%total), c_sizeof(times%total))
  call field('krill_solve_times comm', c_loc(times), c_loc(times%comm), c_sizeof(times%comm))
  call field('krill_solve_times halo', c_loc(times), c_loc(times%halo), c_sizeof(times%halo))
  call field('krill_solve_times halo_hidden', c_loc(times), c_loc(times%halo_hidden), &
    c_sizeof(times%halo_hidden))
  call size_of('krill_solve_info', c_sizeof(info))
  call field('krill_solve_info reason', c_loc(info), c_loc(info%reason), c_sizeof(info%reason))
  call field('krill_solve_info iterations', c_loc(info), &
    c_loc(info%iterations), c_sizeof(info%iterations))
  call field('krill_solve_info relres', c_loc(info), c_loc(info%relres), c_sizeof(info%relres))
  call field('krill_solve_info resnorm', c_loc(info), c_loc(info%resnorm), c_sizeof(info%resnorm))
  call field('krill_solve_info bnorm', c_loc(info), c_loc(info%bnorm), c_sizeof(info%bnorm))
  call field('krill_solve_info history', c_loc(info), c_loc(info%history), c_sizeof(info%history))
  call field('krill_solve_info history_len', c_loc(info), &
    c_loc(info%history_len), c_sizeof(info%history_len))
  call field('krill_solve_info times', c_loc(info), c_loc(info%times), c_sizeof(info%times))

contains

  subroutine value(name, v)
    character(len=*), intent(in) :: name
    integer(c_int), intent(in) :: v
    print '(a, 1x, i0)', name, v
  end subroutine value

  subroutine size_of(name, bytes)
    character(len=*), intent(in) :: name
    integer(c_size_t), intent(in) :: bytes
    print '(a, 1x, a, 1x, i0)', 'sizeof', name, bytes
  end subroutine size_of

  subroutine field(name, whole, part, bytes)
    character(len=*), intent(in) :: name
    type(c_ptr), intent(in) :: whole, part
    integer(c_size_t), intent(in) :: bytes
    print '(a, 1x, a, 1x, a, 1x, i0, 1x, a, 1x, i0)', 'field', name, 'offset', &
      transfer(part, 0_c_intptr_t) - transfer(whole, 0_c_intptr_t), 'size', bytes
  end subroutine field

end program fortran_abi

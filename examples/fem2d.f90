! examples/fem2d.f90 - a finite-element solve from Fortran through module krill
! (fortran/krill.f90, installed as include/krill/krill.f90; doc/fortran.md).
!
! -laplace(u) = f on the unit square, u = g on its boundary, linear (P1) triangles on an
! NC x NC grid of squares, each cut into two triangles: (NC - 1)^2 = 361 unknowns. The
! exact solution u = 1 + x^2 + 2 y^2 (f = -6) is reproduced at the nodes by this mesh (its
! stiffness matrix is the 5-point stencil, whose truncation error is zero for a quadratic,
! and the load f h^2 is exact for a constant f), so the nodal error measures the solve.
!
! The element matrices are appended as coordinate entries with 1-based indices, duplicates
! and all, and krill_csr_from_coo sums them. Boundary nodes are eliminated (their known
! values move to the right-hand side), so A is symmetric positive definite. Solved with
! CG + Jacobi and with GMRES(30) + ILU(0); each solve's residual is checked here, in
! Fortran, against the assembled entries, and its error against the exact solution.
! Prints one line a solve; exits nonzero when a call fails or a check does not hold.
!
! Build against an installed krill (the test tests/test_fortran.sh does this):
!   gfortran -c $PREFIX/include/krill/krill.f90
!   gfortran examples/fem2d.f90 krill.o -L$PREFIX/lib -lkrill -Wl,-rpath,$PREFIX/lib
module fem2d_monitor
  use, intrinsic :: iso_c_binding
  implicit none
  integer :: calls = 0          ! how many times the solver called count_iterations
contains
  ! A krill_monitor_fn: counts the iterations, never stops the solve
  function count_iterations(iteration, residual_norm, user) bind(C) result(stop_solve)
    integer(c_int), value :: iteration
    real(c_double), value :: residual_norm
    type(c_ptr), value :: user
    integer(c_int) :: stop_solve
    if (iteration > 0 .and. residual_norm >= 0 .and. .not. c_associated(user)) &
      calls = calls + 1
    stop_solve = 0
  end function count_iterations
end module fem2d_monitor

program fem2d
  use, intrinsic :: iso_c_binding
  use krill
  use fem2d_monitor
  implicit none
  integer, parameter :: NC = 20                 ! squares per side
  integer, parameter :: N = (NC - 1)**2         ! unknowns: the interior points
  real(c_double), parameter :: H = 1.0_c_double / NC, F = -6.0_c_double
  ! the two triangles of square (i, j), as corner offsets (di, dj) in counterclockwise order
  integer, parameter :: TRI(2, 3, 2) = reshape([0, 0, 1, 0, 1, 1, &
                                                0, 0, 1, 1, 0, 1], [2, 3, 2])
  integer(c_int32_t), allocatable :: rows(:), cols(:)
  real(c_double), allocatable :: vals(:)
  real(c_double) :: b(N), x(N), exact(N)
  integer :: unknown(0:NC, 0:NC)                ! grid point -> unknown, 0 on the boundary
  integer :: i, j, t, a, c, nnz, failures
  integer :: gi(3), gj(3), dof(3)
  real(c_double) :: px(3), py(3), ke(3, 3), area, gx(3), gy(3)
  type(c_ptr) :: ctx = c_null_ptr, csr = c_null_ptr, mat = c_null_ptr

  ! ---- numbering: interior points only --------------------------------------------------
  unknown = 0
  do j = 1, NC - 1
    do i = 1, NC - 1
      unknown(i, j) = i + (j - 1) * (NC - 1)
      exact(unknown(i, j)) = u_exact(i * H, j * H)
    end do
  end do

  ! ---- assembly: every element's 3 x 3 matrix, boundary columns into b ------------------
  allocate(rows(9 * 2 * NC * NC), cols(9 * 2 * NC * NC), vals(9 * 2 * NC * NC))
  nnz = 0
  b = 0
  do j = 0, NC - 1
    do i = 0, NC - 1
      do t = 1, 2
        gi = i + TRI(1, :, t)
        gj = j + TRI(2, :, t)
        px = gi * H
        py = gj * H
        do a = 1, 3
          dof(a) = unknown(gi(a), gj(a))
        end do
        ! P1 gradients: grad(phi_a) = (y_b - y_c, x_c - x_b) / (2 area), (a, b, c) cyclic
        area = 0.5_c_double * ((px(2) - px(1)) * (py(3) - py(1)) - &
                               (px(3) - px(1)) * (py(2) - py(1)))
        do a = 1, 3
          gx(a) = (py(1 + mod(a, 3)) - py(1 + mod(a + 1, 3))) / (2 * area)
          gy(a) = (px(1 + mod(a + 1, 3)) - px(1 + mod(a, 3))) / (2 * area)
        end do
        do a = 1, 3
          do c = 1, 3
            ke(a, c) = area * (gx(a) * gx(c) + gy(a) * gy(c))
          end do
        end do
        do a = 1, 3
          if (dof(a) == 0) cycle                  ! a boundary row: no equation
          b(dof(a)) = b(dof(a)) + F * area / 3    ! load of a constant f, exact
          do c = 1, 3
            if (dof(c) == 0) then                 ! known boundary value: to the right side
              b(dof(a)) = b(dof(a)) - ke(a, c) * u_exact(px(c), py(c))
            else
              nnz = nnz + 1
              rows(nnz) = dof(a)
              cols(nnz) = dof(c)
              vals(nnz) = ke(a, c)
            end if
          end do
        end do
      end do
    end do
  end do

  ! ---- krill: the context, the matrix (1-based entries, duplicates summed) ---------------
  call check(krill_ctx_create(krill_ctx_opts(), ctx), 'krill_ctx_create')
  call check(krill_csr_from_coo(N, N, rows(1:nnz), cols(1:nnz), vals(1:nnz), csr), &
             'krill_csr_from_coo')
  if (krill_csr_is_symmetric(csr) /= 1) call fail('the assembled matrix is not symmetric')
  call check(krill_mat_create(ctx, csr, 'csr', mat), 'krill_mat_create')
  call krill_csr_destroy(csr)                     ! the matrix has its own copy
  print '(a, i0, a, i0, a, a)', 'fem2d: P1 Poisson, ', N, ' unknowns, ', &
    krill_mat_nnz(mat), ' entries, on ', krill_ctx_describe(ctx)

  failures = 0
  call solve('cg', 'jacobi', KRILL_SOLVER_CG)
  call solve('gmres', 'ilu0', KRILL_SOLVER_GMRES)

  call krill_mat_destroy(mat)
  call krill_ctx_destroy(ctx)
  if (c_associated(mat) .or. c_associated(ctx)) call fail('a destroyed handle is not null')
  deallocate(rows, cols, vals)          ! the main program's are never freed implicitly
  if (failures > 0) stop 1

contains

  function u_exact(xx, yy) result(u)
    real(c_double), intent(in) :: xx, yy
    real(c_double) :: u
    u = 1 + xx**2 + 2 * yy**2
  end function u_exact

  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a, a)', 'fem2d: FAIL: ', what
    stop 1
  end subroutine fail

  subroutine check(status, what)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= KRILL_OK) call fail(what // ': ' // krill_status_string(status) // ': ' // &
                                      krill_last_error())
  end subroutine check

  ! Solve A x = b from x = 0 with one solver and preconditioner; check and print the result
  subroutine solve(solver_name, pc_name, solver)
    character(len=*), intent(in) :: solver_name, pc_name
    integer(c_int), intent(in) :: solver
    type(c_ptr) :: pc, vb, vx
    type(krill_solver_opts) :: opts
    type(krill_solve_info) :: info
    real(c_double) :: r(N), relres, err
    integer :: k

    pc = c_null_ptr
    vb = c_null_ptr
    vx = c_null_ptr
    call krill_solver_opts_default(opts)
    opts%solver = solver
    opts%rtol = 1.0e-12_c_double
    opts%monitor = c_funloc(count_iterations)
    calls = 0
    call check(krill_pc_create(mat, pc_name, pc), 'krill_pc_create ' // pc_name)
    call check(krill_vec_create(ctx, N, vb), 'krill_vec_create')
    call check(krill_vec_create(ctx, N, vx), 'krill_vec_create')   ! zeroed: x0 = 0
    call check(krill_vec_upload(vb, b), 'krill_vec_upload')
    call check(krill_solve(mat, pc, vb, vx, opts, info), 'krill_solve ' // solver_name)
    call check(krill_vec_download(vx, x), 'krill_vec_download')

    ! r = b - A x from the assembled entries: a check that does not go through krill
    r = b
    do k = 1, nnz
      r(rows(k)) = r(rows(k)) - vals(k) * x(cols(k))
    end do
    relres = sqrt(sum(r**2)) / sqrt(sum(b**2))
    err = maxval(abs(x - exact))
    print '(a, " + ", a, ": ", a, ", ", i0, " iterations, relative residual ", es8.2, &
          &" (krill ", es8.2, "), max error ", es8.2)', solver_name, pc_name, &
          krill_reason_string(info%reason), info%iterations, relres, info%relres, err
    if (info%reason <= 0) call note('did not converge')
    if (relres > 1.0e-10_c_double) call note('residual above 1e-10')
    if (abs(relres - info%relres) > 1.0e-12_c_double) call note('krill''s relres differs')
    if (err > 1.0e-9_c_double) call note('error above 1e-9')
    if (size(krill_solve_history(info)) /= info%iterations + 1) &
      call note('the residual history does not have iterations + 1 entries')
    if (calls /= info%iterations) call note('the monitor was not called once an iteration')

    call krill_solve_info_free(info)
    call krill_vec_destroy(vx)
    call krill_vec_destroy(vb)
    call krill_pc_destroy(pc)
  end subroutine solve

  subroutine note(what)
    character(len=*), intent(in) :: what
    print '(a, a)', 'fem2d: FAIL: ', what
    failures = failures + 1
  end subroutine note

end program fem2d

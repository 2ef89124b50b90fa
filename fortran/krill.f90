! krill.f90 - the Fortran 2003 interface to krill: module krill, bind(C) interfaces
! (iso_c_binding) over the C API of krill.h, and thin Fortran wrappers where C wants a
! NUL-terminated string, returns one, or where 1-based indices are natural (doc/fortran.md).
!
! Installed as include/krill/krill.f90 next to the C headers; no .mod file is installed
! (its format depends on the compiler and its version): compile the module with your own
! compiler and link libkrill, e.g.
!   gfortran -c $PREFIX/include/krill/krill.f90
!   gfortran my_fem.f90 krill.o -L$PREFIX/lib -lkrill -Wl,-rpath,$PREFIX/lib
!
! Conventions (those of the C API unless said otherwise):
! - Handles (context, host CSR, matrix, preconditioner, vector) are type(c_ptr); c_null_ptr
!   means none. krill_*_destroy frees one and sets it back to c_null_ptr (NULL-safe).
! - A function that can fail returns an integer(c_int) status, KRILL_OK (0) on success;
!   krill_last_error() then says what was wrong.
! - Indices: krill_csr_from_coo and krill_csr_from_arrays take 1-based indices, as Fortran
!   numbers things, and convert them; krill_csr_from_triplets and the arrays behind a
!   type(krill_csr) are 0-based, exactly as in C.
! - The enums are integer(c_int) parameters with the C enumerators' names and values;
!   tests/test_fortran.sh checks them, and the layout of every bind(C) type, against the C
!   headers.
module krill
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! ---- krill_status (krill/status.h) ---------------------------------------------------
  integer(c_int), parameter, public :: KRILL_OK = 0
  integer(c_int), parameter, public :: KRILL_ERR_ARG = 1            ! invalid argument
  integer(c_int), parameter, public :: KRILL_ERR_ALLOC = 2          ! host memory
  integer(c_int), parameter, public :: KRILL_ERR_IO = 3             ! file not opened/read/written
  integer(c_int), parameter, public :: KRILL_ERR_PARSE = 4          ! malformed file
  integer(c_int), parameter, public :: KRILL_ERR_UNSUPPORTED = 5    ! valid, not handled
  integer(c_int), parameter, public :: KRILL_ERR_NUMERIC = 6        ! NaN/Inf, zero pivot
  integer(c_int), parameter, public :: KRILL_ERR_NO_DEVICE = 7      ! no usable GPU
  integer(c_int), parameter, public :: KRILL_ERR_DEVICE = 8         ! a CUDA call failed
  integer(c_int), parameter, public :: KRILL_ERR_DEVICE_ALLOC = 9   ! GPU out of memory
  integer(c_int), parameter, public :: KRILL_ERR_INTERNAL = 10      ! a bug in krill

  ! ---- krill_device, krill_repro_mode (krill/ctx.h) ------------------------------------
  integer(c_int), parameter, public :: KRILL_DEVICE_AUTO = 0        ! the GPU if any, else CPU
  integer(c_int), parameter, public :: KRILL_DEVICE_CPU = 1
  integer(c_int), parameter, public :: KRILL_DEVICE_CUDA = 2
  integer(c_int), parameter, public :: KRILL_MAX_THREADS = 4096
  integer(c_int), parameter, public :: KRILL_REPRO_OFF = 0
  integer(c_int), parameter, public :: KRILL_REPRO_OZAKI = 1
  integer(c_int), parameter, public :: KRILL_REPRO_OZAKI_FAST = 2

  ! ---- krill_solver_type, krill_ortho, krill_reason (krill/solver.h) --------------------
  integer(c_int), parameter, public :: KRILL_SOLVER_GMRES = 0
  integer(c_int), parameter, public :: KRILL_SOLVER_CG = 1
  integer(c_int), parameter, public :: KRILL_SOLVER_FGMRES = 2
  integer(c_int), parameter, public :: KRILL_SOLVER_BICGSTAB = 3
  integer(c_int), parameter, public :: KRILL_SOLVER_MINRES = 4
  integer(c_int), parameter, public :: KRILL_SOLVER_PIPECG = 5
  integer(c_int), parameter, public :: KRILL_ORTHO_CGS2 = 0
  integer(c_int), parameter, public :: KRILL_ORTHO_MGS = 1
  integer(c_int), parameter, public :: KRILL_ORTHO_DCGS2 = 2
  integer(c_int), parameter, public :: KRILL_REASON_NONE = 0
  integer(c_int), parameter, public :: KRILL_CONVERGED_RTOL = 1
  integer(c_int), parameter, public :: KRILL_CONVERGED_ATOL = 2
  integer(c_int), parameter, public :: KRILL_CONVERGED_ZERO_RHS = 3
  integer(c_int), parameter, public :: KRILL_DIVERGED_MAXIT = -1
  integer(c_int), parameter, public :: KRILL_DIVERGED_BREAKDOWN = -2
  integer(c_int), parameter, public :: KRILL_DIVERGED_INDEFINITE = -3
  integer(c_int), parameter, public :: KRILL_DIVERGED_NAN = -4

  ! ---- the C structs, field for field ----------------------------------------------------
  ! krill_ctx_opts; the default initialization is KRILL_CTX_OPTS_INIT, so krill_ctx_opts()
  ! is the C API's defaults and krill_ctx_opts(device=KRILL_DEVICE_CPU, threads=4) the usual
  ! change. comm stays c_null_ptr here: the module has no binding of krill/mpi.h.
  type, bind(C), public :: krill_ctx_opts
    integer(c_int) :: device = KRILL_DEVICE_AUTO
    integer(c_int) :: threads = 0          ! 0 = OpenMP's default
    integer(c_int) :: device_id = 0        ! CUDA device ordinal
    type(c_ptr) :: comm = c_null_ptr       ! const krill_comm *
  end type krill_ctx_opts

  ! krill_ctx_alloc_stats_get: krill's allocations in the context's memory since its creation
  type, bind(C), public :: krill_ctx_alloc_stats
    integer(c_int64_t) :: allocations = 0
    integer(c_int64_t) :: bytes = 0
  end type krill_ctx_alloc_stats

  ! krill_csr: a host CSR, 0-based (row_ptr: n_rows + 1 int64, col: nnz int32, val: nnz
  ! double). To read or fill one krill made: call c_f_pointer(handle, csr), then
  ! c_f_pointer(csr%val, val, [csr%nnz]) and so on.
  type, bind(C), public :: krill_csr
    integer(c_int32_t) :: n_rows = 0
    integer(c_int32_t) :: n_cols = 0
    integer(c_int64_t) :: nnz = 0
    type(c_ptr) :: row_ptr = c_null_ptr
    type(c_ptr) :: col = c_null_ptr
    type(c_ptr) :: val = c_null_ptr
  end type krill_csr

  ! krill_solver_opts; the default initialization is krill_solver_opts_default's (GMRES(30),
  ! rtol 1e-8, maxit 10000): krill_solver_opts(solver=KRILL_SOLVER_CG, rtol=1d-10) works.
  ! monitor: c_funloc of a function with krill_monitor_fn's interface, or c_null_funptr.
  type, bind(C), public :: krill_solver_opts
    integer(c_int) :: solver = KRILL_SOLVER_GMRES
    real(c_double) :: rtol = 1.0e-8_c_double   ! relative to ||b||
    real(c_double) :: atol = 0.0_c_double      ! absolute
    integer(c_int) :: maxit = 10000
    integer(c_int) :: restart = 30             ! GMRES / FGMRES
    integer(c_int) :: ortho = KRILL_ORTHO_DCGS2 ! GMRES / FGMRES
    integer(c_int) :: sstep = 0                ! GMRES: s-step block size (0 or 1: GMRES)
    type(c_funptr) :: monitor = c_null_funptr
    type(c_ptr) :: monitor_data = c_null_ptr   ! passed to monitor as `user`
  end type krill_solver_opts

  ! krill_solve_times: seconds spent in each phase of a solve
  type, bind(C), public :: krill_solve_times
    real(c_double) :: setup = 0, spmv = 0, precond = 0, ortho = 0, other = 0, total = 0
    real(c_double) :: comm = 0                  ! of the above, inside MPI
    real(c_double) :: halo = 0, halo_hidden = 0 ! halo exchanges in flight, of them hidden
  end type krill_solve_times

  ! krill_solve_info: filled by krill_solve. history points to history_len doubles that
  ! krill allocated (krill_solve_history copies them into a Fortran array); krill_solve frees
  ! the previous ones before it fills info again, krill_solve_info_free frees the last.
  type, bind(C), public :: krill_solve_info
    integer(c_int) :: reason = KRILL_REASON_NONE
    integer(c_int) :: iterations = 0
    real(c_double) :: relres = 0               ! true ||b - A x|| / ||b||
    real(c_double) :: resnorm = 0              ! true ||b - A x||
    real(c_double) :: bnorm = 0
    type(c_ptr) :: history = c_null_ptr        ! double *
    integer(c_int) :: history_len = 0
    type(krill_solve_times) :: times
  end type krill_solve_info

  ! The monitor's interface (krill_monitor_fn): called after every iteration with the
  ! estimated residual norm; return nonzero to stop the solve.
  abstract interface
    function krill_monitor_fn(iteration, residual_norm, user) bind(C) result(stop_solve)
      import :: c_int, c_double, c_ptr
      integer(c_int), value :: iteration
      real(c_double), value :: residual_norm
      type(c_ptr), value :: user
      integer(c_int) :: stop_solve
    end function krill_monitor_fn
  end interface
  public :: krill_monitor_fn

  ! ---- bind(C) interfaces used as they are (public, the C names) ----------------------
  public :: krill_ctx_create, krill_ctx_destroy, krill_ctx_device, krill_ctx_threads, &
            krill_ctx_sync, krill_ctx_set_repro, krill_cuda_device_count, krill_have_cuda, &
            krill_ctx_alloc_stats_get, krill_ctx_release_cache
  public :: krill_csr_create, krill_csr_destroy, krill_csr_from_triplets, &
            krill_csr_is_symmetric
  public :: krill_vec_create, krill_vec_wrap, krill_vec_destroy, krill_vec_size, &
            krill_vec_data, krill_vec_upload, krill_vec_download, krill_vec_fill, &
            krill_vec_copy, krill_vec_axpy, krill_vec_dot, krill_vec_nrm2
  public :: krill_mat_destroy, krill_mat_spmv, krill_mat_update_values, krill_mat_to_csr, &
            krill_mat_rows, krill_mat_cols, krill_mat_nnz, krill_mat_create_device_csr
  public :: krill_pc_destroy, krill_pc_apply, krill_pc_update_values
  public :: krill_solver_opts_default, krill_solve_info_free
  ! ---- Fortran wrappers (module procedures) ----------------------------------------------
  public :: krill_last_error, krill_clear_error, krill_status_string, krill_reason_string, &
            krill_solver_name, krill_version, krill_ctx_describe
  public :: krill_csr_from_coo, krill_csr_from_arrays, krill_mm_read, krill_mm_write, &
            krill_gen
  public :: krill_mat_create, krill_mat_format, krill_pc_create, krill_pc_describe
  public :: krill_solve, krill_solve_history

  interface
    ! -- context (krill/ctx.h) --
    ! opts: krill_ctx_opts() for the defaults (the C API's opts == NULL)
    function krill_ctx_create(opts, ctx) bind(C, name='krill_ctx_create') result(st)
      import :: c_int, c_ptr, krill_ctx_opts
      type(krill_ctx_opts), intent(in) :: opts
      type(c_ptr), intent(out) :: ctx
      integer(c_int) :: st
    end function krill_ctx_create
    subroutine krill_ctx_destroy(ctx) bind(C, name='krill_ctx_destroy')
      import :: c_ptr
      type(c_ptr), intent(inout) :: ctx
    end subroutine krill_ctx_destroy
    function krill_ctx_device(ctx) bind(C, name='krill_ctx_device') result(device)
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int) :: device                  ! KRILL_DEVICE_CPU or KRILL_DEVICE_CUDA
    end function krill_ctx_device
    function krill_ctx_threads(ctx) bind(C, name='krill_ctx_threads') result(threads)
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int) :: threads
    end function krill_ctx_threads
    function krill_ctx_sync(ctx) bind(C, name='krill_ctx_sync') result(st)
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int) :: st
    end function krill_ctx_sync
    function krill_ctx_set_repro(ctx, mode, slices) bind(C, name='krill_ctx_set_repro') &
        result(st)
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), value :: mode, slices     ! KRILL_REPRO_*; slices 0 = exact
      integer(c_int) :: st
    end function krill_ctx_set_repro
    subroutine krill_ctx_alloc_stats_get(ctx, stats) bind(C, name='krill_ctx_alloc_stats_get')
      import :: c_ptr, krill_ctx_alloc_stats
      type(c_ptr), value :: ctx
      type(krill_ctx_alloc_stats), intent(out) :: stats
    end subroutine krill_ctx_alloc_stats_get
    ! frees the solver workspace krill_solve keeps on the context for the next solve
    subroutine krill_ctx_release_cache(ctx) bind(C, name='krill_ctx_release_cache')
      import :: c_ptr
      type(c_ptr), value :: ctx
    end subroutine krill_ctx_release_cache
    function krill_cuda_device_count() bind(C, name='krill_cuda_device_count') result(n)
      import :: c_int
      integer(c_int) :: n
    end function krill_cuda_device_count
    function krill_have_cuda() bind(C, name='krill_have_cuda') result(yes)
      import :: c_int
      integer(c_int) :: yes
    end function krill_have_cuda

    ! -- host CSR (krill/csr.h), 0-based --
    ! Allocate a CSR with room for nnz entries (row_ptr zeroed, col/val uninitialized)
    function krill_csr_create(n_rows, n_cols, nnz, csr) bind(C, name='krill_csr_create') &
        result(st)
      import :: c_int, c_int32_t, c_int64_t, c_ptr
      integer(c_int32_t), value :: n_rows, n_cols
      integer(c_int64_t), value :: nnz
      type(c_ptr), intent(out) :: csr
      integer(c_int) :: st
    end function krill_csr_create
    subroutine krill_csr_destroy(csr) bind(C, name='krill_csr_destroy')
      import :: c_ptr
      type(c_ptr), intent(inout) :: csr
    end subroutine krill_csr_destroy
    ! nnz triplets with 0-BASED rows and cols (krill_csr_from_coo takes 1-based ones):
    ! rows sorted, duplicates summed
    function krill_csr_from_triplets(n_rows, n_cols, nnz, rows, cols, vals, csr) &
        bind(C, name='krill_csr_from_triplets') result(st)
      import :: c_int, c_int32_t, c_int64_t, c_double, c_ptr
      integer(c_int32_t), value :: n_rows, n_cols
      integer(c_int64_t), value :: nnz
      integer(c_int32_t), intent(in) :: rows(*), cols(*)
      real(c_double), intent(in) :: vals(*)
      type(c_ptr), intent(out) :: csr
      integer(c_int) :: st
    end function krill_csr_from_triplets
    function krill_csr_is_symmetric(csr) bind(C, name='krill_csr_is_symmetric') result(yes)
      import :: c_int, c_ptr
      type(c_ptr), value :: csr
      integer(c_int) :: yes                     ! 1 if exactly symmetric, else 0
    end function krill_csr_is_symmetric

    ! -- vectors (krill/vec.h); krill_vec_create and krill_vec_wrap are generic below --
    subroutine krill_vec_destroy(v) bind(C, name='krill_vec_destroy')
      import :: c_ptr
      type(c_ptr), intent(inout) :: v
    end subroutine krill_vec_destroy
    function krill_vec_size(v) bind(C, name='krill_vec_size') result(n)
      import :: c_int64_t, c_ptr
      type(c_ptr), value :: v
      integer(c_int64_t) :: n
    end function krill_vec_size
    ! the vector's storage, in the context's memory space (device memory on CUDA)
    function krill_vec_data(v) bind(C, name='krill_vec_data') result(data)
      import :: c_ptr
      type(c_ptr), value :: v
      type(c_ptr) :: data
    end function krill_vec_data
    ! host(1:krill_vec_size(v)) -> v; not checked: host must be that long
    function krill_vec_upload(v, host) bind(C, name='krill_vec_upload') result(st)
      import :: c_int, c_double, c_ptr
      type(c_ptr), value :: v
      real(c_double), intent(in) :: host(*)
      integer(c_int) :: st
    end function krill_vec_upload
    ! v -> host(1:krill_vec_size(v))
    function krill_vec_download(v, host) bind(C, name='krill_vec_download') result(st)
      import :: c_int, c_double, c_ptr
      type(c_ptr), value :: v
      real(c_double), intent(inout) :: host(*)
      integer(c_int) :: st
    end function krill_vec_download
    function krill_vec_fill(v, value) bind(C, name='krill_vec_fill') result(st)
      import :: c_int, c_double, c_ptr
      type(c_ptr), value :: v
      real(c_double), value :: value
      integer(c_int) :: st
    end function krill_vec_fill
    function krill_vec_copy(x, y) bind(C, name='krill_vec_copy') result(st)   ! y = x
      import :: c_int, c_ptr
      type(c_ptr), value :: x, y
      integer(c_int) :: st
    end function krill_vec_copy
    function krill_vec_axpy(alpha, x, y) bind(C, name='krill_vec_axpy') result(st) ! y += a x
      import :: c_int, c_double, c_ptr
      real(c_double), value :: alpha
      type(c_ptr), value :: x, y
      integer(c_int) :: st
    end function krill_vec_axpy
    function krill_vec_dot(x, y, result) bind(C, name='krill_vec_dot') result(st)
      import :: c_int, c_double, c_ptr
      type(c_ptr), value :: x, y
      real(c_double), intent(out) :: result
      integer(c_int) :: st
    end function krill_vec_dot
    function krill_vec_nrm2(x, result) bind(C, name='krill_vec_nrm2') result(st)
      import :: c_int, c_double, c_ptr
      type(c_ptr), value :: x
      real(c_double), intent(out) :: result
      integer(c_int) :: st
    end function krill_vec_nrm2

    ! -- matrices (krill/mat.h); krill_mat_create is a wrapper below --
    ! A CSR already in a GPU context's device memory, not copied (doc/device-memory.md):
    ! row_ptr (0-based offsets, index_bytes 4 or 8 each), col (0-based int32), val: device
    ! addresses (CUDA Fortran: c_devloc); the caller keeps them alive until krill_mat_destroy
    function krill_mat_create_device_csr(ctx, n_rows, n_cols, nnz, row_ptr, index_bytes, col, &
        val, mat) bind(C, name='krill_mat_create_device_csr') result(st)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int64_t), value :: n_rows, n_cols, nnz
      type(c_ptr), value :: row_ptr
      integer(c_int), value :: index_bytes
      type(c_ptr), value :: col, val
      type(c_ptr), intent(out) :: mat
      integer(c_int) :: st
    end function krill_mat_create_device_csr
    subroutine krill_mat_destroy(mat) bind(C, name='krill_mat_destroy')
      import :: c_ptr
      type(c_ptr), intent(inout) :: mat
    end subroutine krill_mat_destroy
    ! y = alpha A x + beta y (beta = 0 ignores y's old contents)
    function krill_mat_spmv(mat, alpha, x, beta, y) bind(C, name='krill_mat_spmv') result(st)
      import :: c_int, c_double, c_ptr
      type(c_ptr), value :: mat
      real(c_double), value :: alpha
      type(c_ptr), value :: x
      real(c_double), value :: beta
      type(c_ptr), value :: y
      integer(c_int) :: st
    end function krill_mat_spmv
    ! nnz new values in the order of the CSR the matrix was made from (same pattern)
    function krill_mat_update_values(mat, values) bind(C, name='krill_mat_update_values') &
        result(st)
      import :: c_int, c_double, c_ptr
      type(c_ptr), value :: mat
      real(c_double), intent(in) :: values(*)
      integer(c_int) :: st
    end function krill_mat_update_values
    ! the matrix as a new host CSR (free with krill_csr_destroy)
    function krill_mat_to_csr(mat, csr) bind(C, name='krill_mat_to_csr') result(st)
      import :: c_int, c_ptr
      type(c_ptr), value :: mat
      type(c_ptr), intent(out) :: csr
      integer(c_int) :: st
    end function krill_mat_to_csr
    function krill_mat_rows(mat) bind(C, name='krill_mat_rows') result(n)
      import :: c_int64_t, c_ptr
      type(c_ptr), value :: mat
      integer(c_int64_t) :: n
    end function krill_mat_rows
    function krill_mat_cols(mat) bind(C, name='krill_mat_cols') result(n)
      import :: c_int64_t, c_ptr
      type(c_ptr), value :: mat
      integer(c_int64_t) :: n
    end function krill_mat_cols
    function krill_mat_nnz(mat) bind(C, name='krill_mat_nnz') result(n)
      import :: c_int64_t, c_ptr
      type(c_ptr), value :: mat
      integer(c_int64_t) :: n
    end function krill_mat_nnz

    ! -- preconditioners (krill/precond.h); krill_pc_create is a wrapper below --
    subroutine krill_pc_destroy(pc) bind(C, name='krill_pc_destroy')
      import :: c_ptr
      type(c_ptr), intent(inout) :: pc
    end subroutine krill_pc_destroy
    function krill_pc_apply(pc, r, z) bind(C, name='krill_pc_apply') result(st) ! z = M^-1 r
      import :: c_int, c_ptr
      type(c_ptr), value :: pc, r, z
      integer(c_int) :: st
    end function krill_pc_apply
    function krill_pc_update_values(pc) bind(C, name='krill_pc_update_values') result(st)
      import :: c_int, c_ptr
      type(c_ptr), value :: pc
      integer(c_int) :: st
    end function krill_pc_update_values

    ! -- solvers (krill/solver.h); krill_solve is a wrapper below --
    subroutine krill_solver_opts_default(opts) bind(C, name='krill_solver_opts_default')
      import :: krill_solver_opts
      type(krill_solver_opts), intent(out) :: opts
    end subroutine krill_solver_opts_default
    subroutine krill_solve_info_free(info) bind(C, name='krill_solve_info_free')
      import :: krill_solve_info
      type(krill_solve_info), intent(inout) :: info
    end subroutine krill_solve_info_free
  end interface

  ! krill_vec_create(ctx, n, v): a zeroed vector of n entries; n of kind c_int32_t (the
  ! default integer) or c_int64_t.
  interface krill_vec_create
    function krill_vec_create_i8(ctx, n, v) bind(C, name='krill_vec_create') result(st)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int64_t), value :: n
      type(c_ptr), intent(out) :: v
      integer(c_int) :: st
    end function krill_vec_create_i8
    module procedure krill_vec_create_i4
  end interface krill_vec_create

  ! krill_vec_wrap(ctx, n, data, v): a vector over n doubles the caller owns, already in the
  ! context's memory space (c_loc of a contiguous target array on the CPU; a device pointer
  ! on CUDA). They are not copied and not freed, and must outlive the vector.
  interface krill_vec_wrap
    function krill_vec_wrap_i8(ctx, n, data, v) bind(C, name='krill_vec_wrap') result(st)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int64_t), value :: n
      type(c_ptr), value :: data
      type(c_ptr), intent(out) :: v
      integer(c_int) :: st
    end function krill_vec_wrap_i8
    module procedure krill_vec_wrap_i4
  end interface krill_vec_wrap

  ! ---- the C functions the wrappers call (private) --------------------------------------
  interface
    function c_strlen(s) bind(C, name='strlen') result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function c_strlen
    function c_krill_last_error() bind(C, name='krill_last_error') result(s)
      import :: c_ptr
      type(c_ptr) :: s
    end function c_krill_last_error
    subroutine c_krill_clear_error() bind(C, name='krill_clear_error')
    end subroutine c_krill_clear_error
    function c_krill_status_string(status) bind(C, name='krill_status_string') result(s)
      import :: c_int, c_ptr
      integer(c_int), value :: status
      type(c_ptr) :: s
    end function c_krill_status_string
    function c_krill_reason_string(reason) bind(C, name='krill_reason_string') result(s)
      import :: c_int, c_ptr
      integer(c_int), value :: reason
      type(c_ptr) :: s
    end function c_krill_reason_string
    function c_krill_solver_name(solver) bind(C, name='krill_solver_name') result(s)
      import :: c_int, c_ptr
      integer(c_int), value :: solver
      type(c_ptr) :: s
    end function c_krill_solver_name
    function c_krill_version() bind(C, name='krill_version') result(s)
      import :: c_ptr
      type(c_ptr) :: s
    end function c_krill_version
    function c_krill_ctx_describe(ctx) bind(C, name='krill_ctx_describe') result(s)
      import :: c_ptr
      type(c_ptr), value :: ctx
      type(c_ptr) :: s
    end function c_krill_ctx_describe
    function c_krill_mm_read(path, csr, info) bind(C, name='krill_mm_read') result(st)
      import :: c_int, c_char, c_ptr
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), intent(out) :: csr
      type(c_ptr), value :: info
      integer(c_int) :: st
    end function c_krill_mm_read
    function c_krill_mm_write(path, csr) bind(C, name='krill_mm_write') result(st)
      import :: c_int, c_char, c_ptr
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), value :: csr
      integer(c_int) :: st
    end function c_krill_mm_write
    function c_krill_gen(spec, csr) bind(C, name='krill_gen') result(st)
      import :: c_int, c_char, c_ptr
      character(kind=c_char), intent(in) :: spec(*)
      type(c_ptr), intent(out) :: csr
      integer(c_int) :: st
    end function c_krill_gen
    function c_krill_mat_create(ctx, csr, format, mat) bind(C, name='krill_mat_create') &
        result(st)
      import :: c_int, c_char, c_ptr
      type(c_ptr), value :: ctx, csr
      character(kind=c_char), intent(in) :: format(*)
      type(c_ptr), intent(out) :: mat
      integer(c_int) :: st
    end function c_krill_mat_create
    function c_krill_mat_format(mat) bind(C, name='krill_mat_format') result(s)
      import :: c_ptr
      type(c_ptr), value :: mat
      type(c_ptr) :: s
    end function c_krill_mat_format
    function c_krill_pc_create(mat, name, pc) bind(C, name='krill_pc_create') result(st)
      import :: c_int, c_char, c_ptr
      type(c_ptr), value :: mat
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), intent(out) :: pc
      integer(c_int) :: st
    end function c_krill_pc_create
    function c_krill_pc_describe(pc) bind(C, name='krill_pc_describe') result(s)
      import :: c_ptr
      type(c_ptr), value :: pc
      type(c_ptr) :: s
    end function c_krill_pc_describe
    function c_krill_solve(a, pc, b, x, opts, info) bind(C, name='krill_solve') result(st)
      import :: c_int, c_ptr, krill_solver_opts, krill_solve_info
      type(c_ptr), value :: a, pc, b, x
      type(krill_solver_opts), intent(in) :: opts
      type(krill_solve_info), intent(inout) :: info
      integer(c_int) :: st
    end function c_krill_solve
  end interface

  ! The message of the last argument error found by this module's own checks (sizes and
  ! 1-based indices of krill_csr_from_coo / _from_arrays), which the C library cannot know
  ! about. Shared by all threads: those wrappers are for one thread at a time.
  character(len=:), allocatable, save :: fortran_message

contains

  ! ---- strings --------------------------------------------------------------------------

  ! A C string (NUL-terminated; NULL gives '') as a Fortran string of its length
  function c_to_fortran(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: n, i
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function c_to_fortran

  ! A Fortran string, trailing blanks trimmed, as a NUL-terminated C string
  function fortran_to_c(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char) :: c(len_trim(s) + 1)
    integer :: i
    do i = 1, len_trim(s)
      c(i) = s(i:i)
    end do
    c(len_trim(s) + 1) = c_null_char
  end function fortran_to_c

  ! Fail with a message of this module's: krill_last_error returns it until the next
  ! failure of a C function (which is why the C message is cleared here) or krill_clear_error
  function fortran_error(status, message) result(st)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: message
    integer(c_int) :: st
    call c_krill_clear_error()
    fortran_message = message
    st = status
  end function fortran_error

  function itoa(i) result(s)
    integer(c_int64_t), intent(in) :: i
    character(len=:), allocatable :: s
    character(len=24) :: buf
    write(buf, '(i0)') i
    s = trim(buf)
  end function itoa

  ! The message of the last failure on this thread ('' if none)
  function krill_last_error() result(s)
    character(len=:), allocatable :: s
    s = c_to_fortran(c_krill_last_error())
    if (len(s) == 0 .and. allocated(fortran_message)) s = fortran_message
  end function krill_last_error

  subroutine krill_clear_error()
    call c_krill_clear_error()
    if (allocated(fortran_message)) deallocate(fortran_message)
  end subroutine krill_clear_error

  ! Short fixed name of a status, e.g. 'parse error'
  function krill_status_string(status) result(s)
    integer(c_int), intent(in) :: status
    character(len=:), allocatable :: s
    s = c_to_fortran(c_krill_status_string(status))
  end function krill_status_string

  ! e.g. 'converged (rtol)'
  function krill_reason_string(reason) result(s)
    integer(c_int), intent(in) :: reason
    character(len=:), allocatable :: s
    s = c_to_fortran(c_krill_reason_string(reason))
  end function krill_reason_string

  ! e.g. 'pipecg' for KRILL_SOLVER_PIPECG
  function krill_solver_name(solver) result(s)
    integer(c_int), intent(in) :: solver
    character(len=:), allocatable :: s
    s = c_to_fortran(c_krill_solver_name(solver))
  end function krill_solver_name

  function krill_version() result(s)
    character(len=:), allocatable :: s
    s = c_to_fortran(c_krill_version())
  end function krill_version

  ! One line naming the device, e.g. 'cpu: 16 OpenMP threads'
  function krill_ctx_describe(ctx) result(s)
    type(c_ptr), intent(in) :: ctx
    character(len=:), allocatable :: s
    s = c_to_fortran(c_krill_ctx_describe(ctx))
  end function krill_ctx_describe

  ! ---- host CSR ---------------------------------------------------------------------------

  ! A new host CSR from coordinate entries with 1-BASED indices: entry k is
  ! A(rows(k), cols(k)) = vals(k). Entries may come in any order; duplicates are summed, so
  ! a finite-element code can append every element matrix's entries as they come. rows,
  ! cols and vals must have the same length.
  function krill_csr_from_coo(n_rows, n_cols, rows, cols, vals, csr) result(st)
    integer(c_int32_t), intent(in) :: n_rows, n_cols
    integer(c_int32_t), intent(in) :: rows(:), cols(:)
    real(c_double), intent(in) :: vals(:)
    type(c_ptr), intent(out) :: csr
    integer(c_int) :: st
    integer(c_int32_t), allocatable :: rows0(:), cols0(:)
    integer(c_int64_t) :: k, nnz
    csr = c_null_ptr
    nnz = size(vals, kind=c_int64_t)
    if (size(rows, kind=c_int64_t) /= nnz .or. size(cols, kind=c_int64_t) /= nnz) then
      st = fortran_error(KRILL_ERR_ARG, 'krill_csr_from_coo: rows, cols and vals differ ' // &
        'in length (' // itoa(size(rows, kind=c_int64_t)) // ', ' // &
        itoa(size(cols, kind=c_int64_t)) // ', ' // itoa(nnz) // ')')
      return
    end if
    if (n_rows < 0 .or. n_cols < 0) then
      st = fortran_error(KRILL_ERR_ARG, 'krill_csr_from_coo: negative size (' // &
        itoa(int(n_rows, c_int64_t)) // ' x ' // itoa(int(n_cols, c_int64_t)) // ')')
      return
    end if
    do k = 1, nnz
      if (rows(k) < 1 .or. rows(k) > n_rows .or. cols(k) < 1 .or. cols(k) > n_cols) then
        st = fortran_error(KRILL_ERR_ARG, 'krill_csr_from_coo: entry ' // itoa(k) // &
          ' is (' // itoa(int(rows(k), c_int64_t)) // ', ' // &
          itoa(int(cols(k), c_int64_t)) // '), outside the 1-based ' // &
          itoa(int(n_rows, c_int64_t)) // ' x ' // itoa(int(n_cols, c_int64_t)) // ' matrix')
        return
      end if
    end do
    allocate(rows0(nnz), cols0(nnz))
    rows0 = rows - 1
    cols0 = cols - 1
    st = krill_csr_from_triplets(n_rows, n_cols, nnz, rows0, cols0, vals, csr)
  end function krill_csr_from_coo

  ! A new host CSR from a 1-BASED CSR as Fortran codes keep it: row i's entries are
  ! col(k), val(k) for k = row_ptr(i), ..., row_ptr(i + 1) - 1, row_ptr(1) = 1. The
  ! columns of a row may come in any order; duplicates are summed. krill keeps a 0-based
  ! copy: the arrays are not referenced after the call.
  function krill_csr_from_arrays(n_rows, n_cols, row_ptr, col, val, csr) result(st)
    integer(c_int32_t), intent(in) :: n_rows, n_cols
    integer(c_int32_t), intent(in) :: row_ptr(:), col(:)
    real(c_double), intent(in) :: val(:)
    type(c_ptr), intent(out) :: csr
    integer(c_int) :: st
    integer(c_int32_t), allocatable :: rows(:)
    integer(c_int32_t) :: i
    integer :: nnz
    csr = c_null_ptr
    if (n_rows < 0 .or. size(row_ptr) /= n_rows + 1) then
      st = fortran_error(KRILL_ERR_ARG, 'krill_csr_from_arrays: row_ptr has ' // &
        itoa(size(row_ptr, kind=c_int64_t)) // ' entries for ' // &
        itoa(int(n_rows, c_int64_t)) // ' rows (n_rows + 1 needed)')
      return
    end if
    if (row_ptr(1) /= 1) then
      st = fortran_error(KRILL_ERR_ARG, 'krill_csr_from_arrays: row_ptr(1) = ' // &
        itoa(int(row_ptr(1), c_int64_t)) // ', must be 1 (1-based)')
      return
    end if
    do i = 1, n_rows
      if (row_ptr(i + 1) < row_ptr(i)) then
        st = fortran_error(KRILL_ERR_ARG, 'krill_csr_from_arrays: row_ptr decreases at row ' &
          // itoa(int(i, c_int64_t)))
        return
      end if
    end do
    nnz = row_ptr(n_rows + 1) - 1
    if (size(col) < nnz .or. size(val) < nnz) then
      st = fortran_error(KRILL_ERR_ARG, 'krill_csr_from_arrays: row_ptr(n_rows + 1) - 1 = ' &
        // itoa(int(nnz, c_int64_t)) // ' entries but col has ' // &
        itoa(size(col, kind=c_int64_t)) // ' and val ' // itoa(size(val, kind=c_int64_t)))
      return
    end if
    allocate(rows(nnz))
    do i = 1, n_rows
      rows(row_ptr(i):row_ptr(i + 1) - 1) = i
    end do
    st = krill_csr_from_coo(n_rows, n_cols, rows, col(1:nnz), val(1:nnz), csr)
  end function krill_csr_from_arrays

  ! Read a Matrix Market file into a new host CSR
  function krill_mm_read(path, csr) result(st)
    character(len=*), intent(in) :: path
    type(c_ptr), intent(out) :: csr
    integer(c_int) :: st
    st = c_krill_mm_read(fortran_to_c(path), csr, c_null_ptr)
  end function krill_mm_read

  ! Write a host CSR as Matrix Market (coordinate real general, %.17g)
  function krill_mm_write(path, csr) result(st)
    character(len=*), intent(in) :: path
    type(c_ptr), intent(in) :: csr
    integer(c_int) :: st
    st = c_krill_mm_write(fortran_to_c(path), csr)
  end function krill_mm_write

  ! A generated matrix as a new host CSR, e.g. 'poisson2d:100' (`krill gen --help` lists them)
  function krill_gen(spec, csr) result(st)
    character(len=*), intent(in) :: spec
    type(c_ptr), intent(out) :: csr
    integer(c_int) :: st
    st = c_krill_gen(fortran_to_c(spec), csr)
  end function krill_gen

  ! ---- vectors ----------------------------------------------------------------------------

  function krill_vec_create_i4(ctx, n, v) result(st)
    type(c_ptr), intent(in) :: ctx
    integer(c_int32_t), intent(in) :: n
    type(c_ptr), intent(out) :: v
    integer(c_int) :: st
    st = krill_vec_create_i8(ctx, int(n, c_int64_t), v)
  end function krill_vec_create_i4

  function krill_vec_wrap_i4(ctx, n, data, v) result(st)
    type(c_ptr), intent(in) :: ctx
    integer(c_int32_t), intent(in) :: n
    type(c_ptr), intent(in) :: data
    type(c_ptr), intent(out) :: v
    integer(c_int) :: st
    st = krill_vec_wrap_i8(ctx, int(n, c_int64_t), data, v)
  end function krill_vec_wrap_i4

  ! ---- matrices, preconditioners, solves --------------------------------------------------

  ! A matrix on ctx from a host CSR (copied: the CSR may be destroyed afterwards) in a
  ! storage format: 'csr' (also for a blank name), 'auto' to let krill choose, ...
  function krill_mat_create(ctx, csr, format, mat) result(st)
    type(c_ptr), intent(in) :: ctx, csr
    character(len=*), intent(in) :: format
    type(c_ptr), intent(out) :: mat
    integer(c_int) :: st
    st = c_krill_mat_create(ctx, csr, fortran_to_c(format), mat)
  end function krill_mat_create

  ! The matrix's storage format, e.g. 'csr'
  function krill_mat_format(mat) result(s)
    type(c_ptr), intent(in) :: mat
    character(len=:), allocatable :: s
    s = c_to_fortran(c_krill_mat_format(mat))
  end function krill_mat_format

  ! A preconditioner of the matrix by name: 'none', 'jacobi', 'bjacobi', 'ilu0', 'ic0', ...
  ! (krill/precond.h). It keeps a reference to mat: destroy it before the matrix.
  function krill_pc_create(mat, name, pc) result(st)
    type(c_ptr), intent(in) :: mat
    character(len=*), intent(in) :: name
    type(c_ptr), intent(out) :: pc
    integer(c_int) :: st
    st = c_krill_pc_create(mat, fortran_to_c(name), pc)
  end function krill_pc_create

  ! One line saying what was built, e.g. 'jacobi: ...'
  function krill_pc_describe(pc) result(s)
    type(c_ptr), intent(in) :: pc
    character(len=:), allocatable :: s
    s = c_to_fortran(c_krill_pc_describe(pc))
  end function krill_pc_describe

  ! Solve A x = b: x holds the initial guess on entry and the solution on return; pc is a
  ! preconditioner of a or c_null_ptr for none. The status says whether the call worked,
  ! info%reason whether the method converged (> 0) or not (< 0). The history info held
  ! from an earlier solve is freed first: call krill_solve_info_free(info) after the last.
  function krill_solve(a, pc, b, x, opts, info) result(st)
    type(c_ptr), intent(in) :: a, pc, b, x
    type(krill_solver_opts), intent(in) :: opts
    type(krill_solve_info), intent(inout) :: info
    integer(c_int) :: st
    call krill_solve_info_free(info)
    st = c_krill_solve(a, pc, b, x, opts, info)
  end function krill_solve

  ! The residual history of a solve (estimated norms, (1) the initial one) as a Fortran array
  function krill_solve_history(info) result(history)
    type(krill_solve_info), intent(in) :: info
    real(c_double), allocatable :: history(:)
    real(c_double), pointer :: p(:)
    if (.not. c_associated(info%history) .or. info%history_len <= 0) then
      allocate(history(0))
      return
    end if
    call c_f_pointer(info%history, p, [info%history_len])
    allocate(history(info%history_len))
    history = p
  end function krill_solve_history

end module krill

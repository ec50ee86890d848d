! SPDX-License-Identifier: Apache-2.0
! fastgemm for Fortran: the C ABI of fastgemm.h as a module, through iso_c_binding.
!
! Every fg_ function of the header has an interface here, bound to its C name, with the header's
! argument types: sizes, leading dimensions and strides are integer(c_int64_t), enumerations
! integer(c_int), handles, streams and device pointers type(c_ptr), alpha and beta real(c_float). The
! enumerators carry the header's values. The functions that return a C string in the header return a
! Fortran string here; their C interfaces stay available with a _c suffix.
!
! Fortran arrays are column-major: an array of fastgemm's row-major data has its dimensions reversed
! (a row-major L x L matrix is a Fortran array w(L, L) with w(j, i) holding the matrix's (i, j)).
!
! Compile this file with the program that uses it (a .mod file is specific to its compiler):
!   gfortran $(pkg-config --variable=includedir fastgemm)/fastgemm/fastgemm.f90 app.f90 -o app \
!            $(pkg-config --libs fastgemm) -Wl,-rpath,$(pkg-config --variable=libdir fastgemm)
module fastgemm
  use, intrinsic :: iso_c_binding
  implicit none

  private :: string_from_c

  ! The header's FG_VERSION is FG_VERSION_MAJOR * 10000 + FG_VERSION_MINOR * 100 + FG_VERSION_PATCH; it
  ! has no parameter here because Fortran names ignore case and it would be the function fg_version.
  integer(c_int), parameter :: FG_VERSION_MAJOR = 0
  integer(c_int), parameter :: FG_VERSION_MINOR = 1
  integer(c_int), parameter :: FG_VERSION_PATCH = 0

  ! fg_status_t
  enum, bind(c)
    enumerator :: FG_STATUS_SUCCESS = 0
    enumerator :: FG_STATUS_INVALID_VALUE = 1
    enumerator :: FG_STATUS_INVALID_HANDLE = 2
    enumerator :: FG_STATUS_NOT_SUPPORTED = 3
    enumerator :: FG_STATUS_NO_DEVICE = 4
    enumerator :: FG_STATUS_ALLOC_FAILED = 5
    enumerator :: FG_STATUS_CUDA_ERROR = 6
    enumerator :: FG_STATUS_CUBLAS_ERROR = 7
    enumerator :: FG_STATUS_INTERNAL_ERROR = 8
  end enum

  ! fg_layout_t and fg_op_t: the CBLAS values
  enum, bind(c)
    enumerator :: FG_ROW_MAJOR = 101
    enumerator :: FG_COL_MAJOR = 102
  end enum
  enum, bind(c)
    enumerator :: FG_OP_N = 111
    enumerator :: FG_OP_T = 112
    enumerator :: FG_OP_C = 113
  end enum

  ! fg_sgemm_algo_t
  enum, bind(c)
    enumerator :: FG_SGEMM_AUTO = 0
    enumerator :: FG_SGEMM_NAIVE = 1
    enumerator :: FG_SGEMM_SMEM = 2
    enumerator :: FG_SGEMM_SMEM_VEC4 = 3
    enumerator :: FG_SGEMM_BANK_FREE = 4
    enumerator :: FG_SGEMM_DOUBLE_BUFFER = 5
    enumerator :: FG_SGEMM_PIPELINED = 6
    enumerator :: FG_SGEMM_SMALL_TILE = 7
    enumerator :: FG_SGEMM_SPLIT_K = 8
    enumerator :: FG_SGEMM_OZAKI_INT8 = 9
    enumerator :: FG_SGEMM_CUBLAS = 100
  end enum

  ! fg_math_mode_t
  enum, bind(c)
    enumerator :: FG_MATH_FP32 = 0
    enumerator :: FG_MATH_FP32_EMULATED = 1
  end enum

  ! fg_reproducibility_t
  enum, bind(c)
    enumerator :: FG_REPRODUCIBLE_RUN = 0
    enumerator :: FG_REPRODUCIBLE_SHAPE = 1
  end enum

  ! fg_dtype_t
  enum, bind(c)
    enumerator :: FG_F32 = 0
    enumerator :: FG_F64 = 1
  end enum

  ! fg_rowmean_algo_t
  enum, bind(c)
    enumerator :: FG_ROWMEAN_AUTO = 0
    enumerator :: FG_ROWMEAN_SINGLE_BLOCK = 1
    enumerator :: FG_ROWMEAN_BLOCK_PER_BATCH = 2
    enumerator :: FG_ROWMEAN_COALESCED = 3
    enumerator :: FG_ROWMEAN_TWO_PASS = 4
    enumerator :: FG_ROWMEAN_FUSED = 5
    enumerator :: FG_ROWMEAN_STAGED = 6
    enumerator :: FG_ROWMEAN_RELAY = 7
    enumerator :: FG_ROWMEAN_PIPELINED = 7  ! deprecated: the former name of FG_ROWMEAN_RELAY
    enumerator :: FG_ROWMEAN_CUBLAS = 100
  end enum

  interface
    function fg_version() bind(C, name="fg_version") result(version)
      import :: c_int
      integer(c_int) :: version
    end function fg_version

    function fg_status_name_c(status) bind(C, name="fg_status_name") result(name)
      import :: c_int, c_ptr
      type(c_ptr) :: name
      integer(c_int), value :: status
    end function fg_status_name_c

    function fg_status_string_c(status) bind(C, name="fg_status_string") result(sentence)
      import :: c_int, c_ptr
      type(c_ptr) :: sentence
      integer(c_int), value :: status
    end function fg_status_string_c

    function fg_last_error_message_c() bind(C, name="fg_last_error_message") result(message)
      import :: c_ptr
      type(c_ptr) :: message
    end function fg_last_error_message_c

    function fg_last_cuda_error() bind(C, name="fg_last_cuda_error") result(error)
      import :: c_int
      integer(c_int) :: error
    end function fg_last_cuda_error

    ! handle is set to the new handle, or to c_null_ptr on failure.
    function fg_create(handle) bind(C, name="fg_create") result(status)
      import :: c_int, c_ptr
      integer(c_int) :: status
      type(c_ptr), intent(out) :: handle
    end function fg_create

    function fg_destroy(handle) bind(C, name="fg_destroy") result(status)
      import :: c_int, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
    end function fg_destroy

    ! stream is a cudaStream_t; c_null_ptr is the legacy default stream.
    function fg_set_stream(handle, stream) bind(C, name="fg_set_stream") result(status)
      import :: c_int, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      type(c_ptr), value :: stream
    end function fg_set_stream

    ! workspace is caller-owned device memory aligned to 256 bytes; c_null_ptr, 0 returns to the handle's own.
    function fg_set_workspace(handle, workspace, bytes) bind(C, name="fg_set_workspace") result(status)
      import :: c_int, c_ptr, c_size_t
      integer(c_int) :: status
      type(c_ptr), value :: handle
      type(c_ptr), value :: workspace
      integer(c_size_t), value :: bytes
    end function fg_set_workspace

    function fg_sgemm_workspace_size(handle, layout, transa, transb, m, n, k, batch_count, bytes) &
        bind(C, name="fg_sgemm_workspace_size") result(status)
      import :: c_int, c_int64_t, c_ptr, c_size_t
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), value :: layout, transa, transb
      integer(c_int64_t), value :: m, n, k, batch_count
      integer(c_size_t), intent(out) :: bytes
    end function fg_sgemm_workspace_size

    function fg_rowmean_workspace_size(handle, dtype, l, m, n, bytes) bind(C, name="fg_rowmean_workspace_size") &
        result(status)
      import :: c_int, c_int64_t, c_ptr, c_size_t
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), value :: dtype
      integer(c_int64_t), value :: l, m, n
      integer(c_size_t), intent(out) :: bytes
    end function fg_rowmean_workspace_size

    function fg_get_stream(handle, stream) bind(C, name="fg_get_stream") result(status)
      import :: c_int, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      type(c_ptr), intent(out) :: stream
    end function fg_get_stream

    ! a, b and c are device pointers (c_loc of a device array, or from cudaMalloc).
    function fg_sgemm(handle, layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) &
        bind(C, name="fg_sgemm") result(status)
      import :: c_int, c_int64_t, c_float, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), value :: layout, transa, transb
      integer(c_int64_t), value :: m, n, k
      real(c_float), value :: alpha
      type(c_ptr), value :: a
      integer(c_int64_t), value :: lda
      type(c_ptr), value :: b
      integer(c_int64_t), value :: ldb
      real(c_float), value :: beta
      type(c_ptr), value :: c
      integer(c_int64_t), value :: ldc
    end function fg_sgemm

    function fg_sgemm_strided_batched(handle, layout, transa, transb, m, n, k, alpha, a, lda, stride_a, &
                                      b, ldb, stride_b, beta, c, ldc, stride_c, batch_count) &
        bind(C, name="fg_sgemm_strided_batched") result(status)
      import :: c_int, c_int64_t, c_float, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), value :: layout, transa, transb
      integer(c_int64_t), value :: m, n, k
      real(c_float), value :: alpha
      type(c_ptr), value :: a
      integer(c_int64_t), value :: lda, stride_a
      type(c_ptr), value :: b
      integer(c_int64_t), value :: ldb, stride_b
      real(c_float), value :: beta
      type(c_ptr), value :: c
      integer(c_int64_t), value :: ldc, stride_c, batch_count
    end function fg_sgemm_strided_batched

    ! a, b and c may be host arrays (c_loc of an ordinary Fortran array), pinned, managed or device memory.
    function fg_sgemm_host(handle, layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) &
        bind(C, name="fg_sgemm_host") result(status)
      import :: c_int, c_int64_t, c_float, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), value :: layout, transa, transb
      integer(c_int64_t), value :: m, n, k
      real(c_float), value :: alpha
      type(c_ptr), value :: a
      integer(c_int64_t), value :: lda
      type(c_ptr), value :: b
      integer(c_int64_t), value :: ldb
      real(c_float), value :: beta
      type(c_ptr), value :: c
      integer(c_int64_t), value :: ldc
    end function fg_sgemm_host

    ! devices: count ordinals; count 0 (any array, one of size 0 too) returns to the handle's own device.
    function fg_set_devices(handle, devices, count) bind(C, name="fg_set_devices") result(status)
      import :: c_int, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), dimension(*), intent(in) :: devices
      integer(c_int), value :: count
    end function fg_set_devices

    function fg_get_devices(handle, devices, capacity, count) bind(C, name="fg_get_devices") result(status)
      import :: c_int, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), dimension(*), intent(out) :: devices
      integer(c_int), value :: capacity
      integer(c_int), intent(out) :: count
    end function fg_get_devices

    function fg_set_sgemm_algo(handle, algo) bind(C, name="fg_set_sgemm_algo") result(status)
      import :: c_int, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), value :: algo
    end function fg_set_sgemm_algo

    function fg_get_sgemm_algo(handle, algo) bind(C, name="fg_get_sgemm_algo") result(status)
      import :: c_int, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), intent(out) :: algo
    end function fg_get_sgemm_algo

    function fg_get_last_sgemm_algo(handle, algo) bind(C, name="fg_get_last_sgemm_algo") result(status)
      import :: c_int, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), intent(out) :: algo
    end function fg_get_last_sgemm_algo

    function fg_get_last_sgemm_emulation(handle, moduli, fp32_elements) &
        bind(C, name="fg_get_last_sgemm_emulation") result(status)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), intent(out) :: moduli
      integer(c_int64_t), intent(out) :: fp32_elements
    end function fg_get_last_sgemm_emulation

    function fg_sgemm_algo_name_c(algo) bind(C, name="fg_sgemm_algo_name") result(name)
      import :: c_int, c_ptr
      type(c_ptr) :: name
      integer(c_int), value :: algo
    end function fg_sgemm_algo_name_c

    ! mode is FG_MATH_FP32 or FG_MATH_FP32_EMULATED: the math of later fg_sgemm* calls.
    function fg_set_math_mode(handle, mode) bind(C, name="fg_set_math_mode") result(status)
      import :: c_int, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), value :: mode
    end function fg_set_math_mode

    function fg_get_math_mode(handle, mode) bind(C, name="fg_get_math_mode") result(status)
      import :: c_int, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), intent(out) :: mode
    end function fg_get_math_mode

    function fg_math_mode_name_c(mode) bind(C, name="fg_math_mode_name") result(name)
      import :: c_int, c_ptr
      type(c_ptr) :: name
      integer(c_int), value :: mode
    end function fg_math_mode_name_c

    ! level is FG_REPRODUCIBLE_RUN or FG_REPRODUCIBLE_SHAPE (elements of C independent of the product's shape).
    function fg_set_reproducibility(handle, level) bind(C, name="fg_set_reproducibility") result(status)
      import :: c_int, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), value :: level
    end function fg_set_reproducibility

    function fg_get_reproducibility(handle, level) bind(C, name="fg_get_reproducibility") result(status)
      import :: c_int, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), intent(out) :: level
    end function fg_get_reproducibility

    function fg_reproducibility_name_c(level) bind(C, name="fg_reproducibility_name") result(name)
      import :: c_int, c_ptr
      type(c_ptr) :: name
      integer(c_int), value :: level
    end function fg_reproducibility_name_c

    ! input, matrix and output are device pointers to dtype elements.
    function fg_rowmean_matvec(handle, dtype, input, matrix, output, l, m, n) &
        bind(C, name="fg_rowmean_matvec") result(status)
      import :: c_int, c_int64_t, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), value :: dtype
      type(c_ptr), value :: input, matrix, output
      integer(c_int64_t), value :: l, m, n
    end function fg_rowmean_matvec

    function fg_set_rowmean_algo(handle, algo) bind(C, name="fg_set_rowmean_algo") result(status)
      import :: c_int, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), value :: algo
    end function fg_set_rowmean_algo

    function fg_get_rowmean_algo(handle, algo) bind(C, name="fg_get_rowmean_algo") result(status)
      import :: c_int, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), intent(out) :: algo
    end function fg_get_rowmean_algo

    function fg_get_last_rowmean_algo(handle, algo) bind(C, name="fg_get_last_rowmean_algo") result(status)
      import :: c_int, c_ptr
      integer(c_int) :: status
      type(c_ptr), value :: handle
      integer(c_int), intent(out) :: algo
    end function fg_get_last_rowmean_algo

    function fg_rowmean_algo_name_c(algo) bind(C, name="fg_rowmean_algo_name") result(name)
      import :: c_int, c_ptr
      type(c_ptr) :: name
      integer(c_int), value :: algo
    end function fg_rowmean_algo_name_c
  end interface

contains

  ! "FG_STATUS_INVALID_VALUE"; "FG_STATUS_UNKNOWN" for any other value.
  function fg_status_name(status) result(name)
    integer(c_int), intent(in) :: status
    character(len=:), allocatable :: name
    name = string_from_c(fg_status_name_c(status))
  end function fg_status_name

  ! One sentence describing the status.
  function fg_status_string(status) result(sentence)
    integer(c_int), intent(in) :: status
    character(len=:), allocatable :: sentence
    sentence = string_from_c(fg_status_string_c(status))
  end function fg_status_string

  ! This thread's last failure message; "" if no call of this thread has failed.
  function fg_last_error_message() result(message)
    character(len=:), allocatable :: message
    message = string_from_c(fg_last_error_message_c())
  end function fg_last_error_message

  ! "double_buffer"; "unknown" for any other value.
  function fg_sgemm_algo_name(algo) result(name)
    integer(c_int), intent(in) :: algo
    character(len=:), allocatable :: name
    name = string_from_c(fg_sgemm_algo_name_c(algo))
  end function fg_sgemm_algo_name

  ! "fp32" or "fp32_emulated"; "unknown" for any other value.
  function fg_math_mode_name(mode) result(name)
    integer(c_int), intent(in) :: mode
    character(len=:), allocatable :: name
    name = string_from_c(fg_math_mode_name_c(mode))
  end function fg_math_mode_name

  ! "run" or "shape"; "unknown" for any other value.
  function fg_reproducibility_name(level) result(name)
    integer(c_int), intent(in) :: level
    character(len=:), allocatable :: name
    name = string_from_c(fg_reproducibility_name_c(level))
  end function fg_reproducibility_name

  ! "coalesced"; "unknown" for any other value.
  function fg_rowmean_algo_name(algo) result(name)
    integer(c_int), intent(in) :: algo
    character(len=:), allocatable :: name
    name = string_from_c(fg_rowmean_algo_name_c(algo))
  end function fg_rowmean_algo_name

  ! A copy of a NUL-terminated C string: the last error message's storage is reused by this thread's next
  ! failing call, the copy keeps its text.
  function string_from_c(pointer) result(string)
    type(c_ptr), intent(in) :: pointer
    character(len=:), allocatable :: string
    character(kind=c_char), pointer :: chars(:)
    integer :: length, i
    interface
      function c_strlen(string) bind(C, name="strlen") result(length)
        import :: c_size_t, c_ptr
        type(c_ptr), value :: string
        integer(c_size_t) :: length
      end function c_strlen
    end interface
    if (.not. c_associated(pointer)) then
      string = ''
      return
    end if
    length = int(c_strlen(pointer))
    call c_f_pointer(pointer, chars, [length])
    allocate (character(len=length) :: string)
    do i = 1, length
      string(i:i) = chars(i)
    end do
  end function string_from_c

end module fastgemm

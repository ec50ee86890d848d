! SPDX-License-Identifier: Apache-2.0
! The Fortran module's math mode: its enumerators, the three functions bound to the library, and, with a GPU,
! a handle's mode and a product computed in each mode, checked against Fortran's matmul in double precision,
! and fg_set_devices with an empty list (an array of size 0, whose address is not NULL).
! Without a GPU the device-free checks run and the program says the rest was left out. Exit status 0 when
! every check held.
module cuda_calls
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int), parameter :: host_to_device = 1, device_to_host = 2

  interface
    function cudaMalloc(pointer, bytes) bind(C, name="cudaMalloc") result(error)
      import :: c_int, c_ptr, c_size_t
      integer(c_int) :: error
      type(c_ptr), intent(out) :: pointer
      integer(c_size_t), value :: bytes
    end function cudaMalloc

    function cudaMemcpy(destination, source, bytes, kind) bind(C, name="cudaMemcpy") result(error)
      import :: c_int, c_ptr, c_size_t
      integer(c_int) :: error
      type(c_ptr), value :: destination, source
      integer(c_size_t), value :: bytes
      integer(c_int), value :: kind
    end function cudaMemcpy

    function cudaFree(pointer) bind(C, name="cudaFree") result(error)
      import :: c_int, c_ptr
      integer(c_int) :: error
      type(c_ptr), value :: pointer
    end function cudaFree
  end interface
end module cuda_calls

program test_fastgemm
  use, intrinsic :: iso_c_binding
  use cuda_calls
  use fastgemm
  implicit none
  type(c_ptr) :: handle
  integer(c_int) :: status, mode
  integer :: failures = 0

  call expect(FG_MATH_FP32 == 0 .and. FG_MATH_FP32_EMULATED == 1 .and. FG_SGEMM_OZAKI_INT8 == 9, &
              'the enumerators carry the header''s values')
  call expect(FG_ROWMEAN_RELAY == 7 .and. FG_ROWMEAN_PIPELINED == FG_ROWMEAN_RELAY, &
              'the relay''s value, under its former name too')
  call expect(fg_rowmean_algo_name(FG_ROWMEAN_PIPELINED) == 'relay', 'fg_rowmean_algo_name(FG_ROWMEAN_PIPELINED)')
  call expect(fg_math_mode_name(FG_MATH_FP32) == 'fp32', 'fg_math_mode_name(FG_MATH_FP32)')
  call expect(fg_math_mode_name(FG_MATH_FP32_EMULATED) == 'fp32_emulated', 'fg_math_mode_name(FG_MATH_FP32_EMULATED)')
  call expect(fg_math_mode_name(7_c_int) == 'unknown', 'fg_math_mode_name of no mode')
  call expect(fg_set_math_mode(c_null_ptr, FG_MATH_FP32_EMULATED) == FG_STATUS_INVALID_HANDLE, &
              'fg_set_math_mode with a NULL handle')
  call expect(fg_last_error_message() == 'fg_set_math_mode: handle is NULL', 'its message')
  mode = -1
  call expect(fg_get_math_mode(c_null_ptr, mode) == FG_STATUS_INVALID_HANDLE .and. mode == -1, &
              'fg_get_math_mode with a NULL handle writes nothing')
  call expect(FG_REPRODUCIBLE_RUN == 0 .and. FG_REPRODUCIBLE_SHAPE == 1, 'the reproducibility enumerators')
  call expect(fg_reproducibility_name(FG_REPRODUCIBLE_RUN) == 'run', 'fg_reproducibility_name(FG_REPRODUCIBLE_RUN)')
  call expect(fg_reproducibility_name(FG_REPRODUCIBLE_SHAPE) == 'shape', &
              'fg_reproducibility_name(FG_REPRODUCIBLE_SHAPE)')
  call expect(fg_reproducibility_name(2_c_int) == 'unknown', 'fg_reproducibility_name of no level')
  call expect(fg_set_reproducibility(c_null_ptr, FG_REPRODUCIBLE_SHAPE) == FG_STATUS_INVALID_HANDLE, &
              'fg_set_reproducibility with a NULL handle')
  call expect(fg_last_error_message() == 'fg_set_reproducibility: handle is NULL', 'its message')

  status = fg_create(handle)
  if (status == FG_STATUS_NO_DEVICE) then
    print '(a)', 'no GPU: the handle and product checks were left out'
  else if (status /= FG_STATUS_SUCCESS) then
    call expect(.false., 'fg_create: ' // fg_status_name(status) // ': ' // fg_last_error_message())
  else
    call handle_checks(handle)
    call reproducibility_checks(handle)
    call device_checks(handle)
    call expect(fg_destroy(handle) == FG_STATUS_SUCCESS, 'fg_destroy')
  end if

  if (failures > 0) then
    print '(i0, a)', failures, ' check(s) failed'
    error stop 1
  end if
  print '(a)', 'every check held'

contains

  subroutine expect(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    if (.not. condition) then
      print '(2a)', 'FAILED: ', what
      failures = failures + 1
    end if
  end subroutine expect

  subroutine handle_checks(handle)
    type(c_ptr), intent(in) :: handle
    integer(c_int) :: mode

    call expect(fg_get_math_mode(handle, mode) == FG_STATUS_SUCCESS, 'fg_get_math_mode')
    call expect(fg_set_math_mode(handle, FG_MATH_FP32_EMULATED) == FG_STATUS_SUCCESS, 'fg_set_math_mode')
    call expect(fg_get_math_mode(handle, mode) == FG_STATUS_SUCCESS .and. mode == FG_MATH_FP32_EMULATED, &
                'the mode set is the mode read')
    call expect(fg_set_math_mode(handle, 2_c_int) == FG_STATUS_INVALID_VALUE, 'fg_set_math_mode of no mode')
    call expect(index(fg_last_error_message(), 'fg_set_math_mode: mode = 2') == 1, 'its message')
    call expect(fg_get_math_mode(handle, mode) == FG_STATUS_SUCCESS .and. mode == FG_MATH_FP32_EMULATED, &
                'a refused mode changes nothing')
    call product_check(handle, FG_MATH_FP32_EMULATED)
    call expect(fg_set_math_mode(handle, FG_MATH_FP32) == FG_STATUS_SUCCESS, 'fg_set_math_mode back to FP32')
    call product_check(handle, FG_MATH_FP32)
    ! Forced, the emulating algorithm is refused by a build that does not carry it.
    status = fg_set_sgemm_algo(handle, FG_SGEMM_OZAKI_INT8)
    if (fg_sgemm_algo_name(FG_SGEMM_OZAKI_INT8) == 'unknown') then
      call expect(status == FG_STATUS_NOT_SUPPORTED, 'FG_SGEMM_OZAKI_INT8 in a build without it')
    else
      call expect(status == FG_STATUS_SUCCESS, 'FG_SGEMM_OZAKI_INT8 in a build with it')
    end if
  end subroutine handle_checks

  subroutine reproducibility_checks(handle)
    type(c_ptr), intent(in) :: handle
    integer(c_int) :: level

    call expect(fg_set_sgemm_algo(handle, FG_SGEMM_AUTO) == FG_STATUS_SUCCESS, 'fg_set_sgemm_algo(AUTO)')
    call expect(fg_get_reproducibility(handle, level) == FG_STATUS_SUCCESS .and. level == FG_REPRODUCIBLE_RUN, &
                'a new handle is reproducible run to run')
    call expect(fg_set_reproducibility(handle, FG_REPRODUCIBLE_SHAPE) == FG_STATUS_SUCCESS, 'fg_set_reproducibility')
    call expect(fg_get_reproducibility(handle, level) == FG_STATUS_SUCCESS .and. level == FG_REPRODUCIBLE_SHAPE, &
                'the level set is the level read')
    call expect(fg_set_reproducibility(handle, 5_c_int) == FG_STATUS_INVALID_VALUE, 'fg_set_reproducibility of no level')
    call expect(index(fg_last_error_message(), 'fg_set_reproducibility: level = 5') == 1, 'its message')
    call product_check(handle, FG_MATH_FP32)
    call expect(fg_set_reproducibility(handle, FG_REPRODUCIBLE_RUN) == FG_STATUS_SUCCESS, 'back to run')
  end subroutine reproducibility_checks

  ! The devices of fg_sgemm_host: an empty list, which Fortran passes as an array of size 0, returns to the
  ! handle's own device.
  subroutine device_checks(handle)
    type(c_ptr), intent(in) :: handle
    integer(c_int) :: none(0), listed(4), count, first

    count = -1
    call expect(fg_get_devices(handle, listed, 4_c_int, count) == FG_STATUS_SUCCESS .and. count >= 1, &
                'fg_get_devices')
    first = listed(1)
    call expect(fg_set_devices(handle, listed, count) == FG_STATUS_SUCCESS, 'fg_set_devices of the list read')
    call expect(fg_set_devices(handle, none, 0_c_int) == FG_STATUS_SUCCESS, &
                'fg_set_devices of an empty list: ' // fg_last_error_message())
    count = -1
    call expect(fg_get_devices(handle, none, 0_c_int, count) == FG_STATUS_SUCCESS .and. count == 1, &
                'an empty list leaves the handle''s own device')
    call expect(fg_get_devices(handle, listed, 4_c_int, count) == FG_STATUS_SUCCESS .and. listed(1) == first, &
                'the handle''s own device is listed')
  end subroutine device_checks

  ! C = A * B in column-major storage with the handle's selected algorithm in the given mode.
  subroutine product_check(handle, mode)
    type(c_ptr), intent(in) :: handle
    integer(c_int), intent(in) :: mode
    integer(c_int64_t), parameter :: m = 40, n = 30, k = 384
    real(c_float), target :: a(m, k), b(k, n), c(m, n)
    real(c_double) :: expected(m, n), worst
    type(c_ptr) :: device_a, device_b, device_c
    integer(c_int) :: ran

    call random_number(a)
    call random_number(b)
    a = a - 0.5
    b = b - 0.5
    c = -huge(c)
    expected = matmul(real(a, c_double), real(b, c_double))
    if (cudaMalloc(device_a, c_sizeof(a)) /= 0 .or. cudaMalloc(device_b, c_sizeof(b)) /= 0 .or. &
        cudaMalloc(device_c, c_sizeof(c)) /= 0) error stop 'cudaMalloc failed'
    if (cudaMemcpy(device_a, c_loc(a), c_sizeof(a), host_to_device) /= 0 .or. &
        cudaMemcpy(device_b, c_loc(b), c_sizeof(b), host_to_device) /= 0 .or. &
        cudaMemcpy(device_c, c_loc(c), c_sizeof(c), host_to_device) /= 0) error stop 'cudaMemcpy failed'
    status = fg_sgemm(handle, FG_COL_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0_c_float, device_a, m, device_b, k, &
                      0.0_c_float, device_c, m)
    call expect(status == FG_STATUS_SUCCESS, 'fg_sgemm in mode ' // fg_math_mode_name(mode) // ': ' // &
                fg_last_error_message())
    ! cudaMemcpy waits for the product, which runs on the legacy default stream.
    if (cudaMemcpy(c_loc(c), device_c, c_sizeof(c), device_to_host) /= 0) error stop 'cudaMemcpy failed'
    if (cudaFree(device_a) /= 0 .or. cudaFree(device_b) /= 0 .or. cudaFree(device_c) /= 0) error stop 'cudaFree failed'
    call expect(fg_get_last_sgemm_algo(handle, ran) == FG_STATUS_SUCCESS .and. ran /= FG_SGEMM_AUTO, &
                'fg_get_last_sgemm_algo names what ran')
    worst = maxval(abs(c - expected)) / maxval(abs(expected))
    print '(4a, es9.2)', fg_math_mode_name(mode), ' (', fg_sgemm_algo_name(ran), '): worst error ', worst
    call expect(worst <= 1d-5, 'the product in mode ' // fg_math_mode_name(mode))
  end subroutine product_check

end program test_fastgemm

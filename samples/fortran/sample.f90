! SPDX-License-Identifier: Apache-2.0
! fastgemm from Fortran: an sgemm and a rowmean_matvec on device memory, each checked against the CPU.
! Without a GPU, fastgemm says so (FG_STATUS_NO_DEVICE), the program prints its message and exits 0.
!
! Build against fastgemm installed in /opt/fastgemm, static or shared (the module source is installed with
! the headers; the run path lets the loader find a shared libfastgemm, a static one needs none):
!   export PKG_CONFIG_PATH=/opt/fastgemm/lib/pkgconfig
!   gfortran $(pkg-config --variable=includedir fastgemm)/fastgemm/fastgemm.f90 sample.f90 -o sample \
!            $(pkg-config --libs fastgemm) -Wl,-rpath,$(pkg-config --variable=libdir fastgemm)

! The few CUDA runtime calls the program needs, bound to libcudart.
module cuda_runtime
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int), parameter :: cudaSuccess = 0
  integer(c_int), parameter :: cudaMemcpyHostToDevice = 1
  integer(c_int), parameter :: cudaMemcpyDeviceToHost = 2

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

    function cudaDeviceSynchronize() bind(C, name="cudaDeviceSynchronize") result(error)
      import :: c_int
      integer(c_int) :: error
    end function cudaDeviceSynchronize
  end interface
end module cuda_runtime

program sample
  use, intrinsic :: iso_c_binding
  use cuda_runtime
  use fastgemm
  implicit none
  type(c_ptr) :: handle
  integer(c_int) :: status

  status = fg_create(handle)
  if (status == FG_STATUS_NO_DEVICE) then
    if (len(fg_last_error_message()) == 0) then
      print '(a)', 'FG_STATUS_NO_DEVICE without a message'
      stop 1
    end if
    print '(2a)', 'no usable CUDA device, as fastgemm reports: ', fg_last_error_message()
    stop
  end if
  call check(status, 'fg_create')

  call sgemm_example(handle)
  call rowmean_example(handle)
  call check(fg_destroy(handle), 'fg_destroy')

contains

  subroutine check(status, call_name)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: call_name
    if (status /= FG_STATUS_SUCCESS) then
      print '(5a)', call_name, ': ', fg_status_name(status), ': ', fg_last_error_message()
      stop 1
    end if
  end subroutine check

  subroutine check_cuda(error, call_name)
    integer(c_int), intent(in) :: error
    character(len=*), intent(in) :: call_name
    if (error /= cudaSuccess) then
      print '(2a, i0)', call_name, ' failed: cudaError_t ', error
      stop 1
    end if
  end subroutine check_cuda

  ! A device copy of bytes bytes at host.
  function to_device(host, bytes) result(device)
    type(c_ptr), intent(in) :: host
    integer(c_size_t), intent(in) :: bytes
    type(c_ptr) :: device
    call check_cuda(cudaMalloc(device, bytes), 'cudaMalloc')
    call check_cuda(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), 'cudaMemcpy')
  end function to_device

  ! C := alpha * A * transpose(Bt) + beta * C in column-major storage, Fortran's own.
  subroutine sgemm_example(handle)
    type(c_ptr), intent(in) :: handle
    integer(c_int64_t), parameter :: m = 96, n = 80, k = 112
    real(c_float), parameter :: alpha = 1.5, beta = -0.5
    real(c_float), target :: a(m, k), bt(n, k), c(m, n)
    real(c_double) :: expected(m, n)
    type(c_ptr) :: device_a, device_bt, device_c
    integer(c_int) :: ran
    integer :: i, j

    do j = 1, int(k)
      do i = 1, int(m)
        a(i, j) = real(modulo(7 * i + 3 * j, 17) - 8, c_float) / 8
      end do
      do i = 1, int(n)
        bt(i, j) = real(modulo(5 * i + 11 * j, 13) - 6, c_float) / 4
      end do
    end do
    do j = 1, int(n)
      do i = 1, int(m)
        c(i, j) = real(modulo(i + j, 5), c_float)
      end do
    end do
    expected = alpha * matmul(real(a, c_double), transpose(real(bt, c_double))) + beta * real(c, c_double)

    device_a = to_device(c_loc(a), c_sizeof(a))
    device_bt = to_device(c_loc(bt), c_sizeof(bt))
    device_c = to_device(c_loc(c), c_sizeof(c))
    call check(fg_sgemm(handle, FG_COL_MAJOR, FG_OP_N, FG_OP_T, m, n, k, alpha, device_a, m, device_bt, n, &
                        beta, device_c, m), 'fg_sgemm')
    ! Calls are asynchronous: a failure of the kernel itself surfaces at the next synchronization.
    call check_cuda(cudaDeviceSynchronize(), 'cudaDeviceSynchronize')
    call check_cuda(cudaMemcpy(c_loc(c), device_c, c_sizeof(c), cudaMemcpyDeviceToHost), 'cudaMemcpy')
    call check(fg_get_last_sgemm_algo(handle, ran), 'fg_get_last_sgemm_algo')
    call check_cuda(cudaFree(device_a), 'cudaFree')
    call check_cuda(cudaFree(device_bt), 'cudaFree')
    call check_cuda(cudaFree(device_c), 'cudaFree')

    call report('fg_sgemm ' // fg_sgemm_algo_name(ran), maxval(abs(c - expected) / (abs(expected) + 1)), 1d-5)
  end subroutine sgemm_example

  ! output = matrix * (row means of input), in double precision. fastgemm's row-major arrays are
  ! Fortran arrays with the dimensions reversed: input(M, L, N), matrix(L, L) holding the L x L matrix
  ! transposed, output(N, L).
  subroutine rowmean_example(handle)
    type(c_ptr), intent(in) :: handle
    integer(c_int64_t), parameter :: l = 40, m = 33, n = 6
    real(c_double), target :: input(m, l, n), matrix(l, l), output(n, l)
    real(c_double) :: expected(n, l)
    type(c_ptr) :: device_input, device_matrix, device_output
    integer :: i, j, batch
    integer(c_int) :: ran

    do batch = 1, int(n)
      do j = 1, int(l)
        do i = 1, int(m)
          input(i, j, batch) = sin(0.37d0 * (i + m * (j + l * batch)))
        end do
      end do
    end do
    do j = 1, int(l)
      do i = 1, int(l)
        matrix(i, j) = cos(0.11d0 * (i + l * j))
      end do
    end do
    expected = transpose(matmul(transpose(matrix), sum(input, dim=1) / m))

    device_input = to_device(c_loc(input), c_sizeof(input))
    device_matrix = to_device(c_loc(matrix), c_sizeof(matrix))
    call check_cuda(cudaMalloc(device_output, c_sizeof(output)), 'cudaMalloc')
    call check(fg_rowmean_matvec(handle, FG_F64, device_input, device_matrix, device_output, l, m, n), &
               'fg_rowmean_matvec')
    call check_cuda(cudaDeviceSynchronize(), 'cudaDeviceSynchronize')
    call check_cuda(cudaMemcpy(c_loc(output), device_output, c_sizeof(output), cudaMemcpyDeviceToHost), &
                    'cudaMemcpy')
    call check_cuda(cudaFree(device_input), 'cudaFree')
    call check_cuda(cudaFree(device_matrix), 'cudaFree')
    call check_cuda(cudaFree(device_output), 'cudaFree')
    call check(fg_get_last_rowmean_algo(handle, ran), 'fg_get_last_rowmean_algo')

    call report('fg_rowmean_matvec ' // fg_rowmean_algo_name(ran), maxval(abs(output - expected) / (abs(expected) + 1)), &
                1d-12)
  end subroutine rowmean_example

  subroutine report(what, worst, tolerance)
    character(len=*), intent(in) :: what
    real(c_double), intent(in) :: worst, tolerance
    print '(2a, es9.2)', what, ': worst relative error ', worst
    if (.not. worst <= tolerance) then
      print '(a)', 'result differs from the CPU'
      stop 1
    end if
  end subroutine report

end program sample

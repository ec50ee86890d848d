! SPDX-License-Identifier: Apache-2.0
! An ordinary Fortran program of a BLAS user: SGEMM on its arrays, checked against a double product.
! It knows nothing of fastgemm; the tests run it with libfastgemm_blas.so preloaded.
program drop_in
  implicit none
  integer, parameter :: m = 640, n = 600, k = 720, lda = m + 5, ldb = n, ldc = m + 1
  real :: a(lda, k), b(ldb, k), c(ldc, n), c_start(ldc, n)
  double precision :: expected(m, n), largest, worst
  real :: alpha, beta
  integer :: i, j

  call random_seed()
  call random_number(a)
  call random_number(b)
  call random_number(c)
  a = a - 0.5
  b = b - 0.5
  c_start = c
  alpha = 0.75
  beta = -1.25
  ! C := alpha * A * B^T + beta * C, A m x k (lda > m), B n x k
  expected = alpha * matmul(dble(a(1:m, :)), transpose(dble(b(1:n, :)))) + beta * dble(c(1:m, :))
  call sgemm('N', 'T', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
  largest = maxval(abs(expected))
  worst = maxval(abs(dble(c(1:m, :)) - expected)) / largest
  do j = 1, n
    do i = m + 1, ldc
      if (c(i, j) /= c_start(i, j)) worst = huge(worst)
    end do
  end do
  print '(a, es10.3)', 'sgemm 640x600x720: max error ', worst
  if (worst > 1d-5) stop 1
end program drop_in

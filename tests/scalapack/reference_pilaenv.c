/* SPDX-License-Identifier: Apache-2.0 */
/* A stand-in for ScaLAPACK's PILAENV (its reference value, 32), so that libfastgemm_pblas.so's answers can be
   tested where ScaLAPACK is not installed. */
int pilaenv_(const int *context, const char *precision) {
  (void)context;
  (void)precision;
  return 32;
}

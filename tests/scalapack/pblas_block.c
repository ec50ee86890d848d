/* SPDX-License-Identifier: Apache-2.0 */
/* Prints PILAENV's answer, as PBLAS asks it (a context and a precision letter), for each precision: the
   stand-in ScaLAPACK's (32), or libfastgemm_pblas.so's where it is preloaded. */
#include <stdio.h>

int pilaenv_(const int *context, const char *precision);

int main(void) {
  const int context = 0;
  const char precisions[] = "SDCZ";
  for (int i = 0; i < 4; ++i) printf("%c %d\n", precisions[i], pilaenv_(&context, &precisions[i]));
  return 0;
}

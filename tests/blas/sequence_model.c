/* SPDX-License-Identifier: Apache-2.0 */
/* shape_sequence_sgemm.c's routines under names of their own (sequence_sgemm, sequence_ssymm, sequence_strsm,
   sequence_strmm, sequence_ssyrk, sequence_ssyr2k) and without its log, for a program that compares the drop-in's
   results with them. */
#define SEQUENCE_QUIET
#define sgemm_ sequence_sgemm
#define ssymm_ sequence_ssymm
#define strsm_ sequence_strsm
#define strmm_ sequence_strmm
#define ssyrk_ sequence_ssyrk
#define ssyr2k_ sequence_ssyr2k
#include "shape_sequence_sgemm.c"

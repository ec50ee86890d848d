# SPDX-License-Identifier: Apache-2.0
# What the scripts that run fastgemm-bench on the GPU share (included by run_bench_*.cmake, run with cmake -P).

# Runs BENCH with the arguments given, leaving its exit status, standard output and standard error (stripped) in
# `status`, `output` and `errors`, and prints them. Without a GPU the bench exits 3: the calling script then prints
# the skip line CTest and test.sh recognize, and ends (a macro's return() returns from its caller).
macro(run_bench_on_gpu)
  execute_process(COMMAND "${BENCH}" ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
  string(STRIP "${errors}" errors)
  if(status EQUAL 3)
    message("SKIPPED: no CUDA device, as ${errors}")
    return()
  endif()
  message("${output}${errors}")
endmacro()

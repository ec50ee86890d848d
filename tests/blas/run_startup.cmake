# SPDX-License-Identifier: Apache-2.0
# A program whose products are all small starts with libfastgemm_blas.so preloaded as it starts without:
# it loads nothing of CUDA (the program checks its own mappings) and, the best of RUNS starts, takes less
# than LIMIT_MS milliseconds from exec to exit. FASTGEMM_LOG=1 must show its calls on the CPU.
#   PROGRAM, PRELOAD, RUNS, LIMIT_MS
set(ENV{LD_PRELOAD} "${PRELOAD}")
set(ENV{FASTGEMM_LOG} 1)
set(best "")
foreach(run RANGE 1 ${RUNS})
  string(TIMESTAMP start "%s%f" UTC)
  execute_process(COMMAND ${PROGRAM} OUTPUT_VARIABLE output ERROR_VARIABLE errors RESULT_VARIABLE status)
  string(TIMESTAMP stop "%s%f" UTC)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} (preloaded) failed (${status}): ${output}${errors}")
  endif()
  math(EXPR microseconds "${stop} - ${start}")
  if(best STREQUAL "" OR microseconds LESS best)
    set(best ${microseconds})
  endif()
endforeach()
if(NOT errors MATCHES "fastgemm_blas: cblas_sgemm m=24 n=24 k=24 on the CPU" OR
   NOT errors MATCHES "fastgemm_blas: sgemm_ m=24 n=24 k=24 on the CPU")
  message(FATAL_ERROR "libfastgemm_blas.so did not log the two calls on the CPU:\n${errors}")
endif()
math(EXPR limit "${LIMIT_MS} * 1000")
message(STATUS "best of ${RUNS} preloaded starts: ${best} us (limit ${limit} us)")
if(best GREATER limit)
  message(FATAL_ERROR "the preloaded program took ${best} us at best, over ${LIMIT_MS} ms")
endif()

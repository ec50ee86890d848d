# SPDX-License-Identifier: Apache-2.0
# libfastgemm_lapack.so's QR routines (?geqr2_, ?larft_ in halves; ?larfb_ by tiles) under LAPACK's own test program
# of one precision (Debian's liblapack-test, xlintst<PRECISION> in LAPACK_DIR), over the QR family (the QR and its
# blocked updates, least squares, the triangular-pentagonal and tall-skinny QRs) at orders up to 130, where the
# panels of 128 columns and more are factored in halves: run on the distribution's LAPACK alone, then with
# LAPACK_PRELOAD preloaded (FASTGEMM_LOG=1). Both runs must finish, run the same tests, and pass all of them, and the
# preloaded run's log must show panels factored in halves. INPUT: the program's input (lapack_qr_<p>test.in);
# WORK_DIR: where the outputs go. Prints "SKIPPED: ..." without the package.
if(NOT PRECISION MATCHES "^[sd]$")
  message(FATAL_ERROR "PRECISION is s or d, not '${PRECISION}'")
endif()
set(program "${LAPACK_DIR}/xlintst${PRECISION}")
if(NOT EXISTS "${program}")
  message(STATUS "SKIPPED: LAPACK's test programs are not in ${LAPACK_DIR} (Debian: apt-get install liblapack-test)")
  return()
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(problems "")
foreach(where IN ITEMS plain preloaded)
  if(where STREQUAL "plain")
    set(environment --unset=LD_PRELOAD)
  else()
    set(environment LD_PRELOAD=${LAPACK_PRELOAD} FASTGEMM_LOG=1)
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${environment} ${program} WORKING_DIRECTORY "${WORK_DIR}"
                  INPUT_FILE "${INPUT}" OUTPUT_FILE "${WORK_DIR}/${where}.out" ERROR_FILE "${WORK_DIR}/${where}.log"
                  RESULT_VARIABLE status)
  file(READ "${WORK_DIR}/${where}.out" output)
  # One summary line a path: "All tests for SQR routines passed the threshold (  47304 tests run)", or the
  # counts of those that failed.
  string(REGEX MATCHALL "[^\n]*(tests run|failed to pass)[^\n]*" summary_${where} "${output}")
  list(LENGTH summary_${where} lines)
  if(NOT status EQUAL 0 OR lines LESS 5 OR output MATCHES "failed to pass|illegal")
    list(APPEND problems "${where} run: status ${status}, ${lines} summary lines:\n${output}")
  endif()
endforeach()
if(NOT summary_plain STREQUAL summary_preloaded)
  list(APPEND problems "not the same tests run or passed:\n${summary_plain}\n-- preloaded:\n${summary_preloaded}")
endif()
file(STRINGS "${WORK_DIR}/preloaded.log" halves REGEX "GEQR2 [0-9]+ x [0-9]+: in halves")
list(LENGTH halves taken)
if(taken EQUAL 0)
  list(APPEND problems "no panel was factored in halves (${PRECISION}GEQR2): ${WORK_DIR}/preloaded.log")
endif()
if(problems)
  list(JOIN problems "\n  " problems)
  message(FATAL_ERROR "xlintst${PRECISION} with libfastgemm_lapack.so:\n  ${problems}")
endif()
list(LENGTH summary_preloaded paths)
message(STATUS "xlintst${PRECISION}: ${paths} paths, the same tests run and passed with and without the preload; "
               "${taken} panels factored in halves")

# SPDX-License-Identifier: Apache-2.0
# libfastgemm_lapack.so (LAPACK's block, blas/lapack): PROGRAM (bench/drop_in/lapack_timing.c, linked to the
# distribution's LAPACK and BLAS) factors matrices of a few hundred with LAPACK's blocked drivers (potrf, getrf,
# geqrf, and syevd through sytrd and ormqr/ormtr) and checks each result. Run with LAPACK_PRELOAD preloaded (and
# BLAS_PRELOAD, libfastgemm_blas.so, before it in one case), the results must stay right whatever block it gives,
# and with FASTGEMM_LOG=1 its log must say which routines it gave which block: the block for the problems of at
# least 8 blocks on every side, LAPACK's own for the smaller ones, for any setting that is no block, and without
# the preload.
set(problems "")
# run(<name> <preload> <order> <routines> <setting or "unset"> <log regexes that must match> <regexes that must not>)
function(run name preload order routines setting must must_not)
  set(variable "FASTGEMM_LAPACK_BLOCK=${setting}")
  if(setting STREQUAL "unset")
    set(variable --unset=FASTGEMM_LAPACK_BLOCK)
  endif()
  set(preloading "LD_PRELOAD=${preload}")
  if(preload STREQUAL "")
    set(preloading --unset=LD_PRELOAD)
  endif()
  string(REPLACE " " ";" routine_list "${routines}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${preloading} FASTGEMM_LOG=1 "${variable}" ${PROGRAM} ${order}
                          ${routine_list}
                  OUTPUT_VARIABLE output ERROR_VARIABLE log RESULT_VARIABLE status)
  list(LENGTH routine_list expected)
  string(REGEX MATCHALL "n = ${order}: [^\n]*\\(ok\\)" passed "${output}")
  list(LENGTH passed count)
  if(NOT status EQUAL 0 OR NOT count EQUAL expected)
    list(APPEND problems "${name}: status ${status}, ${count} of ${expected} results right:\n${output}")
  endif()
  foreach(pattern IN LISTS must)
    if(NOT log MATCHES "${pattern}")
      list(APPEND problems "${name}: the log does not say '${pattern}':\n${log}")
    endif()
  endforeach()
  foreach(pattern IN LISTS must_not)
    if(log MATCHES "${pattern}")
      list(APPEND problems "${name}: the log says '${pattern}':\n${log}")
    endif()
  endforeach()
  set(problems "${problems}" PARENT_SCOPE)
endfunction()

set(all "spotrf dpotrf sgetrf dgetrf sgeqrf dgeqrf ssyevd dsyevd")
set(given "")
foreach(routine IN ITEMS SPOTRF DPOTRF SGETRF DGETRF SGEQRF DGEQRF SSYTRD DSYTRD)
  list(APPEND given "fastgemm_lapack: ${routine} orders 300 [^\n]*: block 16 \\(LAPACK's own: [0-9]+\\)")
endforeach()
run("block 16, order 300" "${LAPACK_PRELOAD}" 300 "${all}" 16 "${given}" "no whole number")
run("block 16 beside the drop-in" "${BLAS_PRELOAD}:${LAPACK_PRELOAD}" 300 "${all}" 16 "${given}" "")
# 8 blocks of 37 are 296: that order gets the block, one less does not.
run("block 37, order 296" "${LAPACK_PRELOAD}" 296 "dpotrf dgetrf" 37
    "DPOTRF orders 296 [^\n]*: block 37;DGETRF orders 296 296 [^\n]*: block 37" "")
run("block 37, order 295" "${LAPACK_PRELOAD}" 295 "dpotrf dgetrf" 37 "" "fastgemm_lapack")
run("the default block, order 300" "${LAPACK_PRELOAD}" 300 "dpotrf sgeqrf" unset "" "fastgemm_lapack")
run("an empty setting, order 300" "${LAPACK_PRELOAD}" 300 "dgetrf" "" "" "fastgemm_lapack")
foreach(bad IN ITEMS 0 -8 08 12x " 16" 65537 99999999999999999999)
  run("FASTGEMM_LAPACK_BLOCK='${bad}'" "${LAPACK_PRELOAD}" 300 "dgetrf spotrf" "${bad}"
      "^fastgemm_lapack: FASTGEMM_LAPACK_BLOCK=[^\n]* is no whole number from 1 to 65536; LAPACK's own blocks stay\n$"
      "block [0-9]")
endforeach()
run("without the preload" "" 300 "dgetrf dgeqrf" 16 "" "fastgemm_lapack")
if(problems)
  list(JOIN problems "\n  " problems)
  message(FATAL_ERROR "libfastgemm_lapack.so:\n  ${problems}")
endif()
message(STATUS "libfastgemm_lapack.so: blocks given and results right in every case")

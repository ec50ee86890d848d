# SPDX-License-Identifier: Apache-2.0
# libfastgemm_lapack.so (LAPACK's block, blas/lapack): PROGRAM (bench/drop_in/lapack_timing.c, linked to the
# distribution's LAPACK and BLAS) factors matrices of a few hundred with LAPACK's blocked drivers (potrf, getrf,
# geqrf, and syevd through sytrd and ormqr/ormtr) and checks each result. Run with LAPACK_PRELOAD preloaded (and
# BLAS_PRELOAD, libfastgemm_blas.so, before it in one case), the results must stay right whatever block it gives,
# and with FASTGEMM_LOG=1 its log must say which routines it gave which block: the block for the problems of at
# least 8 blocks on every side, LAPACK's own for the smaller ones, for any setting that is no block, and without
# the preload; ILAENV's answers asked directly, and through a LAPACK opened out of the global scope; the QR's panels
# in halves where the block is 128 or more.
cmake_policy(VERSION 3.24)
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
# A block of 128 at order 1100: the QR's panels of 128 columns are factored and their T built in halves, and their
# their reflectors applied with the workspace's copies by tiles (qr_panel.cpp), beside the drop-in too; the block of 16
# leaves the panels to LAPACK.
set(halves "DGEQRF orders 1100 [^\n]*: block 128" "DGEQR2 [0-9]+ x 128: in halves" "DLARFT [0-9]+ x 128: in halves"
           "SGEQR2 [0-9]+ x 128: in halves" "SLARFT [0-9]+ x 128: in halves"
           "DLARFB LT [0-9]+ x [0-9]+, 128 reflectors: copies by tiles" "SLARFB LT [0-9]+ x [0-9]+, 128 reflectors")
run("block 128, order 1100" "${LAPACK_PRELOAD}" 1100 "sgeqrf dgeqrf" 128 "${halves}" "")
run("block 128 beside the drop-in" "${BLAS_PRELOAD}:${LAPACK_PRELOAD}" 1100 "sgeqrf dgeqrf" 128 "${halves}" "")
run("block 16, order 1100" "${LAPACK_PRELOAD}" 1100 "sgeqrf dgeqrf" 16 "" "in halves|LARFB")
run("the default block, order 300" "${LAPACK_PRELOAD}" 300 "dpotrf sgeqrf" unset "" "fastgemm_lapack")
run("an empty setting, order 300" "${LAPACK_PRELOAD}" 300 "dgetrf" "" "" "fastgemm_lapack")
foreach(bad IN ITEMS 0 -8 08 12x " 16" 99999999999999999999)
  run("FASTGEMM_LAPACK_BLOCK='${bad}'" "${LAPACK_PRELOAD}" 300 "dgetrf spotrf" "${bad}"
      "^fastgemm_lapack: FASTGEMM_LAPACK_BLOCK=[^\n]* is no whole number from 1 to 8192; LAPACK's own blocks stay\n$"
      "block [0-9]")
endforeach()
run("without the preload" "" 300 "dgetrf dgeqrf" 16 "" "fastgemm_lapack")
foreach(bad IN ITEMS 8193 65536)
  run("FASTGEMM_LAPACK_BLOCK=${bad}" "${LAPACK_PRELOAD}" 300 "dpotrf" "${bad}" "no whole number from 1 to 8192"
      "block [0-9]")
endforeach()

# ILAENV asked directly (QUERIES, lapack_block.c), at the default block: LAPACK's own answer but where the query is
# for a block (ISPEC 1) of a routine LAPACK blocks, on orders of at least 8192 (8 blocks) whose largest times 1024
# stays within 2^29; then the same where the block is 8192.
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LD_PRELOAD ${QUERIES} queries OUTPUT_VARIABLE own
                RESULT_VARIABLE own_status)
set(given_at_default "1 DGETRF 8192 8192 -1 -1" "1 SGETRF 65536 8192 -1 -1" "1 DPOTRF 8192 -1 -1 -1"
    "1 DGEQRF 100000 8192 -1 -1" "1 DSYTRD 16384 -1 -1 -1" "1 DPOTRF 524288 -1 -1 -1" "1 ZGETRF 16384 16384 -1 -1"
    "1 DPOTRF 65536 -1 -1 -1" "1 DPOTRF 65537 -1 -1 -1")
set(given_at_8192 "1 DPOTRF 65536 -1 -1 -1")
foreach(block IN ITEMS default 8192)
  if(block STREQUAL "default")
    set(variable --unset=FASTGEMM_LAPACK_BLOCK)
    set(given ${given_at_default})
    set(answer 1024)
  else()
    set(variable FASTGEMM_LAPACK_BLOCK=${block})
    set(given ${given_at_8192})
    set(answer ${block})
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${LAPACK_PRELOAD} ${variable} ${QUERIES} queries
                  OUTPUT_VARIABLE preloaded RESULT_VARIABLE preloaded_status)
  string(STRIP "${own}" own_text)
  string(STRIP "${preloaded}" preloaded_text)
  string(REPLACE "\n" ";" own_lines "${own_text}")
  string(REPLACE "\n" ";" preloaded_lines "${preloaded_text}")
  list(LENGTH own_lines count)
  list(LENGTH preloaded_lines preloaded_count)
  if(NOT own_status EQUAL 0 OR NOT preloaded_status EQUAL 0 OR count LESS 10 OR NOT count EQUAL preloaded_count)
    list(APPEND problems "queries at block ${block}: status ${own_status} / ${preloaded_status}:\n${own}\n${preloaded}")
    break()
  endif()
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    list(GET own_lines ${i} own_line)
    list(GET preloaded_lines ${i} preloaded_line)
    string(REGEX REPLACE " -?[0-9]+$" "" query "${own_line}")
    if(query IN_LIST given)
      set(want "${query} ${answer}")
    else()
      set(want "${own_line}")
    endif()
    if(NOT preloaded_line STREQUAL want)
      list(APPEND problems "block ${block}: ILAENV answered '${preloaded_line}', not '${want}'")
    endif()
  endforeach()
endforeach()

# LAPACK opened with RTLD_LOCAL (OPENER, lapack_block.c built without LAPACK): its own answers must be found.
execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${LAPACK_PRELOAD} FASTGEMM_LOG=1 FASTGEMM_LAPACK_BLOCK=16
                        ${OPENER} dlopen ${OPENED_LAPACK}
                OUTPUT_VARIABLE output ERROR_VARIABLE log RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR NOT output STREQUAL "ok\n"
   OR NOT log MATCHES "DPOTRF orders 300 -1 -1 -1: block 16 \\(LAPACK's own: 64\\)")
  list(APPEND problems "LAPACK opened with RTLD_LOCAL: status ${status}, '${output}', log:\n${log}")
endif()
if(problems)
  list(JOIN problems "\n  " problems)
  message(FATAL_ERROR "libfastgemm_lapack.so:\n  ${problems}")
endif()
message(STATUS "libfastgemm_lapack.so: blocks given and results right in every case")

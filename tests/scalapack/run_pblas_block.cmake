# SPDX-License-Identifier: Apache-2.0
# libfastgemm_pblas.so's PILAENV: PROGRAM (pblas_block.c, linked to a stand-in ScaLAPACK whose PILAENV answers 32)
# run with PRELOAD preloaded and FASTGEMM_PBLAS_BLOCK set to each case below must print the block the case
# expects for every precision, and with FASTGEMM_LOG=1 say on stderr once which block it gives and why; without
# the preload, the stand-in's 32.
#   "setting:expected block:what the log says"; an empty setting leaves the variable unset.
set(cases
  ":1024:PBLAS's block is 1024 \\(the default. ScaLAPACK's own: 32\\)"
  "=:1024:PBLAS's block is 1024 \\(the default"
  "=256:256:PBLAS's block is 256 \\(FASTGEMM_PBLAS_BLOCK. ScaLAPACK's own: 32\\)"
  "=1:1:PBLAS's block is 1 \\("
  "=65536:65536:PBLAS's block is 65536 \\("
  "=65537:32:no whole number from 1 to 65536. PBLAS's block stays ScaLAPACK's own, 32"
  "=0:32:stays ScaLAPACK's own"
  "=-8:32:stays ScaLAPACK's own"
  "=08:32:stays ScaLAPACK's own"
  "=12x:32:stays ScaLAPACK's own"
  "= 64:32:stays ScaLAPACK's own"
  "=99999999999999999999:32:stays ScaLAPACK's own")
set(problems "")
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LD_PRELOAD ${PROGRAM} OUTPUT_VARIABLE output
                RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR NOT output STREQUAL "S 32\nD 32\nC 32\nZ 32\n")
  list(APPEND problems "without the preload: status ${status}, '${output}'")
endif()
foreach(case IN LISTS cases)
  string(FIND "${case}" ":" first)
  string(SUBSTRING "${case}" 0 ${first} setting)
  math(EXPR rest_at "${first} + 1")
  string(SUBSTRING "${case}" ${rest_at} -1 rest)
  string(FIND "${rest}" ":" second)
  string(SUBSTRING "${rest}" 0 ${second} expected)
  math(EXPR log_at "${second} + 1")
  string(SUBSTRING "${rest}" ${log_at} -1 log_expected)
  if(setting STREQUAL "")
    set(variable --unset=FASTGEMM_PBLAS_BLOCK)
  else()
    set(variable "FASTGEMM_PBLAS_BLOCK${setting}")
  endif()
  foreach(logging IN ITEMS 0 1)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${PRELOAD} FASTGEMM_LOG=${logging} "${variable}" ${PROGRAM}
                    OUTPUT_VARIABLE output ERROR_VARIABLE log RESULT_VARIABLE status)
    set(want "S ${expected}\nD ${expected}\nC ${expected}\nZ ${expected}\n")
    if(NOT status EQUAL 0 OR NOT output STREQUAL want)
      list(APPEND problems "'${variable}', FASTGEMM_LOG=${logging}: status ${status}, printed '${output}', not '${want}'")
    endif()
    if(logging EQUAL 0 AND NOT log STREQUAL "")
      list(APPEND problems "'${variable}': wrote '${log}' on stderr without FASTGEMM_LOG=1")
    endif()
    if(logging EQUAL 1)
      string(REGEX MATCHALL "\n" lines "${log}")
      list(LENGTH lines count)
      if(NOT count EQUAL 1 OR NOT log MATCHES "^fastgemm_pblas: [^\n]*${log_expected}")
        list(APPEND problems "'${variable}': the log '${log}' is not one line matching '${log_expected}'")
      endif()
    endif()
  endforeach()
endforeach()
if(problems)
  list(JOIN problems "\n  " problems)
  message(FATAL_ERROR "libfastgemm_pblas.so:\n  ${problems}")
endif()
list(LENGTH cases count)
message(STATUS "libfastgemm_pblas.so: the block of ${count} settings of FASTGEMM_PBLAS_BLOCK, each logged once")

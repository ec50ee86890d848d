# SPDX-License-Identifier: Apache-2.0
# The parameter each invalid call names, and how the program ends, are the reference BLAS's: for each case
# of parameters.c, REFERENCE (linked to the system BLAS alone), LINKED (libfastgemm_blas.so linked ahead of
# it with --as-needed, which drops the system BLAS) and REFERENCE with PRELOAD preloaded must name the same
# parameter number and end with the same exit status. Also checks that LINKED does not need the system
# BLAS (OBJDUMP), so that the lookup at run time is what finds its error handlers.
#   REFERENCE, LINKED, PRELOAD, OBJDUMP, CASES (the last case number; unset: what `REFERENCE count` prints)
# Optional: OWN, a library that defines sgemm_ and nothing else of BLAS: LINKED runs once more with it as
# FASTGEMM_BLAS_FALLBACK, so that no system BLAS is loaded and no error handler is found. The drop-in's
# checks must then name the same parameter alone (a bad argument they let pass would reach the own loops,
# which name none), in its own messages (row-major positions mapped as netlib's cblas_xerbla maps them);
# the exit status may differ.
execute_process(COMMAND ${OBJDUMP} -p ${LINKED} OUTPUT_VARIABLE headers RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR NOT headers MATCHES "NEEDED +libfastgemm_blas")
  message(FATAL_ERROR "${LINKED} does not need libfastgemm_blas.so:\n${headers}")
endif()
if(headers MATCHES "NEEDED +libblas")
  message(FATAL_ERROR "${LINKED} still needs the system BLAS: the --as-needed link kept it")
endif()
# "Parameter 9 to routine cblas_sgemm" (CBLAS) or "parameter number  8" (the Fortran xerbla), and the status.
function(outcome variable)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE output ERROR_VARIABLE errors RESULT_VARIABLE status)
  set(text "${output}${errors}")
  if(text MATCHES "[Pp]arameter( number)? +([0-9]+)")
    set(${variable} "parameter ${CMAKE_MATCH_2}, exit ${status}" PARENT_SCOPE)
  else()
    set(${variable} "no parameter named, exit ${status}: ${text}" PARENT_SCOPE)
  endif()
endfunction()
if(NOT CASES)
  execute_process(COMMAND ${REFERENCE} count OUTPUT_VARIABLE CASES RESULT_VARIABLE status)
  string(STRIP "${CASES}" CASES)
  if(NOT status EQUAL 0 OR NOT CASES MATCHES "^[0-9]+$")
    message(FATAL_ERROR "${REFERENCE} count: no number of cases (${CASES})")
  endif()
endif()
set(problems "")
foreach(case RANGE 1 ${CASES})
  outcome(reference ${REFERENCE} ${case})
  outcome(linked ${LINKED} ${case})
  outcome(preloaded ${CMAKE_COMMAND} -E env LD_PRELOAD=${PRELOAD} ${REFERENCE} ${case})
  if(NOT reference MATCHES "^parameter ")
    list(APPEND problems "case ${case}: the reference names no parameter (${reference})")
  endif()
  if(NOT linked STREQUAL reference OR NOT preloaded STREQUAL reference)
    list(APPEND problems "case ${case}: reference '${reference}', linked '${linked}', preloaded '${preloaded}'")
  endif()
  if(OWN)
    outcome(own ${CMAKE_COMMAND} -E env FASTGEMM_BLAS_FALLBACK=${OWN} ${LINKED} ${case})
    string(REGEX REPLACE ", exit .*" "" own_parameter "${own}")
    string(REGEX REPLACE ", exit .*" "" reference_parameter "${reference}")
    if(NOT own_parameter STREQUAL reference_parameter)
      list(APPEND problems "case ${case}: reference '${reference}', without a system BLAS '${own}'")
    endif()
  endif()
  message(STATUS "case ${case}: ${reference}")
endforeach()
if(problems)
  list(JOIN problems "\n" problems)
  message(FATAL_ERROR "${problems}")
endif()

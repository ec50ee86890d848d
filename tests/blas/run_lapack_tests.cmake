# SPDX-License-Identifier: Apache-2.0
# LAPACK's own test programs of one precision (Debian's liblapack-test, installed in LAPACK_DIR) run twice in
# WORK_DIR: on the CPU, then with libfastgemm_blas.so (PRELOAD) preloaded and every Level 3 call it takes sent
# to the GPU (FASTGEMM_BLAS_MIN_FLOPS=0, FASTGEMM_LOG=1 into a file). Each suite must run as many tests on the
# GPU as on the CPU, fail none the CPU passes (LAPACK's "out of ... tests failed to pass the threshold"), and
# report no more illegal-argument or INFO lines; every GPU call must have succeeded, and some must have run.
# The report counts the GPU calls of each routine (the second word of the drop-in's log line).
# Prints "SKIPPED: ..." (the test's SKIP_REGULAR_EXPRESSION) when PROBE (a program that calls cblas_sgemm)
# finds no usable GPU through the preloaded library (as "no CUDA device", the reason scripts/test.sh counts),
# or without the package.
# PRECISION: s (the default: xlintsts, xeigtsts, ...) or d (xlintstd, xeigtstd, ..., and the mixed-precision
# xlintstds), the programs and inputs lapack_testing.py runs for it.
# Optional: SUITES, "program:input" pairs separated by spaces (all of them by default); ENV, more NAME=VALUE
# settings for the GPU run (separated by spaces), e.g. FASTGEMM_BLAS_REPRODUCIBLE=0; SEQUENCE, a library whose
# sgemm_ computes FG_REPRODUCIBLE_SHAPE's documented sequence on the CPU (shape_sequence_sgemm.c): each suite
# runs a third time with it preloaded, and the GPU's output must be that run's, less the timings (only with
# the drop-in's default, FG_REPRODUCIBLE_SHAPE); REQUIRE_ON_GPU, routines (as the log names them, dgemm_) of
# which some calls must have run on the GPU over the whole run.
if(NOT PRECISION)
  set(PRECISION s)
elseif(NOT PRECISION MATCHES "^[sd]$")
  message(FATAL_ERROR "PRECISION is s or d, not '${PRECISION}'")
elseif(SEQUENCE AND NOT PRECISION STREQUAL "s")
  message(FATAL_ERROR "SEQUENCE is an SGEMM: single precision only")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

execute_process(
  COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${PRELOAD} FASTGEMM_LOG=1 FASTGEMM_BLAS_MIN_FLOPS=0 ${PROBE}
  WORKING_DIRECTORY "${WORK_DIR}" OUTPUT_VARIABLE probe_output ERROR_VARIABLE probe_log RESULT_VARIABLE probe_status)
if(probe_log MATCHES "no GPU for this (thread|process)")
  message(STATUS "SKIPPED: no CUDA device usable (${PROBE} ran on the CPU)")
  return()
endif()
if(NOT EXISTS "${LAPACK_DIR}/xlintst${PRECISION}" OR NOT EXISTS "${LAPACK_DIR}/xeigtst${PRECISION}")
  message(STATUS "SKIPPED: LAPACK's test programs are not in ${LAPACK_DIR} (Debian: apt-get install liblapack-test)")
  return()
endif()
if(NOT probe_status EQUAL 0 OR NOT probe_log MATCHES "on the GPU \\([a-z_]+\\) -> FG_STATUS_SUCCESS")
  message(FATAL_ERROR "the probe ${PROBE} did not run on the GPU (status ${probe_status}):\n${probe_log}")
endif()

# lapack_testing.py's runs of the precision (3.11), and the balancing inputs the package ships beside them:
# the inputs of the eigenvalue programs named without a letter serve every precision. Double precision has
# the mixed-precision linear solvers too (xlintstds: DSGESV and DSPOSV, which factor in single precision).
if(NOT SUITES)
  set(letter ${PRECISION})
  set(SUITES xlintst${letter}:${letter}test.in xlintstrf${letter}:${letter}test_rfp.in)
  if(letter STREQUAL "d")
    list(APPEND SUITES xlintstds:dstest.in)
  endif()
  foreach(input IN ITEMS nep sep se2 svd ${letter}ec ${letter}ed ${letter}gg ${letter}gd ${letter}sb ${letter}sg
                         ${letter}bb glm gqr gsv csd lse ${letter}bal ${letter}bak ${letter}gbal ${letter}gbak)
    list(APPEND SUITES xeigtst${letter}:${input}.in)
  endforeach()
else()
  separate_arguments(SUITES UNIX_COMMAND "${SUITES}")
endif()
separate_arguments(extra_environment UNIX_COMMAND "${ENV}")

# The counts lapack_testing.py takes from an output: tests run, tests failing the threshold, and lines
# reporting an illegal argument or an INFO error.
function(lapack_counts text prefix)
  set(run 0)
  set(failed 0)
  string(REGEX MATCHALL "\\( *[0-9]+ tests run\\)" runs "${text}")
  foreach(found IN LISTS runs)
    string(REGEX REPLACE "[^0-9]" "" number "${found}")
    math(EXPR run "${run} + ${number}")
  endforeach()
  string(REGEX MATCHALL "[0-9]+ out of +[0-9]+ tests failed" failures "${text}")
  foreach(found IN LISTS failures)
    string(REGEX REPLACE " out of.*" "" number "${found}")
    math(EXPR failed "${failed} + ${number}")
    string(REGEX REPLACE ".* out of +([0-9]+) tests failed" "\\1" number "${found}")
    math(EXPR run "${run} + ${number}")
  endforeach()
  string(REGEX MATCHALL "[^\n]*([Ii]llegal| INFO)[^\n]*" errors "${text}")
  list(LENGTH errors error_count)
  set(${prefix}_run ${run} PARENT_SCOPE)
  set(${prefix}_failed ${failed} PARENT_SCOPE)
  set(${prefix}_errors ${error_count} PARENT_SCOPE)
endfunction()

set(problems "")
set(report "")
set(total_gpu_calls 0)
set(gpu_routines "")
set(why_not_gpu "")
foreach(suite IN LISTS SUITES)
  string(REPLACE ":" ";" parts "${suite}")
  list(GET parts 0 program)
  list(GET parts 1 input)
  string(REGEX REPLACE "\\.in$" "" name "${input}")
  if(NOT EXISTS "${LAPACK_DIR}/${program}" OR NOT EXISTS "${LAPACK_DIR}/${input}")
    list(APPEND problems "${program} < ${input}: not in ${LAPACK_DIR}")
    continue()
  endif()
  set(runs cpu gpu)
  if(SEQUENCE)
    list(APPEND runs sequence)
  endif()
  foreach(where IN LISTS runs)
    set(environment "")
    if(where STREQUAL "gpu")
      set(environment LD_PRELOAD=${PRELOAD} FASTGEMM_LOG=1 FASTGEMM_BLAS_MIN_FLOPS=0 ${extra_environment})
    elseif(where STREQUAL "sequence")
      set(environment LD_PRELOAD=${SEQUENCE})
    endif()
    execute_process(
      COMMAND ${CMAKE_COMMAND} -E env ${environment} ${LAPACK_DIR}/${program}
      INPUT_FILE "${LAPACK_DIR}/${input}" OUTPUT_FILE "${WORK_DIR}/${name}.${where}.out"
      ERROR_FILE "${WORK_DIR}/${name}.${where}.log" WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE status
      TIMEOUT 3000)
    file(READ "${WORK_DIR}/${name}.${where}.out" text)
    lapack_counts("${text}" ${where})
    # The balancing programs print no counts of tests, only their largest errors (in units of eps where a
    # product is involved) and the examples where they occur: their outputs are compared less the timings,
    # those errors and the example numbers that go with them; the errors are compared apart.
    string(REGEX REPLACE "[^\n]*[Tt]ime[^\n]*" "" ${where}_whole "${text}")
    string(REGEX REPLACE "[^\n]*([Tt]ime|largest (test )?error)[^\n]*" "" ${where}_untimed "${text}")
    string(REGEX MATCHALL "largest test error *= *[-+0-9.EeDd]+" ${where}_largest "${text}")
    # GPU-only failures of STFSM's one ill-conditioned case (see below).
    string(REGEX MATCHALL "Failure in STFSM[^\n]*test= *[0-9.]+" ${where}_stfsm "${text}")
    if(NOT status EQUAL 0)
      list(APPEND problems "${program} < ${input} on the ${where}: exit status ${status}")
    endif()
  endforeach()
  # One log line a call, "fastgemm_blas: dgemm_ m=... on the GPU (...) -> ...": counted by awk, routine by
  # routine, since the log of a suite can hold a million.
  set(gpu_calls 0)
  set(suite_calls "")
  if(EXISTS "${WORK_DIR}/${name}.gpu.log")
    execute_process(
      COMMAND awk "/ on the GPU \\(/ { calls[$2]++ } END { for (routine in calls) print routine, calls[routine] }"
              "${WORK_DIR}/${name}.gpu.log"
      COMMAND sort OUTPUT_VARIABLE counts OUTPUT_STRIP_TRAILING_WHITESPACE)
    string(REPLACE "\n" ";" counts "${counts}")
    foreach(line IN LISTS counts)
      if(NOT line MATCHES "^([A-Za-z0-9_]+) ([0-9]+)$")
        continue()
      endif()
      set(routine ${CMAKE_MATCH_1})
      set(count ${CMAKE_MATCH_2})
      list(FIND gpu_routines ${routine} seen)
      if(seen EQUAL -1)
        list(APPEND gpu_routines ${routine})
        set(gpu_calls_${routine} 0)
      endif()
      math(EXPR gpu_calls_${routine} "${gpu_calls_${routine}} + ${count}")
      math(EXPR gpu_calls "${gpu_calls} + ${count}")
      list(APPEND suite_calls "${routine} ${count}")
    endforeach()
  endif()
  math(EXPR total_gpu_calls "${total_gpu_calls} + ${gpu_calls}")
  # The drop-in's reason for keeping calls on the CPU, where it gives one (a library of one precision it could
  # not load): told with a routine of REQUIRE_ON_GPU that never ran on the GPU.
  if(NOT why_not_gpu)
    execute_process(COMMAND grep -m 1 "no GPU for this" "${WORK_DIR}/${name}.gpu.log" OUTPUT_VARIABLE why_not_gpu
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
  list(JOIN suite_calls ", " suite_calls)
  if(suite_calls)
    set(suite_calls " (${suite_calls})")
  endif()
  execute_process(
    COMMAND grep -m 3 -E "on the GPU \\([a-z_]+\\) -> FG_STATUS_(INVALID|NOT|NO_|ALLOC|CUDA|CUBLAS|INTERNAL)|failed on the GPU"
            "${WORK_DIR}/${name}.gpu.log"
    OUTPUT_VARIABLE gpu_failures)
  if(gpu_failures)
    list(APPEND problems "${name}: GPU calls failed: ${gpu_failures}")
  endif()
  string(APPEND report "${name}: CPU ${cpu_run} tests, ${cpu_failed} failing, ${cpu_errors} errors; "
                       "GPU ${gpu_run} tests, ${gpu_failed} failing, ${gpu_errors} errors; "
                       "${gpu_calls} calls on the GPU${suite_calls}\n")
  if(cpu_run EQUAL 0 AND NOT gpu_untimed STREQUAL cpu_untimed)
    list(APPEND problems "${name}: its output with the GPU differs from the CPU's (${name}.cpu.out, ${name}.gpu.out)")
  endif()
  # With SEQUENCE (a CPU SGEMM computing FG_REPRODUCIBLE_SHAPE's documented sequence): the GPU's outputs are
  # those of that sequence, character for character but the timings (which shows where a program prints
  # values: the balancing programs' largest errors, a failing test's ratio).
  if(SEQUENCE AND NOT gpu_whole STREQUAL sequence_whole)
    list(APPEND problems "${name}: its output with the GPU differs from the documented sequence's (${name}.gpu.out, ${name}.sequence.out)")
  endif()
  # A largest error of a balancing program passes where it is no larger than the CPU's or than LAPACK's
  # usual threshold of 30 (eps units): the reference BLAS is not the exact answer (SGGBAK: 0.524 with it,
  # 1.05e-4 with the FMA sequence of FG_REPRODUCIBLE_SHAPE).
  list(LENGTH cpu_largest cpu_largest_count)
  list(LENGTH gpu_largest gpu_largest_count)
  if(NOT cpu_largest_count EQUAL gpu_largest_count)
    list(APPEND problems "${name}: ${gpu_largest_count} largest errors printed with the GPU, ${cpu_largest_count} on the CPU")
  elseif(cpu_largest_count GREATER 0)
    math(EXPR last "${cpu_largest_count} - 1")
    foreach(index RANGE ${last})
      list(GET cpu_largest ${index} cpu_line)
      list(GET gpu_largest ${index} gpu_line)
      string(REGEX REPLACE ".*= *" "" cpu_value "${cpu_line}")
      string(REGEX REPLACE ".*= *" "" gpu_value "${gpu_line}")
      string(REGEX REPLACE "[Dd]" "E" cpu_value "${cpu_value}")
      string(REGEX REPLACE "[Dd]" "E" gpu_value "${gpu_value}")
      if(gpu_value GREATER cpu_value AND gpu_value GREATER 30)
        list(APPEND problems "${name}: largest test error ${gpu_value} with the GPU, ${cpu_value} on the CPU")
      endif()
      string(APPEND report "  ${name}: largest test error ${gpu_value} with the GPU, ${cpu_value} on the CPU\n")
    endforeach()
  endif()
  # LAPACK 3.11's STFSM test (sdrvrf3) measures |X_tfsm - X_trsm| without dividing by |X|, on a case it makes
  # ill-conditioned (M = N = 50, |X| about 4e6): a difference of 2 ulp reads 30 to 50. The reference BLAS
  # passes because its SGEMM adds each product into C without FMA, as STRSM does; any SGEMM with FMA fails
  # it (the reference's own order with FMA: 38.8; OpenBLAS: 33 to 43), and later LAPACK divides by |X|. Such
  # a failure, with the GPU only and under 100, is reported and not counted. Single precision alone: a failure
  # of double precision's DTFSM counts.
  set(known_failures 0)
  list(LENGTH cpu_stfsm cpu_stfsm_count)
  if(cpu_stfsm_count EQUAL 0)
    foreach(line IN LISTS gpu_stfsm)
      string(REGEX REPLACE ".*test= *" "" ratio "${line}")
      if(ratio LESS 100)
        math(EXPR known_failures "${known_failures} + 1")
        string(APPEND report "  ${name}: not counted, LAPACK's unscaled STFSM measure: ${line}\n")
      endif()
    endforeach()
  endif()
  math(EXPR gpu_failed "${gpu_failed} - ${known_failures}")
  if(NOT gpu_run EQUAL cpu_run)
    list(APPEND problems "${name}: ${gpu_run} tests ran with the GPU, ${cpu_run} on the CPU")
  endif()
  if(gpu_failed GREATER cpu_failed OR (cpu_failed EQUAL 0 AND NOT gpu_failed EQUAL 0))
    list(APPEND problems "${name}: ${gpu_failed} tests failed the threshold with the GPU, ${cpu_failed} on the CPU")
  endif()
  if(gpu_errors GREATER cpu_errors)
    list(APPEND problems "${name}: ${gpu_errors} illegal-argument or INFO lines with the GPU, ${cpu_errors} on the CPU")
  endif()
endforeach()
if(total_gpu_calls EQUAL 0)
  list(APPEND problems "no call ran on the GPU")
endif()
if(why_not_gpu)
  set(why_not_gpu " (the log: ${why_not_gpu})")
endif()
foreach(routine IN LISTS REQUIRE_ON_GPU)
  list(FIND gpu_routines ${routine} seen)
  if(seen EQUAL -1)
    list(APPEND problems "no ${routine} call ran on the GPU${why_not_gpu}")
  endif()
endforeach()
set(by_routine "")
foreach(routine IN LISTS gpu_routines)
  list(APPEND by_routine "${routine} ${gpu_calls_${routine}}")
endforeach()
list(JOIN by_routine ", " by_routine)
get_filename_component(preloaded "${PRELOAD}" NAME)
if(problems)
  message(FATAL_ERROR "LAPACK's tests with ${preloaded}:\n${report}problems:\n${problems}\n"
                      "(outputs and logs in ${WORK_DIR})")
endif()
message(STATUS "LAPACK's tests with ${preloaded}: every suite as on the CPU; "
               "${total_gpu_calls} calls ran on the GPU (${by_routine})\n${report}")

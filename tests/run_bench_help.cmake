# SPDX-License-Identifier: Apache-2.0
# fastgemm-bench --help is short (under 60 lines) and names --version and --help-all; --help-all has every
# option and the sections on checking and timing; --algo and --list know the rowmean relay by both its names;
# --host-time outside sgemm, or with --stages, is a usage error.
# None needs a GPU. Run with cmake -P and BENCH.
execute_process(COMMAND ${BENCH} --help RESULT_VARIABLE status OUTPUT_VARIABLE short ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "fastgemm-bench --help exited ${status}: ${errors}")
endif()
string(REGEX MATCHALL "\n" newlines "${short}")
list(LENGTH newlines lines)
if(NOT lines LESS 60)
  message(FATAL_ERROR "fastgemm-bench --help prints ${lines} lines, not under 60")
endif()
foreach(option --version --help-all --list --algo --csv)
  if(NOT short MATCHES "\n  [^\n]*${option}")
    message(FATAL_ERROR "fastgemm-bench --help does not list ${option}:\n${short}")
  endif()
endforeach()
execute_process(COMMAND ${BENCH} --help-all RESULT_VARIABLE status OUTPUT_VARIABLE all)
foreach(part "--devices LIST" "--repeats N" "--dist LIST" "--stages" "--host-time" "\nChecking:" "\nTiming:" "--version" "--help-all")
  if(NOT all MATCHES "${part}")
    message(FATAL_ERROR "fastgemm-bench --help-all has no '${part}'")
  endif()
endforeach()
# --algo takes an algorithm's name and, for a renamed one, its former name: the usage error names only the
# unknown one after them. --list shows the current name.
foreach(name relay pipelined)
  execute_process(COMMAND ${BENCH} rowmean --algo ${name},no_such_algo RESULT_VARIABLE status ERROR_VARIABLE errors)
  if(NOT status EQUAL 2 OR NOT errors MATCHES "--algo 'no_such_algo' is not an algorithm")
    message(FATAL_ERROR "fastgemm-bench rowmean --algo ${name},no_such_algo exited ${status}: ${errors}")
  endif()
endforeach()
# --host-time is sgemm's, and excludes --stages (CUPTI's trace slows the process's later calls): usage errors, before
# any GPU is looked for.
foreach(arguments "sgemm;--math;fp32_emulated;--stages;--host-time" "rowmean;--host-time" "accuracy;--host-time")
  execute_process(COMMAND ${BENCH} ${arguments} RESULT_VARIABLE status ERROR_VARIABLE errors)
  if(NOT status EQUAL 2 OR NOT errors MATCHES "--host-time")
    message(FATAL_ERROR "fastgemm-bench ${arguments} exited ${status}: ${errors}")
  endif()
endforeach()
execute_process(COMMAND ${BENCH} --list RESULT_VARIABLE status OUTPUT_VARIABLE list)
if(NOT status EQUAL 0 OR NOT list MATCHES "\n +7  relay\n")
  message(FATAL_ERROR "fastgemm-bench --list exited ${status} without rowmean's 7 relay:\n${list}")
endif()
message(STATUS "--help: ${lines} lines")

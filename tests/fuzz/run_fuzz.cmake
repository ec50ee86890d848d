# SPDX-License-Identifier: Apache-2.0
# Builds the fuzzer of what the entry points do below the device guard (capi/calls.hpp, capi/validate.hpp)
# with clang (libFuzzer, AddressSanitizer, UndefinedBehaviorSanitizer) and runs it for SECONDS, from the
# inputs it kept before and the seeds beside this file (inputs that once failed). Run with cmake -P and:
# CLANG, SOURCE_DIR (the repository), CUDA_INCLUDE, WORK_DIR, SECONDS.
file(MAKE_DIRECTORY "${WORK_DIR}/corpus")
execute_process(
  COMMAND "${CLANG}" -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
          -I${SOURCE_DIR}/include -I${SOURCE_DIR} -I${SOURCE_DIR}/lib -I${CUDA_INCLUDE}
          ${SOURCE_DIR}/tests/fuzz/fuzz_validate.cpp ${SOURCE_DIR}/capi/calls.cpp
          ${SOURCE_DIR}/capi/validate.cpp -o ${WORK_DIR}/fuzz_validate
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "building the fuzzer failed")
endif()
execute_process(COMMAND ${WORK_DIR}/fuzz_validate -max_total_time=${SECONDS} -print_final_stats=1
                        -rss_limit_mb=2048 ${WORK_DIR}/corpus
                        ${SOURCE_DIR}/tests/fuzz/seeds
                RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the fuzzer found a failing input (exit ${result})")
endif()

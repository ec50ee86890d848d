# SPDX-License-Identifier: Apache-2.0
# Runs `fastgemm-bench accuracy` on a small part of its suite (BENCH, ARGS) and checks that it ran through: the
# summary line counts CASES cases and at least one fastgemm row (AUTO's) for each, no call failed, and the exit
# status is 0 (every row met the contract) or 1 (a row missed it: the run's figures say so, this test does not
# judge them). Without a GPU the bench exits 3: the test prints the skip line CTest and test.sh recognize.
# CSV rows hold empty fields: list() keeps them (CMP0007), whatever CMake runs the script.
cmake_minimum_required(VERSION 3.24)
include(${CMAKE_CURRENT_LIST_DIR}/bench_test_helpers.cmake)
run_bench_on_gpu(accuracy ${ARGS})
if(NOT status MATCHES "^[01]$")
  message(FATAL_ERROR "fastgemm-bench accuracy exited with ${status}")
endif()
if(NOT output MATCHES "\nAccuracy contract [^\n]*: ${CASES} cases, ([0-9]+) fastgemm rows: [0-9]+ met, [0-9]+ missed, [0-9]+ declined, ([0-9]+) failed\n")
  message(FATAL_ERROR "fastgemm-bench accuracy printed no summary of ${CASES} cases")
endif()
if(CMAKE_MATCH_1 LESS CASES)
  message(FATAL_ERROR "fewer fastgemm rows (${CMAKE_MATCH_1}) than cases (${CASES})")
endif()
if(NOT CMAKE_MATCH_2 EQUAL 0)
  message(FATAL_ERROR "${CMAKE_MATCH_2} fastgemm call(s) failed")
endif()

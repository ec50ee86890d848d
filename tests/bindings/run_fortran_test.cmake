# SPDX-License-Identifier: Apache-2.0
# Builds the Fortran module with test_fastgemm.f90 against a shared libfastgemm (LIBRARY) and the CUDA runtime
# (CUDART), strictly (Fortran 2008, every warning an error), in WORK_DIR, and runs it. Run with cmake -P and
# FORTRAN_COMPILER, SOURCE_DIR, LIBRARY, CUDART, WORK_DIR.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
get_filename_component(library_dir "${LIBRARY}" DIRECTORY)
execute_process(
  COMMAND "${FORTRAN_COMPILER}" -std=f2008 -Wall -Werror -J "${WORK_DIR}"
          "${SOURCE_DIR}/bindings/fortran/fastgemm.f90" "${SOURCE_DIR}/tests/bindings/test_fastgemm.f90"
          -o "${WORK_DIR}/test_fastgemm" "${LIBRARY}" "${CUDART}" "-Wl,-rpath,${library_dir}"
  RESULT_VARIABLE compiled OUTPUT_VARIABLE compile_output ERROR_VARIABLE compile_output)
if(NOT compiled EQUAL 0)
  message(FATAL_ERROR "the Fortran test did not build:\n${compile_output}")
endif()
execute_process(COMMAND "${WORK_DIR}/test_fastgemm" RESULT_VARIABLE status OUTPUT_VARIABLE output
                ERROR_VARIABLE output)
message("${output}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "test_fastgemm exited with ${status}")
endif()

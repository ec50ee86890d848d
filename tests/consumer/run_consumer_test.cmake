# Installs the build into a fresh prefix, then builds and runs the consumer programs against it: through
# find_package (C and C++) and through pkg-config (C). Run with cmake -P and:
#   FASTGEMM_BUILD_DIR  the fastgemm build to install
#   WORK_DIR            scratch directory (emptied)
#   CONSUMER_SOURCE_DIR this directory
#   GENERATOR, C_COMPILER
foreach(variable FASTGEMM_BUILD_DIR WORK_DIR CONSUMER_SOURCE_DIR GENERATOR C_COMPILER)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "${variable} is not set")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  message("${output}")
  if(NOT result EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "failed (${result}): ${command}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run(${CMAKE_COMMAND} --install "${FASTGEMM_BUILD_DIR}" --prefix "${prefix}")

run(${CMAKE_COMMAND} -S "${CONSUMER_SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}" -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer_c")
run("${WORK_DIR}/build/consumer_cpp")

file(GLOB_RECURSE pc_file "${prefix}/*/fastgemm.pc")
get_filename_component(pc_dir "${pc_file}" DIRECTORY)
execute_process(COMMAND ${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${pc_dir}" pkg-config --cflags --libs fastgemm
                RESULT_VARIABLE result OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs fastgemm failed")
endif()
message("pkg-config --cflags --libs fastgemm: ${flags}")
separate_arguments(flags UNIX_COMMAND "${flags}")
run("${C_COMPILER}" "${CONSUMER_SOURCE_DIR}/consumer.c" -o "${WORK_DIR}/consumer_pkgconfig" ${flags} -lm)
run("${WORK_DIR}/consumer_pkgconfig")

# The README's C example compiles and links as written.
if(DEFINED README)
  file(READ "${README}" readme)
  string(REGEX MATCH "```c\n([^`]*)```" block "${readme}")
  if(NOT CMAKE_MATCH_1)
    message(FATAL_ERROR "no C example found in ${README}")
  endif()
  file(WRITE "${WORK_DIR}/readme_example.c" "${CMAKE_MATCH_1}")
  run("${C_COMPILER}" -std=c99 -Wall -Werror "${WORK_DIR}/readme_example.c" -o "${WORK_DIR}/readme_example" ${flags} -lm)
endif()

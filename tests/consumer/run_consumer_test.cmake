# Installs the build into a fresh prefix, then builds and runs the consumer programs against it: through
# find_package (C and C++) and through pkg-config (C). Run with cmake -P and:
#   FASTGEMM_BUILD_DIR  the fastgemm build to install
#   WORK_DIR            scratch directory (emptied)
#   CONSUMER_SOURCE_DIR this directory
#   GENERATOR, C_COMPILER
include(${CMAKE_CURRENT_LIST_DIR}/../install_test_helpers.cmake)
require_variables(FASTGEMM_BUILD_DIR WORK_DIR CONSUMER_SOURCE_DIR GENERATOR C_COMPILER)
install_into_fresh_prefix(prefix)

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
  readme_example("${README}" c "${WORK_DIR}/readme_example.c")
  run("${C_COMPILER}" -std=c99 -Wall -Werror "${WORK_DIR}/readme_example.c" -o "${WORK_DIR}/readme_example" ${flags} -lm)
endif()

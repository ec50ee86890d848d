# Installs the build into a fresh prefix, then builds and runs what a user builds against it: the C
# sample through its pkg-config line, the C and C++ samples through samples/CMakeLists.txt, the Fortran
# module with its sample; compiles and links the README's C++ example and compiles its Fortran example (a
# function) against the installed module; loads the installed Python module when the install has a
# shared library. The samples compute on a GPU, and without one say "no usable CUDA device" and succeed.
# Run with cmake -P and:
#   FASTGEMM_BUILD_DIR  the fastgemm build to install
#   WORK_DIR            scratch directory (emptied)
#   SOURCE_DIR          fastgemm's source tree
#   GENERATOR, C_COMPILER, CXX_COMPILER
#   FORTRAN_COMPILER    optional: without it the Fortran parts are left out, saying so
#   PYTHON              optional: without it the Python module is not loaded, saying so
include(${CMAKE_CURRENT_LIST_DIR}/../install_test_helpers.cmake)
require_variables(FASTGEMM_BUILD_DIR WORK_DIR SOURCE_DIR GENERATOR C_COMPILER CXX_COMPILER)
install_into_fresh_prefix(prefix)

file(GLOB_RECURSE pc_file "${prefix}/*/fastgemm.pc")
get_filename_component(pc_dir "${pc_file}" DIRECTORY)
# --static lists the CUDA runtime too, which the samples call themselves, whether libfastgemm is static or shared.
execute_process(COMMAND ${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${pc_dir}" pkg-config --cflags --libs --static fastgemm
                RESULT_VARIABLE result OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs --static fastgemm failed")
endif()
message("pkg-config --cflags --libs --static fastgemm: ${flags}")
separate_arguments(flags UNIX_COMMAND "${flags}")
# pkg-config's flags set no run path to the prefix: a shared libfastgemm is found through LD_LIBRARY_PATH.
get_filename_component(lib_dir "${pc_dir}" DIRECTORY)
function(run_linked program)
  run(${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${lib_dir}:$ENV{LD_LIBRARY_PATH}" "${program}")
endfunction()

run("${C_COMPILER}" -std=c99 -Wall -Werror "${SOURCE_DIR}/samples/c/sgemm.c" -o "${WORK_DIR}/sgemm" ${flags} -lm)
run_linked("${WORK_DIR}/sgemm")

run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/samples" -B "${WORK_DIR}/samples" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}" -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build "${WORK_DIR}/samples")
run("${WORK_DIR}/samples/fastgemm_sample_sgemm")
run("${WORK_DIR}/samples/fastgemm_sample_rowmean")

readme_example("${SOURCE_DIR}/README.md" cpp "${WORK_DIR}/readme_example.cpp")
run("${CXX_COMPILER}" -std=c++11 -Wall -Werror "${WORK_DIR}/readme_example.cpp" -o "${WORK_DIR}/readme_example_cpp"
    ${flags})

if(FORTRAN_COMPILER)
  file(GLOB_RECURSE module "${prefix}/*/fastgemm/fastgemm.f90")
  if(NOT module)
    message(FATAL_ERROR "fastgemm.f90 is not installed under ${prefix}")
  endif()
  # Module files go to their own directory (-J), so that each program compiles the installed module afresh.
  set(fortran_flags -std=f2008 -Wall -Werror)
  file(MAKE_DIRECTORY "${WORK_DIR}/fortran" "${WORK_DIR}/fortran-readme")
  run("${FORTRAN_COMPILER}" ${fortran_flags} -J "${WORK_DIR}/fortran" "${module}"
      "${SOURCE_DIR}/samples/fortran/sample.f90" -o "${WORK_DIR}/fortran/sample" ${flags})
  run_linked("${WORK_DIR}/fortran/sample")
  readme_example("${SOURCE_DIR}/README.md" fortran "${WORK_DIR}/fortran-readme/example.f90")
  run("${FORTRAN_COMPILER}" ${fortran_flags} -J "${WORK_DIR}/fortran-readme" -c "${module}"
      -o "${WORK_DIR}/fortran-readme/fastgemm.o")
  run("${FORTRAN_COMPILER}" ${fortran_flags} -J "${WORK_DIR}/fortran-readme" -c "${WORK_DIR}/fortran-readme/example.f90"
      -o "${WORK_DIR}/fortran-readme/example.o")
else()
  message("No Fortran compiler: the Fortran module and sample were not built.")
endif()

file(GLOB_RECURSE python_module "${prefix}/*/fastgemm/python/fastgemm.py")
if(NOT python_module)
  message(FATAL_ERROR "fastgemm.py is not installed under ${prefix}")
endif()
file(GLOB shared_library "${prefix}/lib/libfastgemm.so" "${prefix}/lib64/libfastgemm.so")
if(PYTHON AND shared_library)
  get_filename_component(python_dir "${python_module}" DIRECTORY)
  run(${CMAKE_COMMAND} -E env --unset=FASTGEMM_LIBRARY "${PYTHON}" -c "import sys
sys.path.insert(0, '${python_dir}')
import fastgemm
print('installed fastgemm.py loads', fastgemm.library()._name, 'version', fastgemm.version())")
else()
  message("The install has no shared libfastgemm (or no python3): the installed Python module was not loaded.")
endif()

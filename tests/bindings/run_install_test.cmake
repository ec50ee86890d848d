# SPDX-License-Identifier: Apache-2.0
# A fresh install, used the way the README and the samples tell a user to use it. KIND=static installs the
# fastgemm build under test; KIND=shared first builds fastgemm as a shared library (the README's
# `--preset shared`, for one architecture). Then, against the install:
# - the installed fastgemm-bench starts in an empty environment: --help, --version, and a run that
#   measures on a GPU or says plainly that there is none;
# - the README's CMake project, then projects of one language each (C, C++, Fortran) find_package it,
#   build and run;
# - the pkg-config commands of the README (C) and of docs/fortran.md build their examples, without a
#   warning, and they run;
# - each sample's own build commands (its first comment) build it, and it runs; samples/CMakeLists.txt too;
# - docs/cpp.md's C++ example compiles; the installed Python module loads the shared library, on PYTHONPATH
#   and, through the README's commands, pip installed from the install's wheel into a virtual environment;
# - the install, moved, still serves CMake and pkg-config users: fastgemm.hpp in two translation units
#   (C++11 and C++20) and the README's C program; find_package refuses a version newer than the install.
# Programs run in an empty environment; without a GPU they say that fastgemm found no device.
# Run with cmake -P and:
#   KIND                static or shared
#   FASTGEMM_BUILD_DIR  (static) the fastgemm build to install
#   CUDA_ARCHITECTURES, CUDA_COMPILER  (shared) how to build fastgemm
#   WORK_DIR            scratch directory (emptied)
#   SOURCE_DIR          fastgemm's source tree
#   GENERATOR, C_COMPILER, CXX_COMPILER
#   FORTRAN_COMPILER    optional: without it the Fortran parts are left out, saying so
#   PYTHON              optional: without it the Python module is not loaded, saying so
include(${CMAKE_CURRENT_LIST_DIR}/../install_test_helpers.cmake)
require_variables(KIND WORK_DIR SOURCE_DIR GENERATOR C_COMPILER CXX_COMPILER)
set(readme "${SOURCE_DIR}/README.md")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

if(KIND STREQUAL "shared")
  require_variables(CUDA_ARCHITECTURES CUDA_COMPILER)
  run(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release
      -DBUILD_SHARED_LIBS=ON -DFASTGEMM_BUILD_SAMPLES=OFF "-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES}"
      "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}")
  run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
  set(FASTGEMM_BUILD_DIR "${WORK_DIR}/build")
elseif(NOT KIND STREQUAL "static")
  message(FATAL_ERROR "KIND is '${KIND}', not static or shared")
endif()
require_variables(FASTGEMM_BUILD_DIR)
set(prefix "${WORK_DIR}/prefix")
run(${CMAKE_COMMAND} --install "${FASTGEMM_BUILD_DIR}" --prefix "${prefix}")
file(GLOB shared_library "${prefix}/lib/libfastgemm.so")
if((KIND STREQUAL "shared" AND NOT shared_library) OR (KIND STREQUAL "static" AND shared_library))
  message(FATAL_ERROR "a ${KIND} install, but libfastgemm.so is ${shared_library}")
endif()
if(NOT EXISTS "${prefix}/lib/libfastgemm_blas.so")
  message(FATAL_ERROR "the ${KIND} install has no lib/libfastgemm_blas.so, the drop-in BLAS")
endif()
# Beside it, by its soname (no development link), the private library of its FP64 products that it opens.
if(NOT EXISTS "${prefix}/lib/libfastgemm_blas_dgemm.so.0" OR EXISTS "${prefix}/lib/libfastgemm_blas_dgemm.so")
  message(FATAL_ERROR "the ${KIND} install has no lib/libfastgemm_blas_dgemm.so.0 (or has a development link to it)")
endif()
if(NOT EXISTS "${prefix}/lib/libfastgemm_cublas.so")
  message(FATAL_ERROR "the ${KIND} install has no lib/libfastgemm_cublas.so, the cuBLAS interposer")
endif()
if(NOT EXISTS "${prefix}/lib/libfastgemm_pblas.so")
  message(FATAL_ERROR "the ${KIND} install has no lib/libfastgemm_pblas.so, PBLAS's block for ScaLAPACK")
endif()
if(NOT EXISTS "${prefix}/lib/libfastgemm_lapack.so")
  message(FATAL_ERROR "the ${KIND} install has no lib/libfastgemm_lapack.so, LAPACK's blocks for the drop-in")
endif()
# Preloaded into a program that does not use cuBLAS, the installed interposer changes nothing.
run_in("${WORK_DIR}" env -i "LD_PRELOAD=${prefix}/lib/libfastgemm_cublas.so" FASTGEMM_LOG=1 ${CMAKE_COMMAND} -E echo preloaded)
if(NOT run_output STREQUAL "preloaded\n")
  message(FATAL_ERROR "with the installed libfastgemm_cublas.so preloaded, cmake -E echo printed '${run_output}'")
endif()

# The installed bench.
set(bench "${prefix}/bin/fastgemm-bench")
run_in("${WORK_DIR}" env -i "${bench}" --help)
run_in("${WORK_DIR}" env -i "${bench}" --version)
if(NOT run_output MATCHES "^fastgemm-bench [0-9]+\\.[0-9]+\\.[0-9]+, libfastgemm [0-9]+\\.[0-9]+\\.[0-9]+, CUDA runtime ")
  message(FATAL_ERROR "fastgemm-bench --version printed '${run_output}'")
endif()
execute_process(COMMAND env -i "${bench}" sgemm --sizes 128 --max-seconds 0.1 RESULT_VARIABLE result
                OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("fastgemm-bench sgemm --sizes 128 (${result}): ${output}")
set(no_device_message "^fastgemm-bench: (no NVIDIA driver found|no NVIDIA driver/GPU found|the NVIDIA driver supports CUDA [0-9.]+, older)[^\n]* \\(CUDA: ")
if(NOT result EQUAL 0 AND NOT (result EQUAL 3 AND output MATCHES "${no_device_message}"))
  message(FATAL_ERROR "fastgemm-bench neither measured nor said plainly that there is no GPU")
endif()

# The README's programs, as app.c and app.f90.
readme_example("${readme}" c "${WORK_DIR}/app.c")
readme_example("${SOURCE_DIR}/docs/fortran.md" fortran "${WORK_DIR}/app.f90")

# The README's CMake project, with its C example, then CMake projects of one language each.
file(MAKE_DIRECTORY "${WORK_DIR}/readme-cmake")
file(COPY "${WORK_DIR}/app.c" DESTINATION "${WORK_DIR}/readme-cmake")
readme_example("${readme}" cmake "${WORK_DIR}/readme-cmake/CMakeLists.txt")
run(${CMAKE_COMMAND} -S "${WORK_DIR}/readme-cmake" -B "${WORK_DIR}/readme-cmake/build" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_C_COMPILER=${C_COMPILER}")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/readme-cmake/build")
run_program("${WORK_DIR}/readme-cmake/build/app")
set(consumer_languages C CXX)
set(consumer_sources "${SOURCE_DIR}/tests/consumer/consumer.c" "${SOURCE_DIR}/tests/consumer/consumer.cpp")
set(consumer_compilers "${C_COMPILER}" "${CXX_COMPILER}")
if(FORTRAN_COMPILER)
  list(APPEND consumer_languages Fortran)
  list(APPEND consumer_sources "${WORK_DIR}/app.f90")
  list(APPEND consumer_compilers "${FORTRAN_COMPILER}")
endif()
foreach(language source compiler IN ZIP_LISTS consumer_languages consumer_sources consumer_compilers)
  set(build "${WORK_DIR}/consumer-${language}")
  # Only that language's compiler is named, as in a user's project of that language.
  run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/consumer" -B "${build}" -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release
      "-DCMAKE_PREFIX_PATH=${prefix}" "-DCONSUMER_LANGUAGE=${language}" "-DCONSUMER_SOURCE=${source}"
      "-DCMAKE_${language}_COMPILER=${compiler}")
  run(${CMAKE_COMMAND} --build "${build}")
  run_program("${build}/consumer")
  if(language STREQUAL "Fortran")
    run_program("${build}/consumer_second")
  endif()
endforeach()

# The README's pkg-config commands.
file(MAKE_DIRECTORY "${WORK_DIR}/readme-c")
file(COPY "${WORK_DIR}/app.c" DESTINATION "${WORK_DIR}/readme-c")
readme_section_block("${readme}" "### With pkg-config" sh c_commands)
run_shell("${WORK_DIR}/readme-c" "${prefix}" "${c_commands}")
run_program("${WORK_DIR}/readme-c/app")
if(FORTRAN_COMPILER)
  file(MAKE_DIRECTORY "${WORK_DIR}/readme-fortran")
  file(COPY "${WORK_DIR}/app.f90" DESTINATION "${WORK_DIR}/readme-fortran")
  readme_section_block("${SOURCE_DIR}/docs/fortran.md" "# Fortran" sh fortran_commands)
  run_shell("${WORK_DIR}/readme-fortran" "${prefix}" "${fortran_commands}")
  run_program("${WORK_DIR}/readme-fortran/app")
endif()

# The samples, through their own build commands and through samples/CMakeLists.txt.
set(samples c/sgemm.c:sgemm cpp/rowmean.cpp:rowmean)
if(FORTRAN_COMPILER)
  list(APPEND samples fortran/sample.f90:sample)
endif()
foreach(entry IN LISTS samples)
  string(REPLACE ":" ";" entry "${entry}")
  list(GET entry 0 source)
  list(GET entry 1 program)
  set(directory "${WORK_DIR}/sample-${program}")
  file(MAKE_DIRECTORY "${directory}")
  file(COPY "${SOURCE_DIR}/samples/${source}" DESTINATION "${directory}")
  sample_build_commands("${SOURCE_DIR}/samples/${source}" commands)
  run_shell("${directory}" "${prefix}" "${commands}")
  run_program("${directory}/${program}")
endforeach()
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/samples" -B "${WORK_DIR}/samples" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}" -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/samples")
run_program("${WORK_DIR}/samples/fastgemm_sample_sgemm")
run_program("${WORK_DIR}/samples/fastgemm_sample_rowmean")

# The README's C++ example and the Fortran module compile without a warning, in the strictest standard
# mode that the README promises.
execute_process(COMMAND ${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${prefix}/lib/pkgconfig"
                        pkg-config --cflags --libs fastgemm
                RESULT_VARIABLE result OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs fastgemm failed")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
readme_example("${SOURCE_DIR}/docs/cpp.md" cpp "${WORK_DIR}/readme_example.cpp")
run("${CXX_COMPILER}" -std=c++11 -pedantic -Wall -Wextra -Werror "${WORK_DIR}/readme_example.cpp"
    -o "${WORK_DIR}/readme_example_cpp" ${flags})
run("${C_COMPILER}" -std=c99 -pedantic -Wall -Wextra -Werror "${WORK_DIR}/app.c" -o "${WORK_DIR}/app_c" ${flags})
if(FORTRAN_COMPILER)
  file(MAKE_DIRECTORY "${WORK_DIR}/fortran-strict")
  run("${FORTRAN_COMPILER}" -std=f2008 -Wall -Werror -J "${WORK_DIR}/fortran-strict"
      "${prefix}/include/fastgemm/fastgemm.f90" "${WORK_DIR}/app.f90" -o "${WORK_DIR}/fortran-strict/app" ${flags})
else()
  message("No Fortran compiler: the Fortran consumer, the README's Fortran program and the Fortran sample were not built.")
endif()

# The install moved elsewhere, as the tarball's is: the CMake package and the pkg-config file find the new
# prefix from where they lie (the old one is gone meanwhile). There, a C++ program of two translation units
# that both include fastgemm.hpp builds strictly as C++11 and C++20 and runs, the README's pkg-config
# commands build and run, and find_package refuses a version that this one cannot stand for.
set(moved "${WORK_DIR}/moved-prefix")
file(RENAME "${prefix}" "${moved}")
foreach(standard IN ITEMS 11 20)
  set(build "${WORK_DIR}/wrapper-${standard}")
  run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/consumer/wrapper" -B "${build}" -G "${GENERATOR}"
      -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${moved}" -DCXX_STANDARD=${standard} -DFASTGEMM_VERSION=0.1
      "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
  run(${CMAKE_COMMAND} --build "${build}")
  run_program("${build}/wrapper")
endforeach()
file(MAKE_DIRECTORY "${WORK_DIR}/moved-c")
file(COPY "${WORK_DIR}/app.c" DESTINATION "${WORK_DIR}/moved-c")
run_shell("${WORK_DIR}/moved-c" "${moved}" "${c_commands}")
run_program("${WORK_DIR}/moved-c/app")
file(STRINGS "${moved}/include/fastgemm/fastgemm.h" version_lines REGEX "^#define FG_VERSION_(MAJOR|MINOR) ")
string(REGEX REPLACE ".*FG_VERSION_MAJOR ([0-9]+).*" "\\1" major "${version_lines}")
string(REGEX REPLACE ".*FG_VERSION_MINOR ([0-9]+).*" "\\1" minor "${version_lines}")
math(EXPR next_minor "${minor} + 1")
math(EXPR next_major "${major} + 1")
foreach(version IN ITEMS ${major}.${next_minor} ${next_major}.0)
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/consumer/wrapper" -B "${WORK_DIR}/too-new"
                          -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${moved}" -DCXX_STANDARD=11
                          -DFASTGEMM_VERSION=${version} "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(result EQUAL 0 OR NOT output MATCHES "compatible with requested version \"${version}\"")
    message(FATAL_ERROR "find_package(fastgemm ${version}) against ${major}.${minor} (${result}):\n${output}")
  endif()
  file(REMOVE_RECURSE "${WORK_DIR}/too-new")
endforeach()
file(RENAME "${moved}" "${prefix}")

# The Python module of the install: the copy in share/fastgemm/python on PYTHONPATH; then the README's
# commands, which pip install the install's wheel into a fresh virtual environment, offline, and use it
# there, where only the install's record of its library leads to it (no FASTGEMM_LIBRARY, no
# LD_LIBRARY_PATH, nothing of the source tree); then, the install moved away, the module says where the
# library was, and FASTGEMM_LIBRARY leads it to the library's new place.
if(NOT PYTHON)
  message("No python3: the installed Python module was not loaded.")
  return()
endif()
set(python_env --unset=FASTGEMM_LIBRARY --unset=LD_LIBRARY_PATH --unset=PYTHONPATH --unset=PYTHONHOME
    --unset=VIRTUAL_ENV --unset=PIP_FIND_LINKS --unset=PIP_INDEX_URL --unset=PIP_EXTRA_INDEX_URL)
set(module_dir "${prefix}/share/fastgemm/python")
set(library "${prefix}/lib/libfastgemm.so.0")
file(STRINGS "${SOURCE_DIR}/include/fastgemm/fastgemm.h" header_version REGEX "^#define FG_VERSION_(MAJOR|MINOR|PATCH) ")
string(REGEX REPLACE ".*FG_VERSION_MAJOR ([0-9]+).*FG_VERSION_MINOR ([0-9]+).*FG_VERSION_PATCH ([0-9]+).*"
       "\\1.\\2.\\3" version "${header_version}")
set(wheel "${module_dir}/fastgemm-${version}-py3-none-any.whl")
foreach(file IN ITEMS "${module_dir}/fastgemm.py" "${module_dir}/_fastgemm_paths.py" "${wheel}")
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "the ${KIND} install has no ${file}")
  endif()
endforeach()
file(READ "${module_dir}/_fastgemm_paths.py" record)
string(FIND "${record}" "\nLIBRARY = \"${library}\"\n" position)
if(position EQUAL -1)
  message(FATAL_ERROR "the install's _fastgemm_paths.py does not name ${library}:\n${record}")
endif()
# Lines, not semicolons, which would split the command's arguments.
set(show "import fastgemm\nprint(fastgemm.__file__)\nprint(fastgemm.library()._name)\nprint('%d.%d.%d' % fastgemm.version())")
run_in("${WORK_DIR}" ${CMAKE_COMMAND} -E env ${python_env} "PYTHONPATH=${module_dir}" "${PYTHON}" -B -c "${show}")
# Near itself, it finds the library of its prefix: libfastgemm.so where the install has that link.
if(NOT run_output STREQUAL "${module_dir}/fastgemm.py\n${library}\n${version}\n"
   AND NOT run_output STREQUAL "${module_dir}/fastgemm.py\n${prefix}/lib/libfastgemm.so\n${version}\n")
  message(FATAL_ERROR "the installed fastgemm.py, on PYTHONPATH, loads another library or version")
endif()

# The README's commands, with an interpreter that makes virtual environments with pip (Debian:
# python3-venv) and has NumPy, which the README's environment takes from the system.
readme_section_block("${readme}" "### From Python" sh python_commands)
set(python_dir "${WORK_DIR}/python-readme")
set(venv_python "")
# Where ${PYTHON} is itself a virtual environment, a new one's "system site" is the base interpreter's, not
# ${PYTHON}'s: the last try makes the environment see ${PYTHON}'s packages (NumPy) through a .pth file.
execute_process(COMMAND "${PYTHON}" -c "import sys, sysconfig; print(sysconfig.get_paths()['purelib'] if sys.prefix != sys.base_prefix else '')"
                OUTPUT_VARIABLE parent_site OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
set(candidates "${PYTHON}" /usr/bin/python3)
if(parent_site)
  list(APPEND candidates "nested")
endif()
foreach(candidate IN LISTS candidates)
  file(REMOVE_RECURSE "${python_dir}")
  file(MAKE_DIRECTORY "${python_dir}")
  if(candidate STREQUAL "nested")
    set(see_parent "fastgemm-env/bin/python3 -c \"import sys, sysconfig; open(sysconfig.get_paths()['purelib'] + '/parent-site.pth', 'w').write(sys.argv[1])\" '${parent_site}'")
    string(REPLACE "python3 -m venv" "${PYTHON} -m venv" commands "${python_commands}")
    string(REPLACE "\n. fastgemm-env/bin/activate" "\n${see_parent}\n. fastgemm-env/bin/activate" commands "${commands}")
  else()
    string(REPLACE "python3 -m venv" "${candidate} -m venv" commands "${python_commands}")
  endif()
  string(REPLACE "/opt/fastgemm" "${prefix}" commands "${commands}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${python_env} sh -e -c "${commands}"
                  WORKING_DIRECTORY "${python_dir}" RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  file(GLOB venv_python "${python_dir}/*/bin/python3")
  file(GLOB venv_pip "${python_dir}/*/bin/pip")
  if(venv_python AND venv_pip AND NOT output MATCHES "No module named '?numpy")
    break()
  endif()
  message("with ${candidate}:\n${commands}\n${output}")
  set(venv_python "")
endforeach()
if(NOT venv_python)
  message(FATAL_ERROR "neither ${PYTHON} nor /usr/bin/python3 makes a virtual environment with pip and NumPy "
                      "(Debian: python3-venv, python3-numpy)")
endif()
message("in ${python_dir}:\n${commands}\n${output}")
if(NOT result EQUAL 0 AND NOT output MATCHES "FG_STATUS_NO_DEVICE")
  message(FATAL_ERROR "the README's Python commands failed (${result})")
endif()
if(result EQUAL 0 AND NOT output MATCHES "(^|\n)2048\\.0\n")
  message(FATAL_ERROR "the README's Python commands did not print 2048.0")
endif()
run_in("${python_dir}" ${CMAKE_COMMAND} -E env ${python_env} "${venv_python}" -c "${show}")
string(REGEX MATCH "^([^\n]*)\n([^\n]*)\n([^\n]*)\n$" ignored "${run_output}")
set(loaded_module "${CMAKE_MATCH_1}")
set(loaded_library "${CMAKE_MATCH_2}")
set(loaded_version "${CMAKE_MATCH_3}")
string(FIND "${loaded_module}" "${python_dir}/" position)
if(NOT position EQUAL 0 OR NOT loaded_module MATCHES "/site-packages/fastgemm\\.py$"
   OR NOT loaded_library STREQUAL "${library}" OR NOT loaded_version STREQUAL "${version}")
  message(FATAL_ERROR "the module pip installed from the install's wheel is not the environment's, or loads "
                      "another library than ${library} or another version than ${version}")
endif()

set(moved "${WORK_DIR}/moved-prefix")
file(RENAME "${prefix}" "${moved}")
set(moved_check "import sys, fastgemm
try:
    fastgemm.library()
except OSError as error:
    assert 'no longer there' in str(error) and sys.argv[1] in str(error) and 'FASTGEMM_LIBRARY' in str(error), error
    print('the module says:', error)
else:
    assert not fastgemm.library()._name.startswith(sys.argv[2]), fastgemm.library()._name
    print('the loader found', fastgemm.library()._name)")
run_in("${python_dir}" ${CMAKE_COMMAND} -E env ${python_env} "${venv_python}" -c "${moved_check}" "${library}" "${prefix}/")
run_in("${python_dir}" ${CMAKE_COMMAND} -E env ${python_env} "FASTGEMM_LIBRARY=${moved}/lib/libfastgemm.so.0"
       "${venv_python}" -c "${show}")
if(NOT run_output MATCHES "\n([^\n]*)\n[^\n]*\n$" OR NOT CMAKE_MATCH_1 STREQUAL "${moved}/lib/libfastgemm.so.0")
  message(FATAL_ERROR "with FASTGEMM_LIBRARY, the module loads another library")
endif()
file(RENAME "${moved}" "${prefix}")

# SPDX-License-Identifier: Apache-2.0
# `pip install --no-build-isolation ./bindings/python`, straight from the source tree, offline (--no-index)
# with the environment's setuptools, into a scratch directory: the source tree holds the same files after
# as before (setuptools alone would leave build/ and fastgemm.egg-info there). Then, from the scratch
# directory: the module imports, finds the library FASTGEMM_LIBRARY names, and fastgemm.matmul on NumPy
# arrays either computes the product or says that there is no GPU. Run with cmake -P and PYTHON (the
# build's interpreter; where it lacks pip, setuptools, wheel or NumPy, /usr/bin/python3, which Debian's
# python3-pip and python3-numpy serve), SOURCE_DIR, LIBRARY, WORK_DIR.
set(chosen "")
foreach(candidate IN ITEMS "${PYTHON}" /usr/bin/python3)
  execute_process(COMMAND ${candidate} -c "import setuptools, wheel, pip, numpy" RESULT_VARIABLE status
                  OUTPUT_QUIET ERROR_QUIET)
  if(status EQUAL 0)
    set(chosen "${candidate}")
    break()
  endif()
endforeach()
if(NOT chosen)
  message(FATAL_ERROR "neither ${PYTHON} nor /usr/bin/python3 has pip, setuptools, wheel and numpy (Debian: "
                      "python3-pip, python3-numpy)")
endif()
set(PYTHON "${chosen}")
message(STATUS "with ${PYTHON}")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(package "${SOURCE_DIR}/bindings/python")
# Every name under the package's directory, hidden and git-ignored ones too.
function(list_package output_variable)
  file(GLOB_RECURSE names LIST_DIRECTORIES true RELATIVE "${package}" "${package}/*")
  list(SORT names)
  set(${output_variable} "${names}" PARENT_SCOPE)
endfunction()
list_package(before)
execute_process(
  COMMAND ${PYTHON} -m pip install --quiet --no-build-isolation --no-deps --no-index --target "${WORK_DIR}/site"
          ./bindings/python
  WORKING_DIRECTORY "${SOURCE_DIR}"
  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "pip install ./bindings/python failed (it needs pip and setuptools; Debian: "
                      "python3-pip):\n${output}")
endif()
list_package(after)
if(NOT before STREQUAL after)
  message(FATAL_ERROR "pip install ./bindings/python changed ${package}: it held\n  ${before}\nand holds\n  ${after}")
endif()
set(check [=[
import sys
import numpy
import fastgemm
assert fastgemm.__file__.startswith(sys.argv[1]), fastgemm.__file__
a = numpy.random.default_rng(3).uniform(-1, 1, (257, 130)).astype(numpy.float32)
b = numpy.random.default_rng(4).uniform(-1, 1, (130, 190)).astype(numpy.float32)
try:
    c = fastgemm.matmul(a, b)
except fastgemm.Error as error:
    assert error.status == fastgemm.Status.NO_DEVICE, error
    print("installed package: fastgemm.matmul says", error)
else:
    expected = a.astype(numpy.float64) @ b.astype(numpy.float64)
    error = abs(c - expected).max() / abs(expected).max()
    assert error < 1e-5, error
    print("installed package: fastgemm.matmul computed on the GPU, error", error)
]=])
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${WORK_DIR}/site" "FASTGEMM_LIBRARY=${LIBRARY}"
          ${PYTHON} -B -c "${check}" "${WORK_DIR}/site"
  WORKING_DIRECTORY "${WORK_DIR}"
  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the installed package failed")
endif()
if(NOT output MATCHES "fastgemm.matmul (says FG_STATUS_NO_DEVICE|computed on the GPU)")
  message(FATAL_ERROR "the installed package neither computed nor said that there is no GPU")
endif()

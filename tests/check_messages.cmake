# SPDX-License-Identifier: Apache-2.0
# The C ABI puts the entry point's name before every message (capi/entry.cpp): a message written in lib/ that
# begins with a name of its own would read "fg_sgemm_host: fg_sgemm_host: ...". Run with cmake -P and SOURCE_DIR.
cmake_minimum_required(VERSION 3.24)
file(GLOB_RECURSE files "${SOURCE_DIR}/lib/*.cpp" "${SOURCE_DIR}/lib/*.hpp" "${SOURCE_DIR}/lib/*.cu"
     "${SOURCE_DIR}/lib/*.cuh")
set(found "")
foreach(file IN LISTS files)
  file(STRINGS "${file}" lines REGEX "\"fg_[a-z0-9_]+: ")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    list(APPEND found "${file}: ${line}")
  endforeach()
endforeach()
list(LENGTH files count)
if(count LESS 20)
  message(FATAL_ERROR "found only ${count} files under ${SOURCE_DIR}/lib")
endif()
if(found)
  list(JOIN found "\n" text)
  message(FATAL_ERROR "messages in lib/ that name their entry point, which capi/ names again:\n${text}")
endif()
message("${count} files of lib/: no message names its entry point")

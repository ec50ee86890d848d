# SPDX-License-Identifier: Apache-2.0
# fastgemm.pc finds its prefix from where it lies for every relative library directory GNUInstallDirs
# chooses: lib, lib64, and lib/<multiarch> (a /usr prefix on Debian), so that such an install, moved or
# not, gives pkg-config users its own include and library directories. Run with cmake -P and
# SOURCE_DIR, WORK_DIR, PKG_CONFIG (the pkg-config program).
foreach(variable IN ITEMS SOURCE_DIR WORK_DIR PKG_CONFIG)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "${variable} is not set")
  endif()
endforeach()
include("${SOURCE_DIR}/cmake/pkgconfig.cmake")
file(REMOVE_RECURSE "${WORK_DIR}")
set(PROJECT_DESCRIPTION "fastgemm")
set(PROJECT_VERSION 0.1.0)
set(FASTGEMM_PC_CUDA_CFLAGS "")
set(FASTGEMM_PC_LIBS "")
set(FASTGEMM_PC_LIBS_PRIVATE "")
foreach(libdir IN ITEMS lib lib64 lib/x86_64-linux-gnu)
  string(REPLACE "/" "-" tree "${libdir}")
  set(prefix "${WORK_DIR}/${tree}")
  set(CMAKE_INSTALL_LIBDIR "${libdir}")
  set(CMAKE_INSTALL_INCLUDEDIR include)
  fastgemm_pkgconfig_dirs("${CMAKE_INSTALL_LIBDIR}" "${CMAKE_INSTALL_INCLUDEDIR}")
  configure_file("${SOURCE_DIR}/fastgemm.pc.in" "${prefix}/${libdir}/pkgconfig/fastgemm.pc" @ONLY)
  foreach(query IN ITEMS --cflags --libs)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${prefix}/${libdir}/pkgconfig"
                            --unset=PKG_CONFIG_LIBDIR ${PKG_CONFIG} ${query} fastgemm
                    RESULT_VARIABLE result OUTPUT_VARIABLE output OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT result EQUAL 0)
      message(FATAL_ERROR "pkg-config ${query} fastgemm failed for the library directory ${libdir}")
    endif()
    # pkg-config may normalise the path; compare the directories it names with the real ones.
    string(REGEX MATCH "-[IL]([^ ]+)" flag "${output}")
    get_filename_component(named "${CMAKE_MATCH_1}" REALPATH)
    if(query STREQUAL "--cflags")
      get_filename_component(expected "${prefix}/include" REALPATH)
    else()
      get_filename_component(expected "${prefix}/${libdir}" REALPATH)
    endif()
    message("${libdir}: pkg-config ${query}: ${output}")
    if(NOT named STREQUAL expected)
      message(FATAL_ERROR "with the library directory ${libdir}, pkg-config ${query} names ${named}, "
                          "not ${expected}")
    endif()
  endforeach()
endforeach()

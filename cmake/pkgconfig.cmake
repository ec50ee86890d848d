# SPDX-License-Identifier: Apache-2.0
# fastgemm_pkgconfig_dirs(LIBDIR INCLUDEDIR): sets FASTGEMM_PC_PREFIX, FASTGEMM_PC_LIBDIR and
# FASTGEMM_PC_INCLUDEDIR, the first lines of fastgemm.pc, for a .pc file installed in LIBDIR/pkgconfig.
# Relative directories (GNUInstallDirs' defaults: lib, lib64, or lib/<multiarch> for a /usr prefix on
# Debian) make the file find its prefix from where it lies, however deep LIBDIR is, so that the install
# can move; absolute ones are written as they are, under CMAKE_INSTALL_PREFIX.
function(fastgemm_pkgconfig_dirs libdir includedir)
  if(IS_ABSOLUTE "${libdir}")
    set(prefix "${CMAKE_INSTALL_PREFIX}")
  else()
    file(RELATIVE_PATH up "/${libdir}/pkgconfig" "/")
    string(REGEX REPLACE "/+$" "" up "${up}")
    set(prefix "\${pcfiledir}/${up}")
  endif()
  foreach(kind IN ITEMS libdir includedir)
    if(IS_ABSOLUTE "${${kind}}")
      set(${kind} "${${kind}}")
    else()
      set(${kind} "\${prefix}/${${kind}}")
    endif()
  endforeach()
  set(FASTGEMM_PC_PREFIX "${prefix}" PARENT_SCOPE)
  set(FASTGEMM_PC_LIBDIR "${libdir}" PARENT_SCOPE)
  set(FASTGEMM_PC_INCLUDEDIR "${includedir}" PARENT_SCOPE)
endfunction()

# SPDX-License-Identifier: Apache-2.0
# The Python module as `cmake --install` installs it, in <prefix>/share/fastgemm/python: fastgemm.py (for
# PYTHONPATH), _fastgemm_paths.py beside it, and fastgemm-<version>-py3-none-any.whl, a wheel of the two.
# _fastgemm_paths.py records the install's libfastgemm.so.<major>, which fastgemm.py tries before the
# loader's search: a copy of the module that pip installed into a virtual environment, far from the
# prefix, still finds the library it was installed with. A wheel because pip installs one with no build
# backend and no index (`pip install --no-index`, offline, in any environment that has pip); written here,
# without Python, because the prefix is known only when the install runs (`cmake --install --prefix`).
#
# fastgemm_install_python_module(SOURCE_DIR STAGING_DIR VERSION SONAME LIBDIR DATADIR), called by the
# install script: the module's sources in SOURCE_DIR (bindings/python), a scratch directory of the build,
# the project's version, the library's file name (libfastgemm.so.0), and GNUInstallDirs' LIBDIR and DATADIR.

# Base64 with the URL-safe alphabet and no padding, of bytes given as hexadecimal digits: the form of a
# wheel's RECORD hashes.
function(_fastgemm_urlsafe_base64 hex output_variable)
  set(alphabet "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
  string(LENGTH "${hex}" length)
  set(encoded "")
  set(position 0)
  while(position LESS length)
    string(SUBSTRING "${hex}" ${position} 6 group)
    string(LENGTH "${group}" digits)
    math(EXPR position "${position} + ${digits}")
    math(EXPR characters "${digits} / 2 + 1")
    while(digits LESS 6)
      string(APPEND group "0")
      math(EXPR digits "${digits} + 1")
    endwhile()
    math(EXPR value "0x${group}")
    foreach(shift IN ITEMS 18 12 6 0)
      if(characters GREATER 0)
        math(EXPR index "(${value} >> ${shift}) & 63")
        string(SUBSTRING "${alphabet}" ${index} 1 character)
        string(APPEND encoded "${character}")
        math(EXPR characters "${characters} - 1")
      endif()
    endforeach()
  endwhile()
  set(${output_variable} "${encoded}" PARENT_SCOPE)
endfunction()

# A Python string literal of text: a prefix may hold quotes or backslashes.
function(_fastgemm_python_string text output_variable)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  set(${output_variable} "\"${text}\"" PARENT_SCOPE)
endfunction()

function(fastgemm_install_python_module source_dir staging_dir version soname libdir datadir)
  # The prefix the installed files will live in, where DESTDIR stages them. CPack makes a .deb that way
  # (CMAKE_INSTALL_PREFIX is /usr), but an archive's files it installs into a scratch directory of its
  # own, _CPack_Packages/<system>/<generator>/<name>, as the prefix: that archive may be unpacked
  # anywhere, so its module records nothing and finds the library near itself or through the loader.
  set(prefix "${CMAKE_INSTALL_PREFIX}")
  if(prefix MATCHES "/_CPack_Packages/")
    set(prefix "")
  endif()
  set(library "")
  if(IS_ABSOLUTE "${libdir}")
    set(library "${libdir}/${soname}")
  elseif(prefix)
    string(REGEX REPLACE "/+$" "" prefix "${prefix}")
    set(library "${prefix}/${libdir}/${soname}")
  endif()
  if(library)
    _fastgemm_python_string("${library}" library_literal)
  else()
    set(library_literal None)
  endif()

  file(REMOVE_RECURSE "${staging_dir}")
  file(MAKE_DIRECTORY "${staging_dir}")
  file(COPY_FILE "${source_dir}/fastgemm.py" "${staging_dir}/fastgemm.py")
  file(WRITE "${staging_dir}/_fastgemm_paths.py" "# SPDX-License-Identifier: Apache-2.0
\"\"\"Where the fastgemm install that this module belongs to put its shared library, recorded by that install
(None where it could not know, as in a relocatable archive). fastgemm.py tries it after the places near
itself and before the loader's search; FASTGEMM_LIBRARY still comes first.\"\"\"
LIBRARY = ${library_literal}
")

  # The wheel's metadata, from pyproject.toml (the version is the project's, which a test keeps equal).
  file(READ "${source_dir}/pyproject.toml" pyproject)
  string(REGEX MATCH "\ndescription = \"([^\"]*)\"" ignored "${pyproject}")
  set(summary "${CMAKE_MATCH_1}")
  string(REGEX MATCH "\nrequires-python = \"([^\"]*)\"" ignored "${pyproject}")
  set(requires_python "${CMAKE_MATCH_1}")
  set(metadata "Metadata-Version: 2.1\nName: fastgemm\nVersion: ${version}\nSummary: ${summary}\n")
  string(APPEND metadata "License: Apache-2.0\nRequires-Python: ${requires_python}\n")
  set(extras "")
  string(FIND "${pyproject}" "\n[project.optional-dependencies]\n" start)
  if(start GREATER -1)
    string(SUBSTRING "${pyproject}" ${start} -1 section)
    string(SUBSTRING "${section}" 1 -1 section)
    string(FIND "${section}" "\n[" end)
    string(SUBSTRING "${section}" 0 ${end} section)
    string(REGEX MATCHALL "\n[A-Za-z0-9_-]+ = \\[[^]\n]*\\]" extras "${section}")
  endif()
  foreach(extra IN LISTS extras)
    string(REGEX REPLACE "^\n([^ ]+) = .*" "\\1" name "${extra}")
    string(APPEND metadata "Provides-Extra: ${name}\n")
    string(REGEX MATCHALL "\"[^\"]+\"" requirements "${extra}")
    foreach(requirement IN LISTS requirements)
      string(REPLACE "\"" "" requirement "${requirement}")
      string(APPEND metadata "Requires-Dist: ${requirement}; extra == \"${name}\"\n")
    endforeach()
  endforeach()
  set(info "fastgemm-${version}.dist-info")
  file(WRITE "${staging_dir}/${info}/METADATA" "${metadata}")
  file(WRITE "${staging_dir}/${info}/WHEEL"
       "Wheel-Version: 1.0\nGenerator: fastgemm (cmake --install)\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
  file(WRITE "${staging_dir}/${info}/top_level.txt" "_fastgemm_paths\nfastgemm\n")
  set(members fastgemm.py _fastgemm_paths.py ${info}/METADATA ${info}/WHEEL ${info}/top_level.txt)
  set(record "")
  foreach(member IN LISTS members)
    file(SHA256 "${staging_dir}/${member}" digest)
    _fastgemm_urlsafe_base64("${digest}" digest)
    file(SIZE "${staging_dir}/${member}" size)
    string(APPEND record "${member},sha256=${digest},${size}\n")
  endforeach()
  string(APPEND record "${info}/RECORD,,\n")
  file(WRITE "${staging_dir}/${info}/RECORD" "${record}")
  list(APPEND members ${info}/RECORD)

  set(wheel "fastgemm-${version}-py3-none-any.whl")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E tar cf "${wheel}" --format=zip ${members}
                  WORKING_DIRECTORY "${staging_dir}" RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "fastgemm: could not write the Python wheel ${staging_dir}/${wheel}")
  endif()

  if(IS_ABSOLUTE "${datadir}")
    set(destination "${datadir}/fastgemm/python")
  else()
    set(destination "${CMAKE_INSTALL_PREFIX}/${datadir}/fastgemm/python")
  endif()
  file(INSTALL DESTINATION "${destination}" TYPE FILE PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
       FILES "${staging_dir}/fastgemm.py" "${staging_dir}/_fastgemm_paths.py" "${staging_dir}/${wheel}")
  # file(INSTALL) lists what it installs in this variable, which becomes install_manifest.txt: the
  # install script's, not this function's.
  set(CMAKE_INSTALL_MANIFEST_FILES "${CMAKE_INSTALL_MANIFEST_FILES}" PARENT_SCOPE)
endfunction()

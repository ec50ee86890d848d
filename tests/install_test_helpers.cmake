# SPDX-License-Identifier: Apache-2.0
# What the install tests share, included by their cmake -P scripts.

# Fails unless every named variable is set.
function(require_variables)
  foreach(variable IN LISTS ARGN)
    if(NOT DEFINED ${variable})
      message(FATAL_ERROR "${variable} is not set")
    endif()
  endforeach()
endfunction()

# run_in(DIRECTORY COMMAND...): runs the command there, shows its output, fails the test when it fails,
# and leaves the output in run_output.
function(run_in directory)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY "${directory}"
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  message("${output}")
  if(NOT result EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "failed (${result}): ${command}")
  endif()
  set(run_output "${output}" PARENT_SCOPE)
endfunction()

function(run)
  run_in("${CMAKE_CURRENT_BINARY_DIR}" ${ARGN})
  set(run_output "${run_output}" PARENT_SCOPE)
endfunction()

# Runs a program built against fastgemm in an empty environment, so that it finds its libraries the way
# it would on a user's machine. It succeeds, or, without a GPU, fails only by saying that fastgemm found
# no device.
function(run_program program)
  execute_process(COMMAND env -i ${program} ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output
                  ERROR_VARIABLE output)
  message("${program}: ${output}")
  if(NOT result EQUAL 0 AND NOT output MATCHES "FG_STATUS_NO_DEVICE")
    message(FATAL_ERROR "failed (${result}): ${program}")
  endif()
endfunction()

# Writes the body of the first ```LANGUAGE block of README (README.md or a guide of docs/) to FILE.
function(readme_example readme language file)
  file(READ "${readme}" text)
  string(REGEX MATCH "```${language}\n([^`]*)```" block "${text}")
  if(NOT CMAKE_MATCH_1)
    message(FATAL_ERROR "no ${language} example found in ${readme}")
  endif()
  file(WRITE "${file}" "${CMAKE_MATCH_1}")
endfunction()

# Sets OUTPUT_VARIABLE to the first ```LANGUAGE block of README's section HEADING ("## Fortran").
function(readme_section_block readme heading language output_variable)
  file(READ "${readme}" text)
  string(PREPEND text "\n")  # a heading on the file's first line
  string(FIND "${text}" "\n${heading}\n" start)
  if(start EQUAL -1)
    message(FATAL_ERROR "no section '${heading}' in ${readme}")
  endif()
  string(SUBSTRING "${text}" ${start} -1 text)
  string(REGEX MATCH "^\n${heading}\n([^#]|#[^#])*```${language}\n([^`]*)```" block "${text}")
  if(NOT CMAKE_MATCH_2)
    message(FATAL_ERROR "no ${language} block in section '${heading}' of ${readme}")
  endif()
  set(${output_variable} "${CMAKE_MATCH_2}" PARENT_SCOPE)
endfunction()

# Sets OUTPUT_VARIABLE to the build commands in the comment that opens a sample: the lines indented by
# three spaces after the comment's marker ("*", "//" or "!"), a line ending in "\" continued on the next.
function(sample_build_commands sample output_variable)
  file(READ "${sample}" text)
  string(REGEX MATCH "^([ ]?(/\\*|\\*|//|!)[^\n]*\n)*" comment "${text}")
  string(REGEX REPLACE "\\\\\n ?(\\*|//|!) +" " " comment "${comment}")
  string(REGEX MATCHALL "(^|\n) ?(\\*|//|!)   +[^\n]*" lines "${comment}")
  set(commands "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^\n? ?(\\*|//|!)   +" "" line "${line}")
    string(APPEND commands "${line}\n")
  endforeach()
  if(NOT commands)
    message(FATAL_ERROR "no build commands in the first comment of ${sample}")
  endif()
  set(${output_variable} "${commands}" PARENT_SCOPE)
endfunction()

# run_shell(DIRECTORY PREFIX COMMANDS): runs shell COMMANDS as documented for /opt/fastgemm, with
# fastgemm installed in PREFIX instead; fails if they fail or if a compiler warns.
function(run_shell directory prefix commands)
  string(REPLACE "/opt/fastgemm" "${prefix}" commands "${commands}")
  message("in ${directory}:\n${commands}")
  run_in("${directory}" sh -e -c "${commands}")
  if(run_output MATCHES "warning")
    message(FATAL_ERROR "the commands above warn")
  endif()
endfunction()

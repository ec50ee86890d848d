# What the install tests (consumer/, bindings/) share, included by their cmake -P scripts.

# Fails unless every named variable is set.
function(require_variables)
  foreach(variable IN LISTS ARGN)
    if(NOT DEFINED ${variable})
      message(FATAL_ERROR "${variable} is not set")
    endif()
  endforeach()
endfunction()

# Runs a command, shows its output, and fails the test when it fails.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  message("${output}")
  if(NOT result EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "failed (${result}): ${command}")
  endif()
endfunction()

# Writes the body of README's first ```LANGUAGE block to FILE.
function(readme_example readme language file)
  file(READ "${readme}" text)
  string(REGEX MATCH "```${language}\n([^`]*)```" block "${text}")
  if(NOT CMAKE_MATCH_1)
    message(FATAL_ERROR "no ${language} example found in ${readme}")
  endif()
  file(WRITE "${file}" "${CMAKE_MATCH_1}")
endfunction()

# Empties WORK_DIR and installs FASTGEMM_BUILD_DIR into WORK_DIR/prefix, which PREFIX_VARIABLE then names.
function(install_into_fresh_prefix prefix_variable)
  file(REMOVE_RECURSE "${WORK_DIR}")
  run(${CMAKE_COMMAND} --install "${FASTGEMM_BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
  set(${prefix_variable} "${WORK_DIR}/prefix" PARENT_SCOPE)
endfunction()

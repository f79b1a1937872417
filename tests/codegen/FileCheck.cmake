# Generated-code regression tests in LLVM FileCheck style.
#
# Pass tests (MLIR style) live in tests/passes (<pass>_<what>.sdfg/.check, or a .check naming another
# input with `// INPUT: file.sdfg`): FileCheck over the IR that
# `--print-after=PASS` prints (// STDOUT) or over a pass's diagnostics (// EXPECT-ERROR); they are
# named filecheck.passes.<name>.
#
# Each test is a pair tests/codegen/cpu/<name>.sdfg (a small hand-written SDFG) and
# tests/codegen/cpu/<name>.check (the FileCheck directives for the generated <program>.cpp, or for
# sdfc's stderr when the check file starts with `// EXPECT-ERROR`). run_filecheck.sh runs
# `sdfc compile <name>.sdfg --emit-source <tmp>` (no C++ compiler) and then FileCheck.
#
# Included from tests/CMakeLists.txt: include(codegen/FileCheck.cmake)

find_program(SDFC_FILECHECK NAMES FileCheck-14 FileCheck PATHS /usr/lib/llvm-14/bin)
find_program(SDFC_BASH NAMES bash)

if(NOT SDFC_FILECHECK OR NOT SDFC_BASH)
  message(STATUS "FileCheck (or bash) not found: the filecheck.* generated-code tests are not added")
else()
  set(_sdfc_fc_dir "${CMAKE_CURRENT_LIST_DIR}")
  file(GLOB _sdfc_fc_checks CONFIGURE_DEPENDS "${_sdfc_fc_dir}/cpu/*.check" "${_sdfc_fc_dir}/cuda/*.check" "${_sdfc_fc_dir}/hip/*.check"
       "${_sdfc_fc_dir}/../passes/*.check")
  list(SORT _sdfc_fc_checks)
  foreach(_check IN LISTS _sdfc_fc_checks)
    get_filename_component(_stem "${_check}" NAME_WLE)
    get_filename_component(_target_dir "${_check}" DIRECTORY)
    get_filename_component(_target "${_target_dir}" NAME)
    set(_input "${_target_dir}/${_stem}.sdfg")
    # `// INPUT: other.sdfg` (in the check file's folder): several checks of one input, e.g. one per
    # pass over the same program.
    file(STRINGS "${_check}" _input_line REGEX "^// INPUT: " LIMIT_COUNT 1)
    if(_input_line)
      string(REGEX REPLACE "^// INPUT: *([^ ]+).*$" "\\1" _input_name "${_input_line}")
      set(_input "${_target_dir}/${_input_name}")
    endif()
    if(NOT EXISTS "${_input}")
      message(WARNING "FileCheck test ${_check} has no input ${_input}; the test will fail")
    endif()
    add_test(NAME filecheck.${_target}.${_stem}
      COMMAND ${SDFC_BASH} ${_sdfc_fc_dir}/run_filecheck.sh
              $<TARGET_FILE:sdfc_exe> ${SDFC_FILECHECK} ${_input} ${_check})
    set_tests_properties(filecheck.${_target}.${_stem} PROPERTIES LABELS "filecheck;codegen" TIMEOUT 60)
  endforeach()
  unset(_check)
  unset(_stem)
  unset(_input)
  unset(_input_line)
  unset(_input_name)
  unset(_sdfc_fc_checks)
  unset(_sdfc_fc_dir)
endif()

# Helpers shared by every folder's CMakeLists.txt.

# Where the shipped presets (models, machines, scenarios) live. The binaries look here unless the
# EXASIM_DATA_DIR environment variable points elsewhere.
set(EXASIM_DATA_DIR "${PROJECT_SOURCE_DIR}" CACHE PATH "Root of exasim's presets (configs/, topologies/presets/)")

function(exasim_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow)
  if(EXASIM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# exasim_library(NAME SOURCES... LIBS...) -> target exasim_<name>, alias exasim::<name>
function(exasim_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_library(exasim_${name} STATIC ${ARG_SOURCES})
  add_library(exasim::${name} ALIAS exasim_${name})
  target_compile_features(exasim_${name} PUBLIC cxx_std_20)
  target_include_directories(exasim_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(exasim_${name} PUBLIC ${ARG_LIBS})
  exasim_warnings(exasim_${name})
  # A library's sources compiled together: the json and standard headers parsed once per unity source
  # instead of once per file (exasim from scratch: 272 CPU-s instead of 617). A file whose helpers share
  # a name with a sibling's (an extension module: schemes, collective algorithms) sets
  # SKIP_UNITY_BUILD_INCLUSION. Test binaries stay one object per file.
  set_target_properties(exasim_${name} PROPERTIES UNITY_BUILD ${EXASIM_UNITY_BUILD})
endfunction()

# exasim_tests(NAME SOURCES... LIBS...): one Catch2 binary per folder; the tags [unit], [integration]
# and [slow] become CTest labels, so `ctest -L unit` selects by kind (the MPI tests, plain add_test
# ones, carry the label mpi).
function(exasim_tests name)
  if(NOT EXASIM_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  # Catch2's main is compiled once for all test binaries (it is the slowest file to compile).
  if(NOT TARGET exasim_catch_main)
    add_library(exasim_catch_main STATIC ${PROJECT_SOURCE_DIR}/cmake/catch_main.cpp)
    target_link_libraries(exasim_catch_main PUBLIC Catch2::Catch2)
    target_compile_features(exasim_catch_main PUBLIC cxx_std_20)
  endif()
  add_executable(${name}_tests ${ARG_SOURCES})
  set_target_properties(${name}_tests PROPERTIES UNITY_BUILD ${EXASIM_TESTS_UNITY_BUILD})
  target_link_libraries(${name}_tests PRIVATE ${ARG_LIBS} exasim_catch_main)
  target_compile_definitions(${name}_tests PRIVATE EXASIM_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}")
  exasim_warnings(${name}_tests)
  if(EXASIM_TESTS_OPTIMIZE)
    target_compile_options(${name}_tests PRIVATE ${EXASIM_TESTS_OPTIMIZE})
  endif()
  # Refuse test cases ctest would never run (a ';' in the name, no known tag): the link step fails.
  add_custom_command(TARGET ${name}_tests POST_BUILD
                     COMMAND ${PROJECT_SOURCE_DIR}/cmake/check_test_names.sh $<TARGET_FILE:${name}_tests> VERBATIM)
  # And should one slip through, its CTest entry fails instead of passing with "No tests ran".
  foreach(tag unit integration slow)
    catch_discover_tests(${name}_tests TEST_SPEC "[${tag}]" TEST_PREFIX "${name}:"
                         PROPERTIES LABELS ${tag} ENVIRONMENT "EXASIM_DATA_DIR=${PROJECT_SOURCE_DIR}"
                                    FAIL_REGULAR_EXPRESSION "No tests ran")
  endforeach()
endfunction()

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

# Precompiled headers. nlohmann/json costs about 2.9 s and Catch2 about 1.9 s of every translation unit
# that includes them (g++ 12, -O3, on the 2-core build host), and most of ours include json through
# the scenario and report headers. One header is compiled once for the libraries and once for the test
# binaries, and every target reuses it (REUSE_FROM: same flags, so the .gch stays valid). A target whose
# flags differ would fall back to parsing the headers, never to a wrong build.
option(EXASIM_PCH "Precompile nlohmann/json and Catch2 once for every target" ON)
set(EXASIM_PCH_HEADERS <nlohmann/json.hpp> <algorithm> <cstdint> <functional> <map> <memory> <optional>
                       <string> <string_view> <variant> <vector>)

# The target whose precompiled header `kind` (lib or test) targets reuse; made on first use.
function(exasim_pch_target kind out)
  set(${out} exasim_pch_${kind} PARENT_SCOPE)
  if(TARGET exasim_pch_${kind})
    return()
  endif()
  add_library(exasim_pch_${kind} STATIC ${PROJECT_SOURCE_DIR}/cmake/pch_anchor.cpp)
  target_compile_features(exasim_pch_${kind} PUBLIC cxx_std_20)
  target_include_directories(exasim_pch_${kind} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(exasim_pch_${kind} PUBLIC nlohmann_json::nlohmann_json)
  exasim_warnings(exasim_pch_${kind})
  if(kind STREQUAL "test")
    target_link_libraries(exasim_pch_${kind} PUBLIC Catch2::Catch2)
    target_compile_definitions(exasim_pch_${kind} PRIVATE EXASIM_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}")
    target_precompile_headers(exasim_pch_${kind} PRIVATE ${EXASIM_PCH_HEADERS} <catch2/catch.hpp>)
  else()
    target_precompile_headers(exasim_pch_${kind} PRIVATE ${EXASIM_PCH_HEADERS})
  endif()
endfunction()

function(exasim_use_pch target kind)
  if(EXASIM_PCH)
    exasim_pch_target(${kind} pch)
    target_precompile_headers(${target} REUSE_FROM ${pch})
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
  exasim_use_pch(exasim_${name} lib)
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
  target_link_libraries(${name}_tests PRIVATE ${ARG_LIBS} exasim_catch_main)
  target_compile_definitions(${name}_tests PRIVATE EXASIM_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}")
  exasim_warnings(${name}_tests)
  exasim_use_pch(${name}_tests test)
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

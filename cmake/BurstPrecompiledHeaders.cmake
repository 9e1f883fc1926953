# Precompiled headers: nlohmann/json, fmt (and Catch2 in tests) cost several CPU seconds to
# parse and instantiate in every file that includes them, most of a clean build on a 2-core CI
# machine, so they are precompiled. With GCC one precompiled header serves every library and
# one every test (REUSE_FROM two small host targets): a header per target was ~110 MB each, 4.6
# GB a release tree and enough, with the sanitizer and fuzz trees, to fill CI's disk. A target
# whose flags differ from its host's (GCC checks) falls back to parsing the headers: slower,
# never wrong. Clang refuses a mismatched PCH outright, so there each target keeps its own.
# BURST_PCH=OFF turns it off (e.g. to check that every file includes what it uses).
option(BURST_PCH "Precompile the heavy third-party headers" ON)

set(BURST_PCH_HEADERS <nlohmann/json.hpp> <fmt/format.h> <string> <vector> <map> <memory> <functional>)

# Every library and executable defined in `dir` and below, except Catch2's own mains (they
# define CATCH_CONFIG_MAIN / _RUNNER before including Catch2, which a forced header would
# defeat) and the fuzz targets (built by clang with their own flags).
function(burst_collect_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    burst_collect_targets(${sub} more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# A target that exists only to compile a shared header: one empty source file, linked to what
# every consumer links, warnings included (-Wpedantic changes GCC's predefined macros, and a
# header built without it is refused by every target built with it). Executables compile with
# -fPIE and libraries with -fPIC, which GCC also checks, so each kind has its own host.
function(burst_pch_host name kind)
  set(source ${CMAKE_BINARY_DIR}/${name}.cpp)
  if(NOT EXISTS ${source})
    file(WRITE ${source} "// Host of a shared precompiled header (cmake/BurstPrecompiledHeaders.cmake).\n")
  endif()
  add_library(${name} STATIC ${source})
  target_link_libraries(${name} PRIVATE burst::warnings nlohmann_json::nlohmann_json fmt::fmt ${ARGN})
  set_target_properties(${name} PROPERTIES UNITY_BUILD OFF)
  if(kind STREQUAL "exe" AND CMAKE_POSITION_INDEPENDENT_CODE)
    set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
    target_compile_options(${name} PRIVATE -fPIE)
  endif()
endfunction()

function(burst_precompile_headers)
  if(NOT BURST_PCH)
    return()
  endif()
  burst_collect_targets(${PROJECT_SOURCE_DIR} targets)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|EXECUTABLE)$" OR t MATCHES "^(fuzz_|burst_fuzz_)")
      continue()
    endif()
    get_target_property(source_dir ${t} SOURCE_DIR)
    set(headers ${BURST_PCH_HEADERS})
    set(extra)
    set(flavour base)
    if(source_dir MATCHES "/tests(/|$)")
      list(APPEND headers <catch2/catch.hpp>)
      set(extra Catch2::Catch2)
      set(flavour test)
    endif()
    if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      target_precompile_headers(${t} PRIVATE ${headers})
      continue()
    endif()
    set(kind lib)
    if(type STREQUAL "EXECUTABLE")
      set(kind exe)
    endif()
    set(host burst_pch_${flavour}_${kind})
    if(NOT TARGET ${host})
      burst_pch_host(${host} ${kind} ${extra})
      target_precompile_headers(${host} PRIVATE ${headers})
      if(flavour STREQUAL "test")
        target_compile_options(${host} PRIVATE ${BURST_TEST_CODE_OPTIONS})  # as tests/ compiles
      endif()
    endif()
    target_precompile_headers(${t} REUSE_FROM ${host})
  endforeach()
endfunction()

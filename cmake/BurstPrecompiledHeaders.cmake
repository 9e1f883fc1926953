# Precompiled headers: nlohmann/json, fmt (and Catch2 in tests) cost several CPU seconds to
# parse and instantiate in every file that includes them, most of a clean build on a 2-core CI
# machine. Each library and executable below the source tree precompiles them once.
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
    if(source_dir MATCHES "/tests(/|$)")
      target_precompile_headers(${t} PRIVATE ${BURST_PCH_HEADERS} <catch2/catch.hpp>)
    else()
      target_precompile_headers(${t} PRIVATE ${BURST_PCH_HEADERS})
    endif()
  endforeach()
endfunction()

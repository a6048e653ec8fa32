# Precompiled LibTorch for the translation units that include it.
#
# Parsing <torch/torch.h> is about half of a LibTorch unit's compile time:
# ppo_learner.cc takes 19 s, 11 s with the header precompiled (2-core AMD
# EPYC, docs/benchmarks/build.md). graphworld_torch_pch(TARGET) precompiles
# it once for the target and uses it only in the target's sources that reach
# LibTorch, directly or through a project header; the others skip it, since
# loading the 600 MB header costs a unit that does not need it about 4 s.
# -DGRAPHWORLD_PCH=OFF turns it off (results are the same either way).
option(GRAPHWORLD_PCH "Precompile <torch/torch.h> for the LibTorch translation units" ON)

if(GRAPHWORLD_PCH AND CMAKE_CXX_COMPILER_LAUNCHER)
  # ccache caches units built with a precompiled header only when told the
  # header's timestamps and __TIME__ macros may be ignored (its manual,
  # "Precompiled headers"); -fpch-preprocess lets its preprocessor mode see
  # the header too.
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      ${CMAKE_CXX_COMPILER_LAUNCHER})
endif()

# Whether #include lines `lines` reach LibTorch: <torch/...> itself, or one
# of the project headers in `torch_headers`.
function(_graphworld_reaches_torch lines torch_headers out)
  set(${out} FALSE PARENT_SCOPE)
  if(lines MATCHES "#include <torch/")
    set(${out} TRUE PARENT_SCOPE)
    return()
  endif()
  foreach(t IN LISTS torch_headers)
    string(FIND "${lines}" "\"${t}\"" at)
    if(NOT at EQUAL -1)
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

# The project headers that include LibTorch, directly or through another
# project header (a fixpoint over their #include lines).
function(_graphworld_torch_headers out)
  file(GLOB_RECURSE headers RELATIVE "${PROJECT_SOURCE_DIR}" CONFIGURE_DEPENDS
       "${PROJECT_SOURCE_DIR}/common/*.h" "${PROJECT_SOURCE_DIR}/env/*.h" "${PROJECT_SOURCE_DIR}/learner/*.h"
       "${PROJECT_SOURCE_DIR}/worldmodel/*.h" "${PROJECT_SOURCE_DIR}/actors/*.h" "${PROJECT_SOURCE_DIR}/launch/*.h"
       "${PROJECT_SOURCE_DIR}/tests/*.h")
  foreach(h IN LISTS headers)
    file(STRINGS "${PROJECT_SOURCE_DIR}/${h}" includes_${h} REGEX "^#include [<\"]")
  endforeach()
  set(torch_headers "")
  set(changed TRUE)
  while(changed)
    set(changed FALSE)
    foreach(h IN LISTS headers)
      if(NOT h IN_LIST torch_headers)
        _graphworld_reaches_torch("${includes_${h}}" "${torch_headers}" reaches)
        if(reaches)
          list(APPEND torch_headers "${h}")
          set(changed TRUE)
        endif()
      endif()
    endforeach()
  endwhile()
  set(${out} "${torch_headers}" PARENT_SCOPE)
endfunction()

function(graphworld_torch_pch target)
  if(NOT GRAPHWORLD_PCH)
    return()
  endif()
  # Scanned once per configure, by the first target that asks.
  get_property(scanned GLOBAL PROPERTY GRAPHWORLD_TORCH_HEADERS SET)
  if(NOT scanned)
    _graphworld_torch_headers(torch_headers)
    set_property(GLOBAL PROPERTY GRAPHWORLD_TORCH_HEADERS "${torch_headers}")
  endif()
  get_property(torch_headers GLOBAL PROPERTY GRAPHWORLD_TORCH_HEADERS)
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(skipped "")
  set(using 0)
  foreach(s IN LISTS sources)
    if(NOT s MATCHES "\\.cc$")
      continue()
    endif()
    if(IS_ABSOLUTE "${s}")
      set(path "${s}")
    else()
      set(path "${source_dir}/${s}")
    endif()
    file(STRINGS "${path}" lines REGEX "^#include [<\"]")
    _graphworld_reaches_torch("${lines}" "${torch_headers}" uses_torch)
    if(uses_torch)
      math(EXPR using "${using} + 1")
    else()
      list(APPEND skipped "${s}")
    endif()
  endforeach()
  # Precompiling costs about two units' compile (30-40 s): worth it from
  # five units (learner_tests' four came out even).
  if(using LESS 5)
    return()
  endif()
  target_precompile_headers(${target} PRIVATE <torch/torch.h>)
  target_compile_options(${target} PRIVATE -fpch-preprocess)
  if(skipped)
    set_source_files_properties(${skipped} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  endif()
  message(STATUS "graphworld: ${target} precompiles <torch/torch.h> for ${using} units")
endfunction()

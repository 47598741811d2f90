# The layering rule, checked on every quoted #include of the library sources and the public
# headers (run by CTest as `layering`: cmake -DSOURCE_DIR=<repo> -P CheckLayering.cmake).
#
#   base <- ir <- compiler;  base <- ir <- loader <- runtime <- stats <- tools
#
# A module includes its own folder's files by bare name, and public headers (pto/...) of its own
# layer or a layer below it; never a file from another module's folder. A public header includes
# only public headers of its own layer or below. Shared code lives in base/, public contracts in
# include/pto/.
cmake_minimum_required(VERSION 3.25)

# The layer each public header belongs to. A new header must be added here.
set(layer_of_status.h base)
set(layer_of_arena.h base)
set(layer_of_types.h base)
set(layer_of_base.h base)
set(layer_of_export.h base)
set(layer_of_mathf.h base)
set(layer_of_ir.h ir)
set(layer_of_ir_builder.h ir)
set(layer_of_signature.h ir)
set(layer_of_compile_api.h ir)
set(layer_of_workdir.h ir)
# The ABI between generated code and the runtime: plain data on base types, seen by the
# compiler (which emits against it) and the loader and runtime (which implement it).
set(layer_of_kernel_abi.h ir)
set(layer_of_orch_abi.h ir)
set(layer_of_pto_orchestration_api.h ir)
set(layer_of_dist_abi.h ir)
set(layer_of_host_abi.h ir)
set(layer_of_compiler.h compiler)
set(layer_of_loader.h loader)
set(layer_of_manifest.h loader)
set(layer_of_cache.h loader)
set(layer_of_runtime.h runtime)
set(layer_of_dist.h runtime)
set(layer_of_bench.h stats)
set(layer_of_dist_bench.h stats)

# What each module (or public-header layer) may see.
set(sees_base base)
set(sees_ir base ir)
set(sees_compiler base ir compiler)
set(sees_loader base ir loader)
set(sees_runtime base ir loader runtime)
set(sees_stats base ir loader runtime stats)
set(sees_tools base ir compiler loader runtime stats)

set(errors "")
function(check_file file module public)
  file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
  get_filename_component(dir "${file}" DIRECTORY)
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" inc "${line}")
    if(inc MATCHES "^pto/([^/]+)$")
      set(h "${CMAKE_MATCH_1}")
      if(NOT DEFINED layer_of_${h})
        list(APPEND errors "${rel}: includes pto/${h}, which has no layer in cmake/CheckLayering.cmake")
      elseif(NOT "${layer_of_${h}}" IN_LIST sees_${module})
        list(APPEND errors "${rel}: ${module} includes pto/${h} of layer ${layer_of_${h}}, above or beside it")
      endif()
    elseif(public)
      list(APPEND errors "${rel}: a public header includes \"${inc}\": only pto/ headers")
    elseif(inc MATCHES "/" OR NOT EXISTS "${dir}/${inc}")
      list(APPEND errors "${rel}: includes \"${inc}\", which is not a file of its own folder")
    endif()
  endforeach()
  set(errors "${errors}" PARENT_SCOPE)
endfunction()

foreach(module base ir compiler loader runtime stats tools)
  file(GLOB files "${SOURCE_DIR}/${module}/*.c" "${SOURCE_DIR}/${module}/*.cpp"
    "${SOURCE_DIR}/${module}/*.h")
  foreach(f IN LISTS files)
    check_file("${f}" ${module} FALSE)
  endforeach()
endforeach()
file(GLOB headers "${SOURCE_DIR}/include/pto/*.h")
foreach(f IN LISTS headers)
  get_filename_component(h "${f}" NAME)
  if(NOT DEFINED layer_of_${h})
    list(APPEND errors "include/pto/${h}: has no layer in cmake/CheckLayering.cmake")
  else()
    check_file("${f}" ${layer_of_${h}} TRUE)
  endif()
endforeach()

if(errors)
  list(JOIN errors "\n" text)
  message(FATAL_ERROR "layering rule broken:\n${text}")
endif()
message(STATUS "layering: ok")

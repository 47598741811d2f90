# pto_add_module(NAME [PUBLIC_DEPS ...] [PRIVATE_DEPS ...]): every .c/.cpp file of the calling
# folder compiled once into the object library NAME_objects, and the shared library NAME built
# from those objects. Symbols are hidden by default: only declarations marked PTO_API
# (pto/export.h) leave the shared library, so internals (pto__*) are never ABI. Tests link the
# objects (pto_test_objects in tests/), not the shared library, so they can reach internals.
# Compile definitions a module needs go on NAME_objects.
function(pto_add_module name)
  cmake_parse_arguments(M "" "" "PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.c ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  add_library(${name}_objects OBJECT ${srcs})
  target_include_directories(${name}_objects
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  # The objects see their dependencies' headers and flags; linking is the shared library's job.
  foreach(dep ${M_PUBLIC_DEPS} ${M_PRIVATE_DEPS})
    if(TARGET ${dep})
      target_include_directories(${name}_objects PRIVATE
        $<TARGET_PROPERTY:${dep},INTERFACE_INCLUDE_DIRECTORIES>)
      target_compile_definitions(${name}_objects PRIVATE
        $<TARGET_PROPERTY:${dep},INTERFACE_COMPILE_DEFINITIONS>)
    endif()
  endforeach()
  set_target_properties(${name}_objects PROPERTIES C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  add_library(${name} SHARED $<TARGET_OBJECTS:${name}_objects>)
  target_include_directories(${name}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${name} PUBLIC ${M_PUBLIC_DEPS} PRIVATE ${M_PRIVATE_DEPS})
  # Versioned: libpto_X.so.MAJOR.MINOR.PATCH with the SONAME libpto_X.so.MAJOR (and the
  # libpto_X.so link to build against), so an application never loads another major version.
  set_target_properties(${name} PROPERTIES INSTALL_RPATH "$ORIGIN" VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR})
  # A call from the library to an exported function of its own binds at link time, not through
  # the dynamic loader at its first call (pto run of a cached program resolved ~80 such symbols
  # lazily; nothing here is meant to be interposed).
  target_link_options(${name} PRIVATE "LINKER:-Bsymbolic-functions")
  # Only pto_* symbols leave the library (test exported_symbols), linker-made ones included.
  target_link_options(${name} PRIVATE "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/pto-exports.map")
  set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/pto-exports.map)
  # Install components (CMakeLists.txt): the compiler library is `compiler`, the rest `runtime`.
  if(name STREQUAL "pto_compiler")
    set(component compiler)
  else()
    set(component runtime)
  endif()
  install(TARGETS ${name} EXPORT ptoTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    COMPONENT ${component})
  # What a test executable must link besides the objects (tests/CMakeLists.txt).
  set_property(GLOBAL APPEND PROPERTY PTO_MODULE_DEPS ${M_PRIVATE_DEPS})
endfunction()

# pto_add_test_objects(NAME): NAME_objects once more, as NAME_test_objects, with the same
# sources, include directories, definitions, options and visibility, and PTO_TEST_HOOKS defined:
# the module's test hooks, which the tests link and the library that ships never has. Called
# after the module's last change to NAME_objects (the properties are copied at configure time).
function(pto_add_test_objects name)
  get_target_property(sources ${name}_objects SOURCES)
  add_library(${name}_test_objects OBJECT ${sources})
  foreach(prop INCLUDE_DIRECTORIES COMPILE_DEFINITIONS C_VISIBILITY_PRESET COMPILE_OPTIONS)
    get_target_property(value ${name}_objects ${prop})
    if(value)
      set_target_properties(${name}_test_objects PROPERTIES ${prop} "${value}")
    endif()
  endforeach()
  target_compile_definitions(${name}_test_objects PRIVATE PTO_TEST_HOOKS)
endfunction()

# pto_add_module(NAME DIR [DEPS ...]): a shared library from every .c/.cpp file of DIR.
function(pto_add_module name)
  cmake_parse_arguments(M "" "" "PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.c ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  add_library(${name} SHARED ${srcs})
  target_include_directories(${name}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${M_PUBLIC_DEPS} PRIVATE ${M_PRIVATE_DEPS})
  set_target_properties(${name} PROPERTIES INSTALL_RPATH "$ORIGIN" C_VISIBILITY_PRESET default)
  install(TARGETS ${name} EXPORT ptoTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()

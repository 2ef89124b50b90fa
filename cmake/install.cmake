# Installation: the libraries, the `krill` command, the headers, a CMake package
# (find_package(krill) -> krill::krill, krill::krill_static) and a pkg-config file.
include(CMakePackageConfigHelpers)

set(KRILL_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/krill" CACHE STRING
    "Where krillConfig.cmake is installed, relative to the prefix")

set_target_properties(krill_cli PROPERTIES EXPORT_NAME krill_cli)
install(TARGETS krill krill_static krill_cli EXPORT krillTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES include/krill.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(KRILL_HAVE_MPI)
  install(DIRECTORY include/krill DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    FILES_MATCHING PATTERN "*.h")
else()   # krill/mpi.h declares what only a build with MPI has
  install(DIRECTORY include/krill DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    FILES_MATCHING PATTERN "*.h" PATTERN "mpi.h" EXCLUDE)
endif()
install(EXPORT krillTargets NAMESPACE krill:: DESTINATION ${KRILL_INSTALL_CMAKEDIR})

configure_package_config_file(cmake/krillConfig.cmake.in
  "${PROJECT_BINARY_DIR}/krillConfig.cmake" INSTALL_DESTINATION ${KRILL_INSTALL_CMAKEDIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/krillConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/krillConfig.cmake"
  "${PROJECT_BINARY_DIR}/krillConfigVersion.cmake" DESTINATION ${KRILL_INSTALL_CMAKEDIR})

# pkg-config: the prefix is found from the .pc file's own place (${pcfiledir}), so the
# installed tree can be moved and `cmake --install --prefix` works.
set(KRILL_PC_LIBS_PRIVATE "${OpenMP_C_FLAGS} -lm")
if(KRILL_HAVE_ZLIB)
  string(APPEND KRILL_PC_LIBS_PRIVATE " -lz")
endif()
if(KRILL_HAVE_CUDA)
  string(APPEND KRILL_PC_LIBS_PRIVATE
         " -L${CUDAToolkit_LIBRARY_DIR} -lcudart -lcublas -lcusparse")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(KRILL_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(KRILL_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH KRILL_PC_UP "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REGEX REPLACE "/$" "" KRILL_PC_UP "${KRILL_PC_UP}")
  set(KRILL_PC_PREFIX "\${pcfiledir}/${KRILL_PC_UP}")
  set(KRILL_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(KRILL_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(KRILL_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
if(KRILL_HAVE_MPI)
  foreach(lib ${MPI_C_LIBRARIES})
    string(APPEND KRILL_PC_LIBS_PRIVATE " ${lib}")
  endforeach()
endif()
if(KRILL_HAVE_METIS)
  string(APPEND KRILL_PC_LIBS_PRIVATE " ${METIS_LIBRARY}")
endif()
if(KRILL_HAVE_NCCL)
  string(APPEND KRILL_PC_LIBS_PRIVATE " ${NCCL_LIBRARY}")
endif()
configure_file(cmake/krill.pc.in "${PROJECT_BINARY_DIR}/krill.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/krill.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

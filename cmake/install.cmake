# What `cmake --install` puts in place: the library, its public headers (include/ only: the
# private ones under src/private and beside the sources are never installed), the CMake package cmalign::cmalign,
# cmalign.pc, and with the CLI the program, its man page and bash completion.
include(CMakePackageConfigHelpers)

set(CMALIGN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/cmalign CACHE STRING
    "where cmalignConfig.cmake is installed, relative to the prefix")

install(TARGETS cmalign EXPORT cmalignTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/ ${CMALIGN_GENERATED_INCLUDE_DIR}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")

install(EXPORT cmalignTargets NAMESPACE cmalign:: DESTINATION ${CMALIGN_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/cmalignConfig.cmake.in
    ${CMAKE_CURRENT_BINARY_DIR}/cmalignConfig.cmake INSTALL_DESTINATION ${CMALIGN_CMAKE_DIR})
# 0.x: only the same minor version promises the same API.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/cmalignConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cmalignConfig.cmake
    ${CMAKE_CURRENT_BINARY_DIR}/cmalignConfigVersion.cmake DESTINATION ${CMALIGN_CMAKE_DIR})

# pkg-config: a static libcmalign needs its dependencies (and the C++ runtime, for C programs)
# on every link line; a shared one only when linking statically.
if(BUILD_SHARED_LIBS)
    set(CMALIGN_PC_LIBS "-lcmalign")
    set(CMALIGN_PC_LIBS_PRIVATE "-lfmt -lfdt -lz -llzma -lzstd -lstdc++ -lm -pthread")
else()
    set(CMALIGN_PC_LIBS "-lcmalign -lfmt -lfdt -lz -llzma -lzstd -lstdc++ -lm -pthread")
    set(CMALIGN_PC_LIBS_PRIVATE "")
endif()
file(RELATIVE_PATH CMALIGN_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/cmalign.pc.in
    ${CMAKE_CURRENT_BINARY_DIR}/cmalign.pc @ONLY)
# cmalign.pc is all a C program needs; cmalign-cxx.pc adds the C++20 flag for the C++ headers.
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/cmalign-cxx.pc.in
    ${CMAKE_CURRENT_BINARY_DIR}/cmalign-cxx.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cmalign.pc ${CMAKE_CURRENT_BINARY_DIR}/cmalign-cxx.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

if(CMALIGN_CLI)
    install(TARGETS cmalign_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cmalign.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
    # bash-completion loads completions/<command> on demand.
    install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cmalign.bash-completion
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME cmalign)
    install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cmalign.zsh-completion
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions RENAME _cmalign)
    install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cmalign.fish-completion
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d RENAME cmalign.fish)
    # The documents the man page points at.
    install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        FILES_MATCHING PATTERN "*.md" PATTERN "*.svg")
endif()

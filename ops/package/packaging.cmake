# Debian packages of the programs (docs/cluster.md): `cpack -G DEB` in a Release
# build folder makes three packages that install under /usr:
#   xqf-worker       xqf-worker, xqf-worker-setup (the worker's key pair and
#                    settings), the xqf-worker@ unit (its writable build cache
#                    in /var/cache/xqf-worker)
#   xqf-coordinator  xqf-coordinator, xqf-tune, xqf-web, their units (the
#                    builder's and the signer's too), the
#                    opening books (/usr/share/xqf/books), the network's
#                    trainer (/usr/share/xqf/nnue; PyTorch is not a dependency)
#   xqf-keys         xqf-keys, which both need (CURVE keys, allow-list,
#                    build signatures)
# The worker and coordinator packages create the system user xqf the units
# run as (and the coordinator's: xqf-web, xqf-builder and xqf-signer, each
# program's own), and /etc/xqf (postinst).  Library dependencies are found by
# dpkg-shlibdeps.  tests/check_packages.sh installs them with dpkg -x into a
# temporary root and runs each program's --help from there.

include(GNUInstallDirs)

set(XQF_PACKAGE_PREFIX /usr)
set(XQF_PACKAGE_DIR ${CMAKE_CURRENT_LIST_DIR})

install(TARGETS xqf-worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT worker)
install(PROGRAMS ${XQF_PACKAGE_DIR}/xqf-worker-setup DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT worker)
install(TARGETS xqf-coordinator xqf-tune xqf-web RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT coordinator)
install(TARGETS xqf-keys RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT keys)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/ops/books/ DESTINATION ${CMAKE_INSTALL_DATADIR}/xqf/books COMPONENT coordinator)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/tuner/nnue/ DESTINATION ${CMAKE_INSTALL_DATADIR}/xqf/nnue COMPONENT coordinator
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)

# The units of ops/systemd, their programs where the packages put them.
foreach(unit xqf-worker@.service xqf-coordinator.service xqf-web.service xqf-builder.service xqf-signer.service xqf-auditor.service)
  file(READ ${CMAKE_SOURCE_DIR}/ops/systemd/${unit} text)
  string(REPLACE "/usr/local/bin/" "${XQF_PACKAGE_PREFIX}/${CMAKE_INSTALL_BINDIR}/" text "${text}")
  file(WRITE ${CMAKE_BINARY_DIR}/package/${unit} "${text}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/ops/systemd/${unit})
endforeach()
install(FILES ${CMAKE_BINARY_DIR}/package/xqf-worker@.service DESTINATION lib/systemd/system COMPONENT worker)
install(FILES ${CMAKE_BINARY_DIR}/package/xqf-coordinator.service ${CMAKE_BINARY_DIR}/package/xqf-web.service
              ${CMAKE_BINARY_DIR}/package/xqf-builder.service ${CMAKE_BINARY_DIR}/package/xqf-signer.service
              ${CMAKE_BINARY_DIR}/package/xqf-auditor.service
        DESTINATION lib/systemd/system COMPONENT coordinator)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME xqf)
set(CPACK_PACKAGE_VENDOR "Xiangqi Forge")
set(CPACK_PACKAGE_CONTACT "Xiangqi Forge operators <xqf@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Xiangqi Forge: distributed self-play, SPRT and SPSA for a Xiangqi engine")
set(CPACK_PACKAGING_INSTALL_PREFIX ${XQF_PACKAGE_PREFIX})
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL worker coordinator keys)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION games)
set(CPACK_DEBIAN_WORKER_PACKAGE_NAME xqf-worker)
set(CPACK_DEBIAN_COORDINATOR_PACKAGE_NAME xqf-coordinator)
set(CPACK_DEBIAN_KEYS_PACKAGE_NAME xqf-keys)
set(CPACK_COMPONENT_WORKER_DESCRIPTION "Xiangqi Forge worker: plays the coordinator's tasks")
set(CPACK_COMPONENT_COORDINATOR_DESCRIPTION "Xiangqi Forge coordinator, xqf-tune and the web dashboard")
set(CPACK_COMPONENT_KEYS_DESCRIPTION "Xiangqi Forge keys: CURVE key pairs, the allow-list, build signatures")
set(CPACK_COMPONENT_WORKER_DEPENDS keys)
set(CPACK_COMPONENT_COORDINATOR_DEPENDS keys)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
# the sandbox engine builds run in on a worker, and branches are built in by the builder
set(CPACK_DEBIAN_WORKER_PACKAGE_DEPENDS "bubblewrap")
set(CPACK_DEBIAN_COORDINATOR_PACKAGE_DEPENDS "bubblewrap")
set(CPACK_DEBIAN_WORKER_PACKAGE_CONTROL_EXTRA ${XQF_PACKAGE_DIR}/postinst)
set(CPACK_DEBIAN_COORDINATOR_PACKAGE_CONTROL_EXTRA ${XQF_PACKAGE_DIR}/postinst)
include(CPack)

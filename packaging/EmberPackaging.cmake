# Install layout of the desktop integration and the CPack .deb (scripts/package.sh builds it):
# the programs in /usr/bin, the .desktop entry, AppStream metainfo, hicolor icons (SVG and PNG),
# gzipped man pages and the copyright file. Library dependencies come from dpkg-shlibdeps; the
# QML modules and the Qt platform plugin are loaded at run time, so they are listed by hand.
set(EMBER_APP_ID io.github.ember.Ember)
set(pkg ${CMAKE_CURRENT_LIST_DIR})
include(GNUInstallDirs)

if(EMBER_BUILD_APP)
  install(FILES ${pkg}/${EMBER_APP_ID}.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${pkg}/${EMBER_APP_ID}.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
  install(FILES ${CMAKE_SOURCE_DIR}/resources/ember.svg
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps RENAME ${EMBER_APP_ID}.svg)
  foreach(size 16 32 48 64 128 256)
    install(FILES ${pkg}/icons/ember-${size}.png
            DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps
            RENAME ${EMBER_APP_ID}.png)
  endforeach()
endif()

# Man pages, compressed as Debian policy asks (gzip -9n: no name or time stamp inside).
set(EMBER_MAN_PAGES ember-cli ember-bench)
if(EMBER_BUILD_APP)
  list(APPEND EMBER_MAN_PAGES ember)
endif()
if(TARGET ember-serve)
  list(APPEND EMBER_MAN_PAGES ember-serve)
endif()
find_program(EMBER_GZIP gzip REQUIRED)
set(man_outputs)
foreach(page ${EMBER_MAN_PAGES})
  set(src ${pkg}/man/${page}.1)
  if(NOT EXISTS ${src})
    message(WARNING "no man page packaging/man/${page}.1")
    continue()
  endif()
  set(out ${CMAKE_BINARY_DIR}/man/${page}.1.gz)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND ${EMBER_GZIP} -9n -c ${src} > ${out}
    DEPENDS ${src} VERBATIM)
  list(APPEND man_outputs ${out})
  install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endforeach()
add_custom_target(ember_man_pages ALL DEPENDS ${man_outputs})
set(changelog ${CMAKE_BINARY_DIR}/packaging/changelog.gz)
add_custom_command(OUTPUT ${changelog}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/packaging
  COMMAND ${EMBER_GZIP} -9n -c ${pkg}/changelog > ${changelog}
  DEPENDS ${pkg}/changelog VERBATIM)
add_custom_target(ember_changelog ALL DEPENDS ${changelog})
install(FILES ${changelog} ${pkg}/copyright DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/ember)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ember)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(EMBER_PACKAGE_MAINTAINER "The Ember developers <ember-developers@users.noreply.github.com>"
    CACHE STRING "Maintainer field of the .deb")
set(CPACK_PACKAGE_CONTACT "${EMBER_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "chat with local language models")
set(CPACK_PACKAGE_DESCRIPTION "Ember is a desktop chat app for language models stored as
GGUF files, run on this computer by its own inference engine. It includes
ember-cli, which runs the same engine from a terminal.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # ember_<version>_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(EMBER_BUILD_APP)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "qml6-module-qtquick, qml6-module-qtquick-controls, qml6-module-qtquick-layouts, qml6-module-qtquick-window, qml6-module-qtquick-templates, qml6-module-qtquick-dialogs, qml6-module-qtqml-workerscript, qml6-module-qtqml, libqt6svg6, qt6-qpa-plugins")
  # Remote connections keep their API keys in the desktop's keyring through QtKeychain, which
  # opens libsecret at run time (so shlibdeps cannot see it) and needs a Secret Service (or
  # KWallet) running; without them a key is kept in a file only its user can read.
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libsecret-1-0, gnome-keyring | kwalletmanager | keepassxc")
endif()
include(CPack)

#!/usr/bin/env bash
# Builds ember_<version>_amd64.deb (CPU build: installs on stock Debian 12) with CPack in its own
# build folder, then checks it: lintian (no errors), desktop-file-validate, appstreamcli
# validate. The .deb lands in the build folder; its path is the last line printed.
#   scripts/package.sh
# Environment: EMBER_PACKAGE_BUILD_DIR (default ./build-package).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

EMBER_BUILD_DIR="${EMBER_PACKAGE_BUILD_DIR:-$EMBER_ROOT/build-package}"
ember_install_packages dpkg-dev lintian desktop-file-utils appstream
ember_configure -DEMBER_BUILD_TESTS=OFF -DEMBER_CUDA=OFF
targets=(ember ember-cli ember-bench ember_man_pages ember_changelog)
ember_has_target ember-serve && targets+=(ember-serve)
log "building ${targets[*]}"
cmake --build "$EMBER_BUILD_DIR" -j"$(nproc)" --target "${targets[@]}" || die "build failed"

log "validating the desktop entry and the AppStream metadata"
desktop-file-validate "$EMBER_ROOT/packaging/io.github.ember.Ember.desktop" || die "desktop-file-validate"
appstreamcli validate --no-net "$EMBER_ROOT/packaging/io.github.ember.Ember.metainfo.xml" \
  || die "appstreamcli validate"

log "packaging"
rm -f "$EMBER_BUILD_DIR"/ember_*.deb
(cd "$EMBER_BUILD_DIR" && cpack -G DEB >cpack.log 2>&1) || { tail -30 "$EMBER_BUILD_DIR/cpack.log"; die "cpack failed"; }
deb="$(ls "$EMBER_BUILD_DIR"/ember_*_amd64.deb)"
log "lintian"
# Errors fail the build; warnings are printed. The package is native and built by CMake, so
# lintian's checks for a Debian source package do not apply.
if ! lintian --fail-on error --suppress-tags no-manual-page "$deb"; then
  die "lintian reported errors for $deb"
fi
echo "$deb"

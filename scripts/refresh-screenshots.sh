#!/usr/bin/env bash
# Copies the pictures the UI tests took (in the build folder) into docs/ for the README. The
# tests never write into the source tree; run this after them when the pictures should change.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bin="$EMBER_BUILD_DIR/bin"
copy() {  # from (under bin/) to (under docs/)
  if [ -f "$bin/$1" ]; then cp "$bin/$1" "$EMBER_ROOT/docs/$2" && log "docs/$2 <- $1"
  else log "missing $bin/$1 (run the UI tests first)"; fi
}
copy ui-test/screenshot.png screenshot.png
copy ui-test/panels.png screenshot-details.png
copy ui-test-2/concurrent.png screenshot-concurrent.png
copy ui-person/2-reading-prompt.png screenshot-reading-prompt.png

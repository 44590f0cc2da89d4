#!/usr/bin/env bash
# Refreshes resources/translations/*.ts from the sources (new strings appear as unfinished for a
# translator; translated ones are kept). lrelease runs at build time.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
lupdate="$(command -v lupdate || echo /usr/lib/qt6/bin/lupdate)"
for ts in "$EMBER_ROOT"/resources/translations/*.ts; do
  "$lupdate" -locations none -no-obsolete "$EMBER_ROOT/ui" "$EMBER_ROOT/app/controller" \
    "$EMBER_ROOT/app/models" "$EMBER_ROOT/app/worker" "$EMBER_ROOT/app/server" \
    "$EMBER_ROOT/app/connections" -extensions qml,js,cpp,h -ts "$ts"
done

#!/usr/bin/env bash
# The CPU test suite under AddressSanitizer + UBSan in its own build folder (build-asan): every
# finding stops the test (halt_on_error, and UBSan built without recovery), so it fails CI.
#   scripts/ci-sanitize.sh [ctest arguments...]
# Environment: EMBER_ASAN_BUILD_DIR (default ./build-asan).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

EMBER_BUILD_DIR="${EMBER_ASAN_BUILD_DIR:-$EMBER_ROOT/build-asan}"
ember_install_packages
"$EMBER_ROOT/scripts/fetch-models.sh"
"$EMBER_ROOT/scripts/fetch-llamacpp-vocab.sh"
ember_build -DEMBER_BUILD_TESTS=ON -DEMBER_CUDA=OFF -DEMBER_SANITIZE=address
ember_sanitizer_environment
log "running the tests under ASan + UBSan"
cd "$EMBER_BUILD_DIR"
# Under ASan the reference-model tests run 2-4x slower: the timeout grows with them. Left out
# by default (EMBER_ASAN_EXCLUDE, a ctest regex; empty runs everything): the end-to-end UI test,
# which starts the whole app under Xvfb and spends its time in Qt's uninstrumented libraries,
# to keep CI under 60 minutes; the controller and concurrent-chat tests cover the same code.
exclude="${EMBER_ASAN_EXCLUDE-^test_ui_end_to_end\$}"
ctest --output-on-failure --timeout 1800 -LE gpu ${exclude:+-E "$exclude"} "$@"

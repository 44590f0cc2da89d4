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
# The 30-minute timeout per test allows for the reference-model tests' ASan slowdown.
# EMBER_ASAN_EXCLUDE (a ctest regex, empty by default) leaves tests out of a local run; CI runs
# the whole CPU suite, the UI tests included (the app under Xvfb, drawn by Qt Quick's software
# renderer, with the leaks of Qt's and the system's uninstrumented libraries suppressed in
# tests/sanitizers/lsan.supp).
exclude="${EMBER_ASAN_EXCLUDE-}"
# Qt Test's own limit of 300 s per test function cut the reference-kernel row of
# test_fidelity_llamacpp (Gemma) short under ASan: it gets ctest's limit instead.
export QTEST_FUNCTION_TIMEOUT=1800000
# As many tests at a time as there are cores (a serial run would not fit CI's hour); the servers'
# tests hold a resource lock on their ports and each UI test picks a free X display.
ctest --output-on-failure --timeout 1800 -j"$(nproc)" -LE gpu ${exclude:+-E "$exclude"} "$@"

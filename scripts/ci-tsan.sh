#!/usr/bin/env bash
# The threaded tests under ThreadSanitizer in their own build folder (build-tsan): the CPU
# thread pool, the engine (batching, prefix cache, several requests per step), the inference
# worker thread, concurrent chats, and the engine host / server tests once they exist. A data
# race or lock-order inversion fails the test.
#   scripts/ci-tsan.sh
# Environment: EMBER_TSAN_BUILD_DIR (default ./build-tsan).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

EMBER_BUILD_DIR="${EMBER_TSAN_BUILD_DIR:-$EMBER_ROOT/build-tsan}"
# Test executables whose code runs on more than one thread (names as in tests/).
EMBER_TSAN_TESTS=(test_thread_pool test_engine_batching test_inference_worker test_concurrent_chats
                  test_engine_host test_engine_host_concurrency test_openai_server test_server)

ember_install_packages
"$EMBER_ROOT/scripts/fetch-models.sh"
ember_configure -DEMBER_BUILD_TESTS=ON -DEMBER_CUDA=OFF -DEMBER_SANITIZE=thread
present=()
for t in "${EMBER_TSAN_TESTS[@]}"; do
  ninja -C "$EMBER_BUILD_DIR" -t targets all 2>/dev/null | grep -q "^$t:" && present+=("$t")
done
[ ${#present[@]} -gt 0 ] || die "none of the threaded tests exists: ${EMBER_TSAN_TESTS[*]}"
log "building ${present[*]} with TSan"
cmake --build "$EMBER_BUILD_DIR" -j"$(nproc)" --target "${present[@]}" || die "TSan build failed"
ember_sanitizer_environment
regex="^($(IFS='|'; echo "${present[*]}"))\$"
log "running the threaded tests under TSan"
cd "$EMBER_BUILD_DIR"
ctest --output-on-failure --timeout 1800 -R "$regex"

#!/usr/bin/env bash
# The threaded tests under ThreadSanitizer in their own build folder (build-tsan): the CPU
# thread pool, the engine (batching, prefix cache, several requests per step), the engine host
# (its scheduler thread and many clients), the app's inference worker thread, the chat store's
# thread, concurrent chats, the app's local OpenAI server (and its model switch while serving),
# the router (HTTP server threads) and the SentencePiece load (libsentencepiece on a second thread
# while the engine indexes the vocabulary).
# The CPU kernels' inner loops are built uninstrumented (CMakeLists.txt says why). A data race
# or lock-order inversion fails the test; a listed test this build does not define (no Qt: no
# app tests) is named in the log, not silently left out.
#   scripts/ci-tsan.sh
# Environment: EMBER_TSAN_BUILD_DIR (default ./build-tsan).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

EMBER_BUILD_DIR="${EMBER_TSAN_BUILD_DIR:-$EMBER_ROOT/build-tsan}"
# Test executables whose code runs on more than one thread (names as in tests/).
EMBER_TSAN_TESTS=(test_thread_pool test_engine_batching test_engine_host test_inference_worker
                  test_store_threaded test_concurrent_chats test_local_api_server
                  test_server_model_switch test_router test_spm_gemma3)

ember_install_packages
"$EMBER_ROOT/scripts/fetch-models.sh"
ember_configure -DEMBER_BUILD_TESTS=ON -DEMBER_CUDA=OFF -DEMBER_SANITIZE=thread
present=() absent=()
for t in "${EMBER_TSAN_TESTS[@]}"; do
  if ember_has_target "$t"; then present+=("$t"); else absent+=("$t"); fi
done
[ ${#absent[@]} -eq 0 ] || log "not defined in this build, not run under TSan: ${absent[*]}"
[ ${#present[@]} -gt 0 ] || die "none of the threaded tests exists: ${EMBER_TSAN_TESTS[*]}"
log "building ${present[*]} with TSan"
# ember-cli too: several tests run it as their reference (test_inference_worker's greedy answer).
cmake --build "$EMBER_BUILD_DIR" -j"$(nproc)" --target "${present[@]}" ember-cli || die "TSan build failed"
ember_sanitizer_environment
# test_inference_worker runs ember-cli through QProcess as its reference. With TSan's default,
# the child forked from the many-threaded test dies before its exec ("starting new threads after
# multi-threaded fork is not supported"), so the reference never runs; the child runs no Ember
# code before exec, and ember-cli itself is a TSan build that checks its own threads.
export TSAN_OPTIONS="$TSAN_OPTIONS:die_after_fork=0"
# TSan makes the model's matmuls some 40x slower: a test function that decodes with the real
# model (test_engine_batching's preemption case) outlives QtTest's 5-minute watchdog, which
# then aborts it as a hang. Allow 30 minutes per function; ctest's --timeout still bounds each test.
export QTEST_FUNCTION_TIMEOUT=1800000
regex="^($(IFS='|'; echo "${present[*]}"))\$"
log "running the threaded tests under TSan"
cd "$EMBER_BUILD_DIR"
ctest --output-on-failure --timeout 1800 -R "$regex"

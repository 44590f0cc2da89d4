#!/usr/bin/env bash
# Installs what is missing, fetches the reference models, builds Ember and runs every test of
# the suite (plain, build/; the I/O fault-injection tests of tests/fault are part of it), then
# the threaded tests under TSan (tsan, build-tsan/), then every fuzz harness over its regression
# inputs and for EMBER_FUZZ_SECONDS from its seeds (fuzz, build-fuzz/), then the CPU suite again
# under ASan + UBSan (asan, build-asan/: any finding fails). The .deb built,
# installed, run and purged (package, build-package/, needs root) runs only when
# EMBER_TEST_PARTS names it.
# CI's budget is 60 minutes on 2 cores; the times of each part are printed at the end (the
# README lists the last measured ones). Objects do not depend on the clone's folder, so with
# ccache another clone's builds are reused.
#   scripts/test.sh [ctest arguments...]     e.g. scripts/test.sh -L engine
# Environment: EMBER_BUILD_DIR (default ./build), EMBER_MODELS_DIR (default ~/.cache/ember/models),
# EMBER_TESTDATA (default ../shared/testdata), EMBER_LLAMACPP_DATA (default
# ~/.cache/ember/llama.cpp-0.3.36, filled by scripts/fetch-llamacpp-vocab.sh),
# EMBER_LLAMACPP_PEER_VENV (default ~/.cache/ember/venv-llamacpp-peer, scripts/setup-llamacpp-venv.sh), EMBER_TEST_PARTS
# (default "plain tsan fuzz asan"; all: "plain asan tsan fuzz package"; ctest arguments apply to the
# plain and asan parts),
# EMBER_FUZZ_SECONDS (default here 30 per harness).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

parts="${EMBER_TEST_PARTS:-plain tsan fuzz asan}"
export EMBER_FUZZ_SECONDS="${EMBER_FUZZ_SECONDS:-30}"
timings=()
run_part() {
  local name="$1"; shift
  local start=$SECONDS
  "$@"
  timings+=("$name: $(( (SECONDS - start) / 60 ))m$(( (SECONDS - start) % 60 ))s")
}

plain() {
  ember_install_packages
  "$EMBER_ROOT/scripts/fetch-models.sh"
  "$EMBER_ROOT/scripts/fetch-llamacpp-vocab.sh"
  # llama.cpp's OpenAI-compatible server as a peer for the remote-server tests (built once, cached).
  EMBER_LLAMACPP_PEER_VENV="$("$EMBER_ROOT/scripts/setup-llamacpp-venv.sh" | tail -1)"
  export EMBER_LLAMACPP_PEER_VENV
  local openai_venv
  openai_venv="$(ember_openai_test_venv)"
  ember_build -DEMBER_BUILD_TESTS=ON -DEMBER_OPENAI_TEST_VENV="$openai_venv"
  log "running the tests"
  (cd "$EMBER_BUILD_DIR" && ctest --output-on-failure --timeout 900 "$@")
}

for part in $parts; do
  case "$part" in
    plain) run_part plain plain "$@" ;;
    asan) run_part "asan+ubsan" bash "$EMBER_ROOT/scripts/ci-sanitize.sh" "$@" ;;
    tsan) run_part tsan bash "$EMBER_ROOT/scripts/ci-tsan.sh" ;;
    fuzz) run_part fuzz bash "$EMBER_ROOT/scripts/ci-fuzz.sh" ;;
    package) run_part package bash "$EMBER_ROOT/scripts/ci-package.sh" ;;
    *) die "unknown test part '$part' (plain, asan, tsan, fuzz, package)" ;;
  esac
done
log "all parts passed: ${timings[*]}"

#!/usr/bin/env bash
# Installs what is missing, fetches the reference models, builds Ember and runs every test of
# the suite (build/; the I/O fault-injection tests of tests/fault are part of it), then every
# fuzz harness over its regression inputs and for EMBER_FUZZ_SECONDS from its seeds (fuzz,
# build-fuzz/). Further parts, each in its own build folder, run when EMBER_TEST_PARTS names
# them: the CPU suite under ASan + UBSan (asan, build-asan/), the threaded tests under TSan
# (tsan, build-tsan/), and the .deb built, installed, run and purged (package, build-package/,
# needs root). CI's budget is 60 minutes on 2 cores: the plain part takes about 27 of them and
# the fuzz part about 10 (7 harnesses, 30 s each, and their ASan build). Measured on a 2-core
# machine shared with other builds (load 4-15), so long against a free one: package 3m20s with
# a warm ccache (9m47s when 178 of its build steps had to recompile), lintian clean; tsan
# (8 threaded tests, the CPU kernels' loops uninstrumented) built in 32m at load 8-12 beside
# other builds (11m at load 4-8 before) and ran in 6m34s-9m: thread pool 18-30 s, engine
# batching 183-303 s, engine host 113-163 s, inference worker 18-30 s, store thread 1 s, local
# API server 20-22 s, concurrent chats 19-29 s, router 0.3 s; the whole part 6m49s when the
# build was up to date. All 8 pass, no race reported. On a free 2-core
# machine that is some 20 minutes: with plain and fuzz past 50, so not in the default. asan is
# not measured (estimated at 30-60).
#   scripts/test.sh [ctest arguments...]     e.g. scripts/test.sh -L engine
# Environment: EMBER_BUILD_DIR (default ./build), EMBER_MODELS_DIR (default ~/.cache/ember/models),
# EMBER_TESTDATA (default ../shared/testdata), EMBER_LLAMACPP_DATA (default
# ~/.cache/ember/llama.cpp-0.3.36, filled by scripts/fetch-llamacpp-vocab.sh),
# EMBER_LLAMACPP_PEER_VENV (default ~/.cache/ember/venv-llamacpp-peer, scripts/setup-llamacpp-venv.sh), EMBER_TEST_PARTS
# (default "plain fuzz"; all: "plain asan tsan fuzz package"; ctest arguments apply to the plain
# and asan parts),
# EMBER_FUZZ_SECONDS (default here 30 per harness).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

parts="${EMBER_TEST_PARTS:-plain fuzz}"
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
  ember_build -DEMBER_BUILD_TESTS=ON
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

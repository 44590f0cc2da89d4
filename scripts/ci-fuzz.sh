#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz with clang-14 + ASan + UBSan (build-fuzz) and
# runs each one (as many at once as there are cores): first over its committed regression inputs
# (every crash ever found), then fuzzing from its seed corpus for EMBER_FUZZ_SECONDS (default 60)
# each. A crash, a sanitizer report, a leak, a timeout or running out of memory fails the script
# and leaves the input in build-fuzz/findings/<harness>/.
#   scripts/ci-fuzz.sh [harness...]       (default: all)
# Environment: EMBER_FUZZ_BUILD_DIR (default ./build-fuzz), EMBER_FUZZ_SECONDS, EMBER_FUZZ_SEED
# (default 1: the same inputs on every run, so a CI failure can be reproduced; 0 for a random
# seed).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

EMBER_BUILD_DIR="${EMBER_FUZZ_BUILD_DIR:-$EMBER_ROOT/build-fuzz}"
seconds="${EMBER_FUZZ_SECONDS:-60}"
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(fuzz_gguf fuzz_tokenizer_bpe fuzz_tokenizer_spm fuzz_chat_template
  fuzz_chat_import fuzz_openai_request fuzz_openai_sse)

ember_install_packages clang-14 libfuzzer-14-dev
"$EMBER_ROOT/scripts/fetch-models.sh"
CC=clang-14 CXX=clang++-14 ember_configure -DEMBER_FUZZ=ON -DEMBER_SANITIZE=address \
  -DEMBER_CUDA=OFF -DEMBER_BUILD_APP=OFF -DEMBER_BUILD_TESTS=OFF \
  -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link
log "building ${harnesses[*]}"
cmake --build "$EMBER_BUILD_DIR" -j"$(nproc)" --target "${harnesses[@]}" || die "fuzz build failed"
ember_sanitizer_environment

fuzz_dir="$EMBER_ROOT/tests/fuzz"
# One harness: its regression inputs, then fuzzing. Run in a subshell: `die` ends only it.
fuzz_one() {
  local h="$1" name="${1#fuzz_}"
  local bin="$EMBER_BUILD_DIR/bin/$h"
  local findings="$EMBER_BUILD_DIR/findings/$h"
  local work="$EMBER_BUILD_DIR/corpus/$h"  # grows while fuzzing; the committed seeds stay as they are
  mkdir -p "$findings" "$work"
  if [ -d "$fuzz_dir/regressions/$name" ] && [ -n "$(ls -A "$fuzz_dir/regressions/$name")" ]; then
    log "$h: replaying $(ls "$fuzz_dir/regressions/$name" | wc -l) regression inputs"
    "$bin" -runs=0 "$fuzz_dir/regressions/$name"/* >"$findings/regressions.log" 2>&1 \
      || { tail -40 "$findings/regressions.log"; die "$h fails on a regression input"; }
  fi
  log "$h: fuzzing for ${seconds}s"
  "$bin" -max_total_time="$seconds" -seed="${EMBER_FUZZ_SEED:-1}" -timeout=10 -rss_limit_mb=2560 \
    -artifact_prefix="$findings/" -print_final_stats=1 "$work" "$fuzz_dir/corpus/$name" \
    >"$findings/fuzz.log" 2>&1 || { tail -60 "$findings/fuzz.log"; die "$h found a failing input (see $findings)"; }
  log "$h: $(grep -E "^stat::number_of_executed_units" "$findings/fuzz.log" | tail -1)"
}

# A harness is one thread: as many run at once as there are cores (each for its full time), in
# batches, since every harness takes about the same time.
failed=0
batch="$(nproc)"
for ((i = 0; i < ${#harnesses[@]}; i += batch)); do
  pids=()
  for h in "${harnesses[@]:i:batch}"; do
    (fuzz_one "$h") &
    pids+=("$!")
  done
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
done
[ "$failed" -eq 0 ] || die "a fuzz harness failed (its log is above)"
log "fuzzing: no findings"

#!/usr/bin/env bash
# TTFT over the turns of a replayed chat, Ember against llama.cpp:
# Ember with its prefix cache on and off, llama.cpp reusing its prompt prefix and cold, on the same
# GGUF, thread count and prompt token ids, interleaved per repetition.
#   scripts/bench-ttft-vs-llamacpp.sh [--model M] [--threads N] [--repetitions R]
# llama.cpp comes from scripts/setup-llamacpp-bench-venv.sh (~/.cache/ember/venv-llamacpp-bench;
# EMBER_LLAMACPP_VENV names another venv with llama_cpp instead).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

venv="${EMBER_LLAMACPP_VENV:-$("$EMBER_ROOT/scripts/setup-llamacpp-bench-venv.sh" | tail -n 1)}"
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"  # see bench-table.sh
model="$EMBER_MODELS_DIR/SmolLM2-135M-Instruct.Q4_1.gguf"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model="$2"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
ember_build
"$EMBER_ROOT/scripts/fetch-models.sh"
exec "$venv/bin/python" "$EMBER_ROOT/scripts/bench_ttft_llamacpp.py" \
  --ember-bench "$EMBER_BUILD_DIR/bin/ember-bench" --model "$model" "${args[@]}"

#!/usr/bin/env bash
# Ember against llama.cpp, side by side in one run: both
# engines on the same GGUF, thread count and prompt tokens, interleaved A B A B, with the memory
# bandwidth probed in the same run for the roofline.
#   scripts/bench-vs-llamacpp.sh [--model M] [--threads N] [--repetitions R] [--figures pp,tg]
#                                [--kernels fast|reference|approx]
# llama.cpp comes from scripts/setup-llamacpp-bench-venv.sh (llama-cpp-python, pinned, built for
# AVX-512 VNNI without AMX, in ~/.cache/ember/venv-llamacpp-bench); EMBER_LLAMACPP_VENV names
# another venv with llama_cpp and numpy instead.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

venv="${EMBER_LLAMACPP_VENV:-$("$EMBER_ROOT/scripts/setup-llamacpp-bench-venv.sh" | tail -n 1)}"
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"  # see bench-table.sh
ember_build
"$EMBER_ROOT/scripts/fetch-models.sh"
exec "$venv/bin/python" "$EMBER_ROOT/scripts/bench_vs_llamacpp.py" \
  --ember-bench "$EMBER_BUILD_DIR/bin/ember-bench" --models-dir "$EMBER_MODELS_DIR" "$@"

#!/usr/bin/env bash
# TTFT over the turns of a replayed chat, Ember against llama.cpp (see ../shared/guide/BENCHMARKS.md):
# Ember with its prefix cache on and off, llama.cpp reusing its prompt prefix and cold, on the same
# GGUF, thread count and prompt token ids, interleaved per repetition.
#   scripts/bench-ttft-vs-llamacpp.sh [--model M] [--threads N] [--repetitions R]
# llama.cpp comes from PyPI llama-cpp-python in the venv that scripts/bench-vs-llamacpp.sh
# builds (~/.cache/ember/venv-llamacpp, override with EMBER_LLAMACPP_VENV).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

LLAMA_CPP_PYTHON_VERSION=0.3.36
venv="${EMBER_LLAMACPP_VENV:-$HOME/.cache/ember/venv-llamacpp}"

if ! "$venv/bin/python" -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$LLAMA_CPP_PYTHON_VERSION')" 2>/dev/null; then
  die "llama-cpp-python $LLAMA_CPP_PYTHON_VERSION is not in $venv; scripts/bench-vs-llamacpp.sh builds it"
fi
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

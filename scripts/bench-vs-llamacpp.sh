#!/usr/bin/env bash
# Ember against llama.cpp, side by side in one run (see ../shared/guide/BENCHMARKS.md): both
# engines on the same GGUF, thread count and prompt tokens, interleaved A B A B, with the memory
# bandwidth probed in the same run for the roofline.
#   scripts/bench-vs-llamacpp.sh [--model M] [--threads N] [--repetitions R] [--figures pp,tg]
#                                [--kernels fast|reference|approx]
# llama.cpp comes from PyPI llama-cpp-python (pinned below; pip builds llama.cpp from source) in a
# venv outside the repo: ~/.cache/ember/venv-llamacpp (override with EMBER_LLAMACPP_VENV).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

LLAMA_CPP_PYTHON_VERSION=0.3.36
venv="${EMBER_LLAMACPP_VENV:-$HOME/.cache/ember/venv-llamacpp}"

ember_install_packages python3-venv
if ! "$venv/bin/python" -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$LLAMA_CPP_PYTHON_VERSION')" 2>/dev/null; then
  log "building llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION into $venv (several minutes)"
  /usr/bin/python3 -m venv "$venv"
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$venv/bin/pip" install --quiet \
    "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" numpy jinja2
fi
ember_build
"$EMBER_ROOT/scripts/fetch-models.sh"
exec "$venv/bin/python" "$EMBER_ROOT/scripts/bench_vs_llamacpp.py" \
  --ember-bench "$EMBER_BUILD_DIR/bin/ember-bench" --models-dir "$EMBER_MODELS_DIR" "$@"

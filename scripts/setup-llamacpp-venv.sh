#!/usr/bin/env bash
# Creates (once) the Python venv with llama.cpp as a peer server for the remote-server tests:
# llama-cpp-python[server] (pip builds llama.cpp from source: about 10-15 minutes on 2 cores,
# once; afterwards this script returns in a second) and the `openai` SDK.
#   scripts/setup-llamacpp-venv.sh        prints the venv's path on its last line
# The venv lives outside the repository: ~/.cache/ember/venv-llamacpp-peer
# (EMBER_LLAMACPP_PEER_VENV). llama.cpp is built for AVX2 rather than -march=native: on a CPU
# with AMX whose kernel does not grant the AMX tile state (some VMs and sandboxes), a native
# build dies with SIGILL at the first tile instruction.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

LLAMA_CPP_PYTHON_VERSION=0.3.36
LLAMA_CPP_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
venv="${EMBER_LLAMACPP_PEER_VENV:-$HOME/.cache/ember/venv-llamacpp-peer}"
marker="$venv/.ember-build"  # what it was built with

ready() {
  [ "$(cat "$marker" 2>/dev/null)" = "$LLAMA_CPP_PYTHON_VERSION $LLAMA_CPP_CMAKE_ARGS" ] &&
    "$venv/bin/python" -c "import llama_cpp.server.app, openai" 2>/dev/null
}

if ! ready; then
  ember_install_packages python3-venv
  log "building llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION into $venv (10-15 minutes on 2 cores, once)"
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
  CMAKE_ARGS="$LLAMA_CPP_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$venv/bin/pip" install --quiet --no-cache-dir --force-reinstall --no-deps \
    "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" \
    || die "pip could not build llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION"
  "$venv/bin/pip" install --quiet "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION" openai \
    || die "pip could not install llama-cpp-python's server extras and openai"
  echo "$LLAMA_CPP_PYTHON_VERSION $LLAMA_CPP_CMAKE_ARGS" > "$marker"
  ready || die "the venv at $venv does not import llama_cpp.server"
fi
echo "$venv"

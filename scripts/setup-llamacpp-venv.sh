#!/usr/bin/env bash
# Creates (once) the Python venv with llama.cpp as a peer: llama-cpp-python[server] (pip builds
# llama.cpp from source: about 10-15 minutes on 2 cores, once; afterwards this script returns in
# a second), the `openai` SDK, numpy and jinja2. Used by the remote-server tests (llama.cpp's
# OpenAI-compatible server on loopback) and by the llama.cpp benchmarks.
#   scripts/setup-llamacpp-venv.sh        prints the venv's path on its last line
# The venv lives outside the repository: ~/.cache/ember/venv-llamacpp (EMBER_LLAMACPP_VENV).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

LLAMA_CPP_PYTHON_VERSION=0.3.36
venv="${EMBER_LLAMACPP_VENV:-$HOME/.cache/ember/venv-llamacpp}"

ready() {
  "$venv/bin/python" - "$LLAMA_CPP_PYTHON_VERSION" <<'PY' 2>/dev/null
import sys
import llama_cpp, llama_cpp.server.app, openai  # the server's extras and the SDK import
sys.exit(llama_cpp.__version__ != sys.argv[1])
PY
}

if ! ready; then
  ember_install_packages python3-venv
  log "building llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION into $venv (10-15 minutes on 2 cores, once)"
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$venv/bin/pip" install --quiet \
    "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION" openai numpy jinja2 \
    || die "pip could not install llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION"
  ready || die "the venv at $venv does not import llama_cpp.server"
fi
echo "$venv"

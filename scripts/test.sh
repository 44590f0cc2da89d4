#!/usr/bin/env bash
# Installs what is missing, fetches the reference models, builds Ember and runs every test.
#   scripts/test.sh [ctest arguments...]     e.g. scripts/test.sh -L engine
# Environment: EMBER_BUILD_DIR (default ./build), EMBER_MODELS_DIR (default ~/.cache/ember/models),
# EMBER_TESTDATA (default ../shared/testdata), EMBER_LLAMACPP_DATA (default
# ~/.cache/ember/llama.cpp-0.3.36, filled by scripts/fetch-llamacpp-vocab.sh),
# EMBER_LLAMACPP_PEER_VENV (default ~/.cache/ember/venv-llamacpp-peer, scripts/setup-llamacpp-venv.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ember_install_packages
"$EMBER_ROOT/scripts/fetch-models.sh"
"$EMBER_ROOT/scripts/fetch-llamacpp-vocab.sh"
# llama.cpp's OpenAI-compatible server as a peer for the remote-server tests (built once, cached).
EMBER_LLAMACPP_PEER_VENV="$("$EMBER_ROOT/scripts/setup-llamacpp-venv.sh" | tail -1)"
export EMBER_LLAMACPP_PEER_VENV
ember_build -DEMBER_BUILD_TESTS=ON
log "running the tests"
cd "$EMBER_BUILD_DIR"
ctest --output-on-failure --timeout 900 "$@"

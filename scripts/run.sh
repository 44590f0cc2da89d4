#!/usr/bin/env bash
# Installs what is missing, builds Ember, fetches the default model and launches the Ember
# window on it (or, where there is no display, a terminal chat on the same engine).
#   scripts/run.sh [path/to/model.gguf]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ember_install_packages
ember_build
model="${1:-}"
if [ -z "$model" ]; then
  "$EMBER_ROOT/scripts/fetch-models.sh" smollm2
  model="$EMBER_MODELS_DIR/SmolLM2-135M-Instruct.Q4_1.gguf"
fi
log "model: $model"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  log "launching Ember"
  exec "$EMBER_BUILD_DIR/bin/ember" --model "$model"
fi
# No display (a server or a container): the same engine in a terminal chat.
log "no display found (DISPLAY/WAYLAND_DISPLAY unset): starting the terminal chat instead"
exec "$EMBER_BUILD_DIR/bin/ember-cli" chat --model "$model" --system "You are Ember, a helpful assistant."

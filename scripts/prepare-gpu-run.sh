#!/usr/bin/env bash
# Prepares what tests/gpu/run.sh needs on the lent GPU machine, which has CUDA, cuBLAS, CMake,
# ninja, a C++ compiler and Python but no Debian -dev packages and no network:
# - the .deb files of the libraries the engine and the Qt Test suites build against
#   (EMBER_BUILD_APP=OFF), fetched with `apt-get download` into .gpu-carry/debs (ignored by git);
#   run.sh unpacks them into a private prefix there;
# - a real model cut to fit: .gpu-carry/models/SmolLM2-135M-Instruct.cut4.Q4_1.gguf, the default
#   model's first 4 of 30 layers written by `ember-cli cut-model` (every kept tensor byte for byte
#   the real file's; 38.8 MiB, of which the Q8_0 token embedding is 28.7 MiB). The GPU tests run
#   their real-weight rows on it (CPU vs CUDA on the same file). No Gemma 3 cut is carried: its
#   Q8_0 embedding (262144 x 640) is 170 MiB on its own, so even one layer is over the limit.
# A machine receives at most 64 MiB: the tracked and untracked (not ignored) files plus what is
# carried. This script measures that sum and fails when it is over.
#
# Usage (from the repository root, on this Debian 12 machine):
#   scripts/prepare-gpu-run.sh
# then run on the device with carry [".gpu-carry"] (see tests/gpu/run.sh).
# Settings (environment): EMBER_CLI (an ember-cli with cut-model; default: the newest
# build*/bin/ember-cli that has it, else one built in build-gpu-prepare), EMBER_MODELS_DIR
# (where SmolLM2-135M-Instruct.Q4_1.gguf is; default ~/.cache/ember/models).
set -euo pipefail
cd "$(dirname "$0")/.."
carry=.gpu-carry
mkdir -p "$carry/debs" "$carry/models"

# Runtime and -dev packages for: Qt6 Core + Test with moc (tests), SentencePiece and PCRE2
# (tokenizer), nlohmann-json (chat, requests), spdlog + fmt (found by the top-level CMakeLists),
# pkgconf (FindPkgConfig). Their own dependencies that a CUDA image lacks are listed too (ICU,
# GLib, double-conversion, libb2 for QtCore); glibc, libstdc++, zlib and zstd are the image's.
packages=(
  qt6-base-dev qt6-base-dev-tools qmake6 qmake6-bin libqt6core6 libqt6test6
  libicu72 libglib2.0-0 libdouble-conversion3 libb2-1 libgomp1 libffi8 libpcre2-16-0
  libsentencepiece-dev libsentencepiece0
  libpcre2-dev libpcre2-8-0 libpcre2-32-0 libpcre2-posix3
  nlohmann-json3-dev
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9
  pkgconf pkgconf-bin libpkgconf3
)
(
  cd "$carry/debs"
  rm -f ./*.deb
  # apt drops privileges to _apt when it can; a folder it cannot write only costs a warning.
  apt-get download "${packages[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true
)
count=$(ls "$carry/debs"/*.deb | wc -l)
if [ "$count" -ne "${#packages[@]}" ]; then
  echo "prepare-gpu-run: expected ${#packages[@]} packages, got $count" >&2
  exit 1
fi

# The cut model, written by our own tool.
source_model=${EMBER_MODELS_DIR:-$HOME/.cache/ember/models}/SmolLM2-135M-Instruct.Q4_1.gguf
cut_model=$carry/models/SmolLM2-135M-Instruct.cut4.Q4_1.gguf
has_cut_model() { [ -x "$1" ] && "$1" --help 2>/dev/null | grep -q cut-model; }
cli=${EMBER_CLI:-}
if [ -z "$cli" ]; then
  for candidate in $(ls -t build*/bin/ember-cli 2>/dev/null); do
    if has_cut_model "$candidate"; then cli=$candidate; break; fi
  done
fi
if [ -z "$cli" ]; then
  echo "prepare-gpu-run: building ember-cli in build-gpu-prepare"
  cmake -S . -B build-gpu-prepare -G Ninja -DEMBER_BUILD_APP=OFF -DEMBER_CUDA=OFF >/dev/null
  cmake --build build-gpu-prepare --target ember-cli
  cli=build-gpu-prepare/bin/ember-cli
fi
has_cut_model "$cli" || { echo "prepare-gpu-run: $cli has no cut-model command" >&2; exit 1; }
rm -f "$carry"/models/*.gguf
if [ -f "$source_model" ]; then
  "$cli" cut-model --model "$source_model" --layers 4 --out "$cut_model"
else
  echo "prepare-gpu-run: $source_model not found (scripts/fetch-models.sh): no real model carried;" \
    "the GPU tests' real-weight rows will skip" >&2
fi

# What the machine receives: the working tree as git sees it, and .gpu-carry.
limit=$((64 * 1048576))
tree_bytes=$(git ls-files -z --cached --others --exclude-standard |
  du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
carry_bytes=$(du -sb "$carry" | cut -f1)
total=$((tree_bytes + carry_bytes))
echo "prepare-gpu-run: $count packages in $carry/debs ($(du -sb "$carry/debs" | cut -f1) bytes)," \
  "models $(du -sb "$carry/models" | cut -f1) bytes"
echo "prepare-gpu-run: carried $carry_bytes + working tree $tree_bytes = $total bytes" \
  "($((total / 1048576)) MiB; limit 64 MiB = $limit bytes)"
if [ "$total" -gt "$limit" ]; then
  echo "prepare-gpu-run: over the limit by $((total - limit)) bytes" >&2
  exit 1
fi

#!/usr/bin/env bash
# Prepares what tests/gpu/run.sh needs on the lent GPU machine, which has CUDA, cuBLAS, CMake,
# ninja, a C++ compiler and Python but no Debian -dev packages and no network: the .deb files of
# the libraries the engine and the Qt Test suites build against (EMBER_BUILD_APP=OFF), fetched
# with `apt-get download` into .gpu-carry/debs (ignored by git). run.sh unpacks them into a
# private prefix there. Test models are not carried: run.sh writes synthetic ones with the
# ember-cli it builds (the real SmolLM2 file is 94 MiB, over the 64 MiB a run can carry). A real
# model under ~40 MiB may be put in .gpu-carry/models/ by hand; run.sh points the tests there.
#
# Usage (from the repository root, on this Debian 12 machine):
#   scripts/prepare-gpu-run.sh
# then run on the device with carry [".gpu-carry"] (see tests/gpu/run.sh).
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

tree_bytes=$(git ls-files -z | du -cb --files0-from=- | tail -1 | cut -f1)
carry_bytes=$(du -sb "$carry" | cut -f1)
echo "prepare-gpu-run: $count packages in $carry/debs"
echo "prepare-gpu-run: carried $((carry_bytes / 1048576)) MiB + tracked tree $((tree_bytes / 1048576)) MiB (limit 64 MiB)"

#!/usr/bin/env bash
# Builds Ember with the CUDA backend on a lent GPU machine and runs the GPU tests (ctest -L gpu)
# and `ember-bench gpu` on Llama-3-8B-shaped synthetic models (random weights, Q4_0 and F16),
# writing logs and JSON under $OUT. Meant to finish in under 8 minutes on one H200.
#
# The machine has CUDA 13, cuBLAS, CMake, ninja, a compiler and Python, but none of the Debian
# -dev packages the build needs and no network. Prepare them here first:
#   scripts/prepare-gpu-run.sh           # .deb files into .gpu-carry/debs (about 18 MiB) and
#                                        # SmolLM2 cut to 4 layers into .gpu-carry/models (39 MiB)
# then run, from the repository root, with the device tool:
#   command: bash tests/gpu/run.sh       carry: [".gpu-carry"]      timeout_s: 540
# The .debs are unpacked into a private prefix (never into /) that CMAKE_PREFIX_PATH,
# PKG_CONFIG_LIBDIR and LD_LIBRARY_PATH point at. The GPU tests' real-weight rows run on the
# carried cut of SmolLM2 (EMBER_GPU_MODELS_DIR=.gpu-carry/models; CPU vs CUDA on that file); the
# Gemma 3 rows skip (no cut of it fits). The benchmark's Llama-3-8B-shaped models (random
# weights) are written on the machine by the ember-cli it builds.
#
# Files in $OUT: run.log (everything), ctest-gpu.log, ctest-gpu.xml (JUnit),
# bench-llama3-8b-<type>.jsonl, summary.txt.
# Settings (environment): EMBER_GPU_BENCH_TYPES ("q4_0 f16"), EMBER_GPU_REPETITIONS (5),
# EMBER_GPU_BUILD_DIR (build-gpu-run), EMBER_GPU_CUDA_ARCH (90), EMBER_GPU_PREFIX
# (/tmp/ember-gpu-prefix), EMBER_GPU_SIMULATE=1 (a rehearsal on a machine without a GPU: ignore
# /usr's packages when configuring and skip the benchmark).
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
OUT=${OUT:-$root/gpu-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
started=$(date +%s)
say() { echo "[$(( $(date +%s) - started ))s] $*"; }
summary() { echo "$*" | tee -a "$OUT/summary.txt"; }

prefix=${EMBER_GPU_PREFIX:-/tmp/ember-gpu-prefix}
build=${EMBER_GPU_BUILD_DIR:-build-gpu-run}
types=${EMBER_GPU_BENCH_TYPES:-q4_0 f16}
repetitions=${EMBER_GPU_REPETITIONS:-5}
arch=${EMBER_GPU_CUDA_ARCH:-90}
jobs=$(nproc)
export PATH=/usr/local/cuda/bin:$PATH

say "machine: $(nproc) cores; $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"
say "commit $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"

# --- 1. The carried packages, unpacked into $prefix. ---
debs=(.gpu-carry/debs/*.deb)
if [ ! -e "${debs[0]}" ]; then
  summary "FAIL: no .deb files in .gpu-carry/debs: run scripts/prepare-gpu-run.sh and carry .gpu-carry"
  exit 1
fi
unpack() {  # unpack DEB DIR, with dpkg-deb where there is one, else with Python (ar + tar.xz)
  if command -v dpkg-deb >/dev/null; then dpkg-deb -x "$1" "$2"; return; fi
  python3 - "$1" "$2" <<'PY'
import io, sys, tarfile
data = open(sys.argv[1], "rb").read()
pos = 8  # "!<arch>\n", then 60-byte member headers
while pos < len(data):
    name = data[pos:pos + 16].decode().strip().rstrip("/")
    size = int(data[pos + 48:pos + 58].decode().strip())
    body = data[pos + 60:pos + 60 + size]
    if name.startswith("data.tar"):
        tarfile.open(fileobj=io.BytesIO(body)).extractall(sys.argv[2])
    pos += 60 + size + (size & 1)
PY
}
rm -rf "$prefix" && mkdir -p "$prefix"
for deb in "${debs[@]}"; do unpack "$deb" "$prefix" || { summary "FAIL: cannot unpack $deb"; exit 1; }; done
multiarch=$prefix/usr/lib/x86_64-linux-gnu
# The .pc files name /usr; point them at the prefix.
sed -i "s|/usr|$prefix/usr|g" "$multiarch"/pkgconfig/*.pc "$prefix"/usr/share/pkgconfig/*.pc 2>/dev/null
export LD_LIBRARY_PATH=$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PKG_CONFIG_LIBDIR=$multiarch/pkgconfig:$prefix/usr/share/pkgconfig
export PKG_CONFIG_PATH=$PKG_CONFIG_LIBDIR
say "unpacked ${#debs[@]} packages into $prefix"

# --- 2. Configure and build the CLI, the benchmark and the GPU tests. ---
ignore=()
[ "${EMBER_GPU_SIMULATE:-0}" = 1 ] && ignore=(-DCMAKE_IGNORE_PREFIX_PATH=/usr)
if ! cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_BUILD_APP=OFF \
    -DEMBER_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" -DCMAKE_PREFIX_PATH="$prefix/usr" \
    -DPKG_CONFIG_EXECUTABLE="$prefix/usr/bin/pkgconf" "${ignore[@]}"; then
  summary "FAIL: cmake configure (see run.log)"
  exit 1
fi
gpu_tests=$(ctest --test-dir "$build" -N -L gpu | sed -n 's/^ *Test *#[0-9]*: *//p')
say "GPU tests: $(echo $gpu_tests)"
if ! cmake --build "$build" -j "$jobs" --target ember-cli ember-bench $gpu_tests; then
  summary "FAIL: build (see run.log)"
  exit 1
fi
say "built"

# --- 3. Models: written here by our own tool (random weights in real shapes). ---
models=/tmp/ember-gpu-models
mkdir -p "$models"
cli=$build/bin/ember-cli
"$cli" synth-model --shape smollm2-135m --type q4_0 --layers 4 --out "$models/synthetic-smollm2-135m-4layers-q4_0.gguf" ||
  summary "FAIL: synth-model smollm2-135m"
export EMBER_MODELS_DIR=$models
# Real weights for the tests: the cut model(s) prepare-gpu-run.sh carried.
export EMBER_GPU_MODELS_DIR=$root/.gpu-carry/models
carried=$(cd "$EMBER_GPU_MODELS_DIR" 2>/dev/null && ls *.gguf 2>/dev/null | tr '\n' ' ')
summary "real-weight models for the tests: ${carried:-none (their rows skip)}"

# --- 4. The GPU tests. ---
unset CI  # a missing real model skips (with the reason) instead of failing
if [ -n "$gpu_tests" ]; then
  ctest --test-dir "$build" -L gpu --verbose --timeout 240 \
    --output-junit "$OUT/ctest-gpu.xml" 2>&1 | tee "$OUT/ctest-gpu.log"
  result=${PIPESTATUS[0]}
  summary "ctest -L gpu: $(grep -E 'tests passed|tests failed' "$OUT/ctest-gpu.log" | tail -1) (exit $result)"
else
  summary "ctest -L gpu: no GPU tests are registered"
fi

# --- 5. The benchmark on Llama-3-8B-shaped models. ---
if [ "${EMBER_GPU_SIMULATE:-0}" = 1 ]; then
  "$build/bin/ember-bench" gpu --model "$models/synthetic-smollm2-135m-4layers-q4_0.gguf" --json \
    --repetitions 1 > "$OUT/bench-simulated.jsonl"
  summary "ember-bench gpu (simulated, no device): exit $? ($(head -c 300 "$OUT/bench-simulated.jsonl"))"
else
  for type in $types; do
    model=$models/synthetic-llama3-8b-$type.gguf
    say "writing $model"
    "$cli" synth-model --shape llama3-8b --type "$type" --out "$model" || { summary "FAIL: synth-model llama3-8b $type"; continue; }
    "$cli" plan --model "$model" --context 2560 --sequences 1 | tee -a "$OUT/summary.txt"
    say "ember-bench gpu on $type"
    timeout 180 "$build/bin/ember-bench" gpu --model "$model" --json --repetitions "$repetitions" \
      | tee "$OUT/bench-llama3-8b-$type.jsonl"
    summary "ember-bench gpu $type: exit ${PIPESTATUS[0]}"
    rm -f "$model"  # 16 GB for F16: keep the disk free for the next one
  done
fi
say "done in $(( $(date +%s) - started )) s"
summary "total: $(( $(date +%s) - started )) s"

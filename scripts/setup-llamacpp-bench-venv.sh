#!/usr/bin/env bash
# Creates (once) the Python venv with llama.cpp that the speed benchmarks compare against:
# llama-cpp-python (pinned; pip builds llama.cpp from source, 10-30 minutes on 2 busy cores, once;
# afterwards this script returns in a second), numpy and jinja2.
#   scripts/setup-llamacpp-bench-venv.sh     prints the venv's path on its last line
# The venv lives outside the repository: ~/.cache/ember/venv-llamacpp-bench
# (EMBER_LLAMACPP_BENCH_VENV). llama.cpp is built for every x86 extension up to AVX-512 VNNI / VBMI /
# BF16 but without AMX: a -march=native build dies with SIGILL at the first AMX tile instruction on
# a CPU whose kernel does not grant the tile state (some VMs and sandboxes), and an AVX2-only build
# would make llama.cpp slower than it is on an AVX-512 CPU, which is not a fair peer. On a CPU
# without AVX-512 set EMBER_LLAMACPP_BENCH_CMAKE_ARGS to the AVX2 flags of setup-llamacpp-venv.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

LLAMA_CPP_PYTHON_VERSION=0.3.36
LLAMA_CPP_CMAKE_ARGS="${EMBER_LLAMACPP_BENCH_CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_BMI2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_BF16=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF}"
venv="${EMBER_LLAMACPP_BENCH_VENV:-$HOME/.cache/ember/venv-llamacpp-bench}"
marker="$venv/.ember-build"  # what it was built with

built() {
  [ "$(cat "$marker" 2>/dev/null)" = "$LLAMA_CPP_PYTHON_VERSION $LLAMA_CPP_CMAKE_ARGS" ] &&
    "$venv/bin/python" -c "import llama_cpp" 2>/dev/null
}
deps() { "$venv/bin/python" -c "import numpy, jinja2, gguf" 2>/dev/null; }

if ! built; then
  ember_install_packages python3-venv
  log "building llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION into $venv (10-30 minutes on 2 cores, once)"
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet numpy jinja2 diskcache typing-extensions \
    || die "pip could not install llama-cpp-python's dependencies"
  CMAKE_ARGS="$LLAMA_CPP_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$venv/bin/pip" install --quiet --no-cache-dir --force-reinstall --no-deps \
    "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" \
    || die "pip could not build llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION"
  echo "$LLAMA_CPP_PYTHON_VERSION $LLAMA_CPP_CMAKE_ARGS" > "$marker"
  built || die "the venv at $venv does not import llama_cpp"
fi
# What the benchmark scripts use beside llama.cpp (gguf: tensor sizes), added without a rebuild.
deps || "$venv/bin/pip" install --quiet numpy jinja2 gguf || die "pip could not install numpy, jinja2, gguf"
echo "$venv"

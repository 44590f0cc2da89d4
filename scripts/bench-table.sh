#!/usr/bin/env bash
# The README's speed table in one run (see scripts/bench_table.py for the figures): Ember against
# llama.cpp on both reference models, interleaved A B A B, 2 threads by default.
#   scripts/bench-table.sh [--repetitions R] [--threads N] [--figures pp,tg,load,batch,ttft]
#                          [--kernels fast|reference|approx]
# llama.cpp comes from scripts/setup-llamacpp-bench-venv.sh (llama-cpp-python, pinned, built for
# AVX-512 VNNI without AMX; ~/.cache/ember/venv-llamacpp-bench).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

venv="$("$EMBER_ROOT/scripts/setup-llamacpp-bench-venv.sh" | tail -n 1)"
ember_build
"$EMBER_ROOT/scripts/fetch-models.sh"
# llama.cpp's OpenMP threads spin at barriers by default; on a machine shared with other work
# that starves them (pp512 7 vs 15 tokens/s passive, measured on the shared 2-core box), so the
# peer gets the passive policy unless the caller sets one.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
exec "$venv/bin/python" "$EMBER_ROOT/scripts/bench_table.py" \
  --ember-bench "$EMBER_BUILD_DIR/bin/ember-bench" --models-dir "$EMBER_MODELS_DIR" "$@"

#pragma once
// The tokenizer of a reference model (EMBER_MODELS_DIR, default ~/.cache/ember/models, filled by
// scripts/fetch-models.sh), loaded once per fuzzing process.
#include "tokenizer/tokenizer.h"

const ember::Tokenizer& fuzzModelTokenizer();

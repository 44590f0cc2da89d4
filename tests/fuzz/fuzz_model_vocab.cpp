#include "fuzz_model_vocab.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "ember/error.h"
#include "gguf/gguf_file.h"

const ember::Tokenizer& fuzzModelTokenizer() {
  static const std::unique_ptr<ember::Tokenizer> tokenizer = [] {
    const char* dir = std::getenv("EMBER_MODELS_DIR");
    const std::filesystem::path path =
        std::filesystem::path(dir && *dir ? dir : EMBER_DEFAULT_MODELS_DIR) / EMBER_FUZZ_MODEL;
    try {
      return ember::Tokenizer::fromGguf(*ember::gguf::GgufFile::open(path));
    } catch (const ember::Error& e) {
      std::fprintf(stderr, "cannot load the tokenizer of %s: %s (run scripts/fetch-models.sh)\n",
                   path.c_str(), e.what());
      std::exit(2);
    }
  }();
  return *tokenizer;
}

// libFuzzer harness for a real model's tokenizer (byte-level BPE: SmolLM2; SentencePiece:
// Gemma 3, chosen at build time). The first byte picks what the rest of the input is:
//   0: text, encoded as user text (no control tokens); then decoded whole and piece by piece
//   1: text, encoded as template output (control tokens parsed), with the second half plain
//      (ill-formed UTF-8 must be refused with ember::Error)
//   2: little-endian 32-bit token ids, decoded whole and piece by piece (ids outside the
//      vocabulary must be refused with ember::Error, never read)
// Checked on every input: no crash or sanitizer report; user text never yields a control
// token; every incremental piece is valid UTF-8 and the pieces together equal the whole
// decode (what the app shows while streaming equals what it stores).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ember/error.h"
#include "fuzz_model_vocab.h"
#include "tokenizer/utf8.h"

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_tokenizer: %s\n", what);
    std::abort();
  }
}

void checkDecodes(const ember::Tokenizer& tok, const std::vector<ember::TokenId>& ids) {
  const std::string whole = tok.decode(ids);
  check(ember::utf8::toValid(whole) == whole, "decode produced invalid UTF-8");
  ember::IncrementalDetokenizer detok(tok);
  std::string streamed;
  for (ember::TokenId id : ids) {
    const std::string piece = detok.push(id);
    check(ember::utf8::toValid(piece) == piece, "an incremental piece is invalid UTF-8");
    streamed += piece;
  }
  streamed += detok.flush();
  check(streamed == whole, "incremental decode differs from the whole decode");
}

}  // namespace

// The model's vocabulary loads before fuzzing starts: under ASan on a loaded machine the load
// (Gemma 3: 262k tokens) took longer than the per-input timeout when it ran inside the first input.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)fuzzModelTokenizer();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const ember::Tokenizer& tok = fuzzModelTokenizer();
  const int mode = data[0] % 3;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (mode == 0) {
    const std::vector<ember::TokenId> ids = tok.encode(text, false);
    for (ember::TokenId id : ids) {
      check(id >= 0 && static_cast<size_t>(id) < tok.vocabSize(), "id outside the vocabulary");
      check(tok.tokenType(id) != ember::TokenType::Control, "user text became a control token");
    }
    checkDecodes(tok, ids);
  } else if (mode == 1) {
    const ember::Tokenizer::TextRange plain{text.size() / 2, text.size()};
    // Rendered text is valid UTF-8 by contract (the prompt builder repairs messages first);
    // anything else must be refused with ember::Error, never crash.
    std::vector<ember::TokenId> ids;
    try {
      ids = tok.encodeRendered(text, {&plain, 1});
    } catch (const ember::Error&) {
      check(ember::utf8::toValid(text) != text, "valid rendered text was refused");
      return 0;
    }
    for (ember::TokenId id : ids)
      check(id >= 0 && static_cast<size_t>(id) < tok.vocabSize(), "id outside the vocabulary");
    checkDecodes(tok, ids);
  } else {
    std::vector<ember::TokenId> ids(text.size() / 4);
    if (!ids.empty()) std::memcpy(ids.data(), text.data(), ids.size() * 4);
    bool inVocabulary = true;
    for (ember::TokenId id : ids)
      inVocabulary = inVocabulary && id >= 0 && static_cast<size_t>(id) < tok.vocabSize();
    if (inVocabulary) {
      checkDecodes(tok, ids);
    } else {
      ember::IncrementalDetokenizer detok(tok);
      try {
        for (ember::TokenId id : ids) (void)detok.push(id);
        check(false, "an id outside the vocabulary was accepted");
      } catch (const ember::Error&) {
      }
    }
  }
  return 0;
}

// ember-cli tokenize / detokenize: the tokenizers seen from outside, for checking them against
// other implementations. Output is exactly the ids (one line) or exactly the text.
#include <algorithm>
#include <chrono>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli_args.h"
#include "ember/error.h"
#include "gguf/gguf_file.h"
#include "tokenizer/gguf_vocabulary.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace ember::cli {
namespace {

// A GGUF's tokenizer, or a SentencePiece tokenizer.model given directly.
std::unique_ptr<Tokenizer> loadTokenizer(const std::string& path) {
  if (std::filesystem::path(path).extension() == ".model") {
    return Tokenizer::fromSentencePieceModel(path);
  }
  const auto file = gguf::GgufFile::open(path);
  return Tokenizer::fromGguf(*file);
}

void rejectPositional(const ParsedArgs& parsed) {
  if (!parsed.positional().empty()) {
    throw Error("unexpected argument '" + parsed.positional().front() + "'");
  }
}

std::vector<TokenId> parseIds(const std::string& text, size_t vocabSize) {
  std::vector<TokenId> ids;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = text.find_first_not_of(" \t\r\n,", pos);
    if (start == std::string::npos) break;
    size_t end = text.find_first_of(" \t\r\n,", start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    long long value = 0;
    const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
    if (ec != std::errc() || ptr != word.data() + word.size()) {
      throw Error("'" + word + "' is not a token id (expected a non-negative integer)");
    }
    if (value < 0 || static_cast<unsigned long long>(value) >= vocabSize) {
      throw Error("token id " + word + " is outside the vocabulary of " +
                  std::to_string(vocabSize) + " tokens");
    }
    ids.push_back(static_cast<TokenId>(value));
    pos = end;
  }
  return ids;
}

}  // namespace

int runTokenize(const Args& args) {
  const ParsedArgs parsed(args, {"--vocab", "--text", "--text-file"}, {"--special", "--add-bos"});
  rejectPositional(parsed);
  const auto textArg = parsed.value("--text");
  const auto textFile = parsed.value("--text-file");
  if (textArg.has_value() == textFile.has_value()) {
    throw Error("give exactly one of --text S and --text-file F");
  }
  const std::string text = textArg ? *textArg : readFile(*textFile);
  const auto tokenizer = loadTokenizer(parsed.required("--vocab"));
  const std::vector<TokenId> ids =
      tokenizer->encode(text, parsed.flag("--special"), parsed.flag("--add-bos"));
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) line += ' ';
    line += std::to_string(ids[i]);
  }
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stdout);
  return 0;
}

// Encode time of one text with Ember's own SentencePiece encoder and with libsentencepiece, in one
// process, repetitions interleaved, and the ratio; fails when the ids differ.
int runTokenizeBench(const Args& args) {
  const ParsedArgs parsed(args, {"--vocab", "--text-file", "--repetitions"}, {"--special"});
  rejectPositional(parsed);
  const std::string text = readFile(parsed.required("--text-file"));
  const int repetitions = std::stoi(parsed.value("--repetitions").value_or("5"));
  if (repetitions < 1) throw Error("--repetitions must be at least 1");
  const auto file = gguf::GgufFile::open(parsed.required("--vocab"));
  const GgufVocabulary vocab = readGgufVocabulary(*file);
  if (vocab.model != "llama") throw Error("tokenize-bench needs a SentencePiece (llama) vocabulary");
  const auto own = makeSentencePieceTokenizer(vocab, SpmEncoderChoice::Own);
  const auto library = makeSentencePieceTokenizer(vocab, SpmEncoderChoice::Library);
  const bool special = parsed.flag("--special");
  std::vector<double> ownMs, libraryMs;
  size_t tokens = 0;
  for (int r = 0; r < repetitions; ++r) {
    std::vector<TokenId> ids[2];
    const Tokenizer* both[2] = {own.get(), library.get()};
    for (int which = 0; which < 2; ++which) {
      const auto start = std::chrono::steady_clock::now();
      ids[which] = both[which]->encode(text, special);
      const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
      (which == 0 ? ownMs : libraryMs).push_back(took.count());
    }
    if (ids[0] != ids[1]) throw Error("the two encoders gave different ids for this text");
    tokens = ids[0].size();
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double o = median(ownMs), l = median(libraryMs);
  std::printf("%zu bytes, %zu tokens, %d repetitions (median ms): ember %.1f (min %.1f), "
              "libsentencepiece %.1f (min %.1f); libsentencepiece / ember = %.2fx\n",
              text.size(), tokens, repetitions, o, *std::min_element(ownMs.begin(), ownMs.end()),
              l, *std::min_element(libraryMs.begin(), libraryMs.end()), l / o);
  return 0;
}

int runDetokenize(const Args& args) {
  const ParsedArgs parsed(args, {"--vocab", "--ids"}, {"--special"});
  rejectPositional(parsed);
  const std::string idsText = parsed.required("--ids");
  const auto tokenizer = loadTokenizer(parsed.required("--vocab"));
  const std::vector<TokenId> ids = parseIds(idsText, tokenizer->vocabSize());
  const std::string text = tokenizer->decode(ids, parsed.flag("--special"));
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace ember::cli

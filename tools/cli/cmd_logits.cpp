// ember-cli logits: the top-K logits at every position of a token sequence (for checking the
// engine's numbers from outside; the output format is kept stable).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "commands.h"
#include "ember/error.h"
#include "engine_options.h"

namespace ember::cli {
namespace {

std::vector<int32_t> parseIds(const std::string& text) {
  std::vector<int32_t> ids;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    int32_t id = 0;
    const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), id);
    if (ec != std::errc() || ptr != word.data() + word.size())
      throw Error("'" + word + "' is not a token id");
    ids.push_back(id);
  }
  if (ids.empty()) throw Error("--tokens holds no token ids");
  return ids;
}

}  // namespace

int runLogits(const Args& raw) {
  auto valueOptions = modelValueOptions();
  valueOptions.insert({"--tokens", "--top"});
  const ParsedArgs args(raw, valueOptions, {"--json"});
  const std::vector<int32_t> ids = parseIds(args.required("--tokens"));
  int top = 10;
  if (auto t = args.value("--top")) {
    const auto [ptr, ec] = std::from_chars(t->data(), t->data() + t->size(), top);
    if (ec != std::errc() || ptr != t->data() + t->size() || top < 1)
      throw Error("--top must be a positive integer");
  }
  EngineOptions options = engineOptionsFrom(args);
  if (options.contextLength == 0) options.contextLength = static_cast<int32_t>(std::max<size_t>(ids.size(), 16));
  const auto engine = Engine::load(options);
  const std::vector<float> logits = engine->scoreTokens(ids);
  const size_t vocab = engine->vocabSize();
  const auto k = static_cast<size_t>(std::min<size_t>(static_cast<size_t>(top), vocab));

  nlohmann::ordered_json positions = nlohmann::ordered_json::array();
  std::vector<int32_t> order(vocab);
  for (size_t p = 0; p < ids.size(); ++p) {
    const float* row = logits.data() + p * vocab;
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + static_cast<ptrdiff_t>(k), order.end(),
                      [&](int32_t a, int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
    nlohmann::ordered_json entries = nlohmann::ordered_json::array();
    for (size_t i = 0; i < k; ++i) entries.push_back({order[i], row[order[i]]});
    positions.push_back({{"position", p}, {"token", ids[p]}, {"top", entries}});
    if (!args.flag("--json")) {
      std::printf("%zu %d:", p, ids[p]);
      for (size_t i = 0; i < k; ++i) std::printf(" %d=%.4f", order[i], row[order[i]]);
      std::printf("\n");
    }
  }
  if (args.flag("--json")) {
    nlohmann::ordered_json doc;
    doc["model"] = engine->info().path;
    doc["backend"] = engine->info().backendName;
    doc["vocab_size"] = vocab;
    doc["positions"] = std::move(positions);
    std::printf("%s\n", doc.dump().c_str());
  }
  return 0;
}

}  // namespace ember::cli

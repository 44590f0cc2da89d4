#include "serve/serve_usage.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli/cli_args.h"
#include "ember/error.h"
#include "server/usage_meter.h"

namespace ember::serve {
namespace {

double priceOption(const cli::ParsedArgs& args, const std::string& name) {
  const auto v = args.value(name);
  if (!v) return 0;
  char* end = nullptr;
  const double x = std::strtod(v->c_str(), &end);
  if (end == v->c_str() || *end || !(x >= 0) || x > 1e9)
    throw Error(name + " must be a price per 1000 tokens, got \"" + *v + "\"");
  return x;
}

}  // namespace

int printUsage(const cli::Args& raw, const std::string& dataDir) {
  const cli::ParsedArgs args(raw, {"--usage-db", "--price-prompt", "--price-completion"},
                             {"--json"});
  const std::string path = args.value("--usage-db").value_or(dataDir + "/serve-usage.sqlite");
  if (!std::filesystem::exists(path)) throw Error("no usage database at " + path);
  const openai::UsageMeter meter(path);
  const double pricePrompt = priceOption(args, "--price-prompt");
  const double priceCompletion = priceOption(args, "--price-completion");
  const bool priced = args.value("--price-prompt") || args.value("--price-completion");
  // Cached prompt tokens are billed like the others here; the column shows what they saved.
  auto cost = [&](const openai::UsageRow& r) {
    return (double(r.promptTokens) * pricePrompt + double(r.completionTokens) * priceCompletion) /
           1000.0;
  };
  const auto rows = meter.rows();
  if (args.flag("--json")) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& r : rows) {
      nlohmann::ordered_json j{{"day", r.day},
                               {"key", r.keyId},
                               {"requests", r.requests},
                               {"prompt_tokens", r.promptTokens},
                               {"cached_tokens", r.cachedTokens},
                               {"completion_tokens", r.completionTokens}};
      if (priced) j["cost"] = cost(r);
      out.push_back(std::move(j));
    }
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("%-10s  %-8s  %9s  %13s  %13s  %17s%s\n", "day", "key", "requests", "prompt_tokens",
              "cached_tokens", "completion_tokens", priced ? "        cost" : "");
  for (const auto& r : rows) {
    std::printf("%-10s  %-8s  %9lld  %13lld  %13lld  %17lld", r.day.c_str(), r.keyId.c_str(),
                (long long)r.requests, (long long)r.promptTokens, (long long)r.cachedTokens,
                (long long)r.completionTokens);
    if (priced) std::printf("  %10.4f", cost(r));
    std::printf("\n");
  }
  return 0;
}

}  // namespace ember::serve

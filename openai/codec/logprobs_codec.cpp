#include "codec/logprobs_codec.h"

#include <algorithm>
#include <cmath>

namespace ember::openai {
namespace {

using ojson = nlohmann::ordered_json;

constexpr float kVeryUnlikely = -9999.0f;

double wireLogprob(float logprob) {
  return std::isfinite(logprob) ? std::max(logprob, kVeryUnlikely) : kVeryUnlikely;
}

ojson bytesJson(const std::string& text) {
  ojson bytes = ojson::array();
  for (unsigned char c : text) bytes.push_back(int(c));
  return bytes;
}

}  // namespace

int64_t characterCount(std::string_view bytes) {
  int64_t count = 0;
  for (unsigned char c : bytes) count += (c & 0xC0) != 0x80;
  return count;
}

ojson chatLogprobsJson(const std::vector<TokenLogprob>& tokens) {
  ojson content = ojson::array();
  for (const TokenLogprob& t : tokens) {
    ojson top = ojson::array();
    for (const TokenAlternative& a : t.top)
      top.push_back({{"token", a.text}, {"logprob", wireLogprob(a.logprob)}, {"bytes", bytesJson(a.text)}});
    content.push_back({{"token", t.text},
                       {"logprob", wireLogprob(t.logprob)},
                       {"bytes", bytesJson(t.text)},
                       {"top_logprobs", std::move(top)}});
  }
  return {{"content", std::move(content)}, {"refusal", nullptr}};
}

ojson completionLogprobsJson(const std::vector<TokenLogprob>& tokens, int64_t startOffset) {
  ojson texts = ojson::array(), logprobs = ojson::array(), tops = ojson::array(),
        offsets = ojson::array();
  int64_t offset = startOffset;
  for (const TokenLogprob& t : tokens) {
    texts.push_back(t.text);
    logprobs.push_back(wireLogprob(t.logprob));
    ojson top = ojson::object();
    // Two ids with the same text share one key: the more likely (listed first) is kept.
    for (const TokenAlternative& a : t.top)
      if (!top.contains(a.text)) top[a.text] = wireLogprob(a.logprob);
    tops.push_back(std::move(top));
    offsets.push_back(offset);
    offset += characterCount(t.text);
  }
  return {{"tokens", std::move(texts)},
          {"token_logprobs", std::move(logprobs)},
          {"top_logprobs", std::move(tops)},
          {"text_offset", std::move(offsets)}};
}

}  // namespace ember::openai

#include "conversation_affinity.h"

namespace ember::openai {

namespace {
constexpr uint64_t kFnvOffset = 1469598103934665603ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

uint64_t mix(uint64_t h, std::string_view bytes) {
  for (const unsigned char c : bytes) h = (h ^ c) * kFnvPrime;
  return h;
}

uint64_t addMessage(uint64_t h, const nlohmann::ordered_json& message) {
  std::string role, content;
  if (message.is_object()) {
    if (message.contains("role") && message["role"].is_string()) role = message["role"];
    if (message.contains("content")) {
      const auto& c = message["content"];
      content = c.is_string() ? c.get<std::string>() : c.dump();
    }
  } else {
    content = message.dump();
  }
  h = mix(h, role);
  h = mix(h, std::string_view("\0", 1));
  h = mix(h, content);
  return mix(h, "\x1e");  // record separator: ["ab"] and ["a", "b"] differ
}

bool isAssistant(const nlohmann::ordered_json& message) {
  return message.is_object() && message.contains("role") && message["role"] == "assistant";
}
}  // namespace

std::vector<uint64_t> conversationPrefixKeys(const nlohmann::ordered_json& messages) {
  std::vector<uint64_t> keys;
  if (!messages.is_array()) return keys;
  uint64_t h = kFnvOffset;
  for (const auto& m : messages) keys.push_back(h = addMessage(h, m));
  return keys;
}

std::optional<size_t> ConversationAffinity::lookup(const nlohmann::ordered_json& messages) {
  if (!messages.is_array() || messages.empty()) return std::nullopt;
  const auto keys = conversationPrefixKeys(messages);
  auto find = [&](uint64_t key) -> std::optional<size_t> {
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    touch(it->second);
    return it->second.upstream;
  };
  // Longest first: the whole request (the same turn asked again), then before each assistant
  // message the answered prefix and the question it answered.
  if (auto hit = find(keys.back())) return hit;
  for (size_t i = keys.size(); i-- > 1;) {
    if (!isAssistant(messages[i])) continue;
    if (auto hit = find(keys[i])) return hit;
    if (auto hit = find(keys[i - 1])) return hit;
  }
  return std::nullopt;
}

void ConversationAffinity::record(const nlohmann::ordered_json& messages,
                                  const std::string& answer, size_t upstream) {
  if (!messages.is_array() || messages.empty() || capacity_ == 0) return;
  const auto keys = conversationPrefixKeys(messages);
  insert(keys.back(), upstream);
  insert(addMessage(keys.back(), {{"role", "assistant"}, {"content", answer}}), upstream);
}

void ConversationAffinity::insert(uint64_t key, size_t upstream) {
  if (auto it = entries_.find(key); it != entries_.end()) {
    it->second.upstream = upstream;
    touch(it->second);
    return;
  }
  byAge_.push_front(key);
  entries_.emplace(key, Entry{upstream, byAge_.begin()});
  while (entries_.size() > capacity_) {
    entries_.erase(byAge_.back());
    byAge_.pop_back();
  }
}

void ConversationAffinity::touch(Entry& entry) {
  byAge_.splice(byAge_.begin(), byAge_, entry.age);
}

}  // namespace ember::openai

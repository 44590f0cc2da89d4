#pragma once
// Which upstream served a conversation so far. A conversation is known by the prefix of its
// messages: after a turn [m1 .. mk] is answered with `a`, the keys of [m1 .. mk] and of
// [m1 .. mk, a] map to the upstream that answered, so the next turn [m1 .. mk, a, m(k+2)] finds
// it by its longest known prefix, and so does a next turn whose client sent the answer back
// edited, shortened or without its reasoning ([m1 .. mk, a', ...]: the upstream still caches
// [m1 .. mk]). Only whole requests and their answers are recorded, never a prefix alone, so that
// a system prompt shared by every chat does not pull them all to one upstream. The messages stand
// for the rendered prompt: the same messages render to the same prefix on every upstream of one
// model, which is what the upstream's prefix cache keys on. Bounded (least recently used out).
#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace ember::openai {

class ConversationAffinity {
 public:
  explicit ConversationAffinity(size_t capacity = 4096) : capacity_(capacity) {}

  // The upstream that served the longest answered prefix of these messages, if any.
  std::optional<size_t> lookup(const nlohmann::ordered_json& messages);
  // Records that `upstream` answered `messages` with `answer`.
  void record(const nlohmann::ordered_json& messages, const std::string& answer, size_t upstream);
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    size_t upstream;
    std::list<uint64_t>::iterator age;
  };
  void touch(Entry& entry);
  void insert(uint64_t key, size_t upstream);

  size_t capacity_;
  std::unordered_map<uint64_t, Entry> entries_;
  std::list<uint64_t> byAge_;  // front: most recently used
};

// FNV-1a 64 over each message's role and content, cumulative: keys[i] covers messages[0..i].
std::vector<uint64_t> conversationPrefixKeys(const nlohmann::ordered_json& messages);

}  // namespace ember::openai

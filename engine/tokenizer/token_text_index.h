#pragma once
// An index from a token's text to its id that holds no text of its own: an open-addressing table
// of ids whose texts are compared in the vocabulary itself. For Gemma 3's 262144 pieces it takes
// 2 MiB, where a hash map from std::string keys held a second copy of every text (about 20 MB).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace ember {

class TokenTextIndex {
 public:
  // Indexes `texts` (the vocabulary, by id). Where several ids have the same text, the first id
  // wins. find() must be given the same texts.
  void build(const std::vector<std::string>& texts);
  std::optional<TokenId> find(std::string_view text, const std::vector<std::string>& texts) const;
  size_t heapBytes() const { return slots_.capacity() * sizeof(int32_t); }

 private:
  std::vector<int32_t> slots_;  // (capacity, a power of two) token id, or -1 for an empty slot
  size_t mask_ = 0;
};

}  // namespace ember

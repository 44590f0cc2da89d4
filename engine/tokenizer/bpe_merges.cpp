#include "tokenizer/bpe_merges.h"

#include <algorithm>
#include <queue>

#include "ember/error.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/utf8.h"

namespace ember {

BpeMerges::BpeMerges(const std::vector<std::string>& merges,
                     const std::function<std::optional<TokenId>(std::string_view)>& findToken,
                     bool byteLevel)
    : byteLevel_(byteLevel) {
  byteTokens_.assign(256, -1);
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    const std::string text = byteLevel ? byte_unicode::encodeByte(static_cast<uint8_t>(b))
                                       : std::string{'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
    if (auto id = findToken(text)) byteTokens_[b] = *id;
  }
  if (!byteLevel) findToken_ = findToken;
  pairs_.reserve(merges.size());
  std::string joined;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& merge = merges[rank];
    // Byte-level texts never contain a raw space (it is stored as U+0120), so the first space
    // is the separator; raw texts may start with one (llama.cpp looks from the second byte).
    const size_t space = merge.find(' ', 1);
    if (space == std::string::npos || space + 1 >= merge.size()) {
      throw Error("tokenizer.ggml.merges[" + std::to_string(rank) + "] '" + merge +
                  "' is not two tokens separated by a space");
    }
    const std::string_view left(merge.data(), space);
    const std::string_view right(merge.data() + space + 1, merge.size() - space - 1);
    joined.assign(left);
    joined.append(right);
    const auto leftId = findToken(left), rightId = findToken(right), result = findToken(joined);
    if (!leftId || !rightId || !result) continue;
    pairs_.try_emplace(key(*leftId, *rightId), Merge{static_cast<int32_t>(rank), *result});
  }
}

const BpeMerges::Merge* BpeMerges::find(TokenId left, TokenId right) const {
  if (left < 0 || right < 0) return nullptr;
  const auto it = pairs_.find(key(left, right));
  return it == pairs_.end() ? nullptr : &it->second;
}

void BpeMerges::encodeWord(std::string_view bytes, std::vector<TokenId>& out) const {
  // Symbols form a doubly linked list over the word's bytes; a merge folds the right symbol
  // into the left one. Candidate pairs wait in a min-heap ordered by (rank, left position);
  // entries made stale by an earlier merge are recognised and dropped when popped.
  struct Symbol {
    TokenId id;
    int prev, next;
    uint32_t begin, length;  // the bytes of the word it started as (raw mode's fallback)
  };
  std::vector<Symbol> symbols;
  symbols.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    size_t length = 1;
    TokenId id = byteTokens_[static_cast<uint8_t>(bytes[i])];
    if (!byteLevel_) {
      length = std::clamp<size_t>(utf8::sequenceLength(static_cast<uint8_t>(bytes[i])), 1,
                                  bytes.size() - i);
      id = findToken_(bytes.substr(i, length)).value_or(-1);
    }
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({id, index - 1, -1, static_cast<uint32_t>(i), static_cast<uint32_t>(length)});
    if (index > 0) symbols[index - 1].next = index;
    i += length;
  }
  struct Candidate {
    int32_t rank;
    int left, right;
    TokenId leftId, rightId;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : left > o.left;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  const auto consider = [&](int left) {
    if (left < 0) return;
    const int right = symbols[left].next;
    if (right < 0) return;
    if (const Merge* m = find(symbols[left].id, symbols[right].id)) {
      queue.push({m->rank, left, right, symbols[left].id, symbols[right].id});
    }
  };
  for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) consider(i);

  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& left = symbols[c.left];
    if (left.id != c.leftId || left.next != c.right || symbols[c.right].id != c.rightId) continue;
    Symbol& right = symbols[c.right];
    left.id = find(c.leftId, c.rightId)->result;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = c.left;
    right.id = -2;  // removed; never matches a live candidate again
    consider(left.prev);
    consider(c.left);
  }

  for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
    if (symbols[i].id >= 0) {
      out.push_back(symbols[i].id);
    } else if (!byteLevel_ && symbols[i].id == -1) {
      for (uint32_t b = 0; b < symbols[i].length; ++b) {
        const TokenId byte = byteTokens_[static_cast<uint8_t>(bytes[symbols[i].begin + b])];
        if (byte >= 0) out.push_back(byte);
      }
    }
  }
}

}  // namespace ember

#include "tokenizer/spm_encoder.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <queue>
#include <unordered_map>

#include "ember/error.h"

namespace ember {
namespace {

constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";  // U+2581, SentencePiece's space
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

TokenType typeAt(const std::vector<TokenType>& types, size_t id) {
  return id < types.size() ? types[id] : TokenType::Normal;
}

std::string withSpacesRespelled(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == ' ') out.append(kSpaceSymbol);
    else out.push_back(c);
  }
  return out;
}

bool isTrail(uint8_t byte) { return (byte & 0xC0) == 0x80; }

// Length of the well-formed UTF-8 sequence at text[pos] (no overlongs, surrogates or values past
// U+10FFFF), or 0 when the byte there starts none: libsentencepiece's DecodeUTF8 rules.
size_t wellFormedLength(std::string_view text, size_t pos) {
  const auto at = [&](size_t i) { return static_cast<uint8_t>(text[pos + i]); };
  const size_t left = text.size() - pos;
  const uint8_t b0 = at(0);
  if (b0 < 0x80) return 1;
  if ((b0 & 0xE0) == 0xC0 && left >= 2 && isTrail(at(1))) {
    const uint32_t cp = (uint32_t(b0 & 0x1F) << 6) | (at(1) & 0x3F);
    return cp >= 0x80 ? 2 : 0;
  }
  if ((b0 & 0xF0) == 0xE0 && left >= 3 && isTrail(at(1)) && isTrail(at(2))) {
    const uint32_t cp = (uint32_t(b0 & 0x0F) << 12) | (uint32_t(at(1) & 0x3F) << 6) | (at(2) & 0x3F);
    return cp >= 0x800 && (cp < 0xD800 || cp >= 0xE000) ? 3 : 0;
  }
  if ((b0 & 0xF8) == 0xF0 && left >= 4 && isTrail(at(1)) && isTrail(at(2)) && isTrail(at(3))) {
    const uint32_t cp = (uint32_t(b0 & 0x07) << 18) | (uint32_t(at(1) & 0x3F) << 12) |
                        (uint32_t(at(2) & 0x3F) << 6) | (at(3) & 0x3F);
    return cp >= 0x10000 && cp <= 0x10FFFF ? 4 : 0;
  }
  return 0;
}

// Bytes of the character a lead byte announces, as libsentencepiece's OneCharLen reads it.
size_t oneCharLength(uint8_t lead) {
  static constexpr uint8_t kLengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLengths[lead >> 4];
}

}  // namespace

SpmPieceRules spmPieceRulesOf(const std::vector<std::string>& texts,
                              const std::vector<TokenType>& types,
                              std::optional<TokenId> unknownTokenId) {
  SpmPieceRules rules;
  std::optional<size_t> firstUnknown;
  for (size_t i = 0; i < texts.size(); ++i) {
    const TokenType type = typeAt(types, i);
    if (type == TokenType::Unknown && !firstUnknown) firstUnknown = i;
    rules.byteFallback |= type == TokenType::Byte;
  }
  // libsentencepiece needs exactly one UNKNOWN piece, while GGUF files carry zero or many (Phi-3
  // types <unk> as a control token and its 53 padding pieces as unknown). The unknown piece is
  // tokenizer.ggml.unknown_token_id when that names an unknown or control piece, else the first
  // piece typed unknown; any other unknown-typed piece counts as unused, which is never produced
  // from text, as llama.cpp never produces them either.
  std::optional<size_t> unk;
  if (unknownTokenId && static_cast<size_t>(*unknownTokenId) < texts.size()) {
    const TokenType type = typeAt(types, static_cast<size_t>(*unknownTokenId));
    if (type == TokenType::Unknown || type == TokenType::Control || !firstUnknown)
      unk = static_cast<size_t>(*unknownTokenId);
  }
  if (!unk) unk = firstUnknown;
  if (!unk) {
    throw Error("the SentencePiece vocabulary has no unknown token (no token of type UNKNOWN "
                "and no tokenizer.ggml.unknown_token_id)");
  }
  rules.unknown = static_cast<TokenId>(*unk);

  // llama.cpp stores user-defined pieces with real spaces (it matches them in the raw text), while
  // libsentencepiece matches them after the normalizer turned spaces into U+2581: they are
  // spelled the library's way unless that spelling is already another piece.
  std::unordered_map<std::string, TokenId> respelled;  // only the few pieces with spaces
  for (size_t i = 0; i < texts.size(); ++i) {
    if (typeAt(types, i) == TokenType::UserDefined && texts[i].find(' ') != std::string::npos)
      respelled.emplace(withSpacesRespelled(texts[i]), static_cast<TokenId>(i));
  }
  if (!respelled.empty()) {
    for (const std::string& text : texts) respelled.erase(text);
  }
  for (auto& [text, id] : respelled) rules.respelled.emplace_back(id, text);
  std::sort(rules.respelled.begin(), rules.respelled.end());
  return rules;
}

SpmEncoder::SpmEncoder(const Tokenizer& vocab, const std::vector<std::string>& texts,
                       const std::vector<TokenType>& types, std::vector<float> scores,
                       SpmPieceRules rules, bool addDummyPrefix)
    : vocab_(vocab),
      texts_(texts),
      types_(types),
      scores_(std::move(scores)),
      unknown_(rules.unknown),
      byteFallback_(rules.byteFallback),
      addDummyPrefix_(addDummyPrefix) {
  const size_t n = texts_.size();
  if (scores_.size() != n) {
    throw Error("a SentencePiece vocabulary needs tokenizer.ggml.scores for each of its " +
                std::to_string(n) + " tokens (found " + std::to_string(scores_.size()) + ")");
  }
  if (unknown_ < 0 || static_cast<size_t>(unknown_) >= n)
    throw Error("the SentencePiece vocabulary's unknown token is outside the vocabulary");
  for (auto& [id, text] : rules.respelled) respelled_.emplace_back(std::move(text), id);
  std::sort(respelled_.begin(), respelled_.end());
  // libsentencepiece refuses these too ("piece must not be empty", "... is already defined").
  for (size_t id = 0; id < n; ++id) {
    if (texts_[id].empty()) {
      throw Error("SentencePiece piece " + std::to_string(id) + " is empty");
    }
    const std::optional<TokenId> first = vocab_.findToken(texts_[id]);
    if (first && *first != static_cast<TokenId>(id)) {
      throw Error("SentencePiece piece '" + texts_[id] + "' (id " + std::to_string(id) +
                  ") is already defined (id " + std::to_string(*first) + ")");
    }
    if (typeAt(types_, id) == TokenType::UserDefined && static_cast<TokenId>(id) != unknown_)
      userDefinedByText_.emplace_back(texts_[id], static_cast<TokenId>(id));
  }
  for (auto& [text, id] : userDefinedByText_) {  // the library's spelling where it differs
    for (const auto& [respelledText, respelledId] : respelled_)
      if (respelledId == id) text = respelledText;
    userDefinedFirstByte_[static_cast<uint8_t>(text[0])] = true;
  }
  std::sort(userDefinedByText_.begin(), userDefinedByText_.end());
  for (int byte = 0; byte < 256; ++byte) {
    char piece[8];
    std::snprintf(piece, sizeof piece, "<0x%02X>", byte);  // libsentencepiece's ByteToPiece
    const TokenId id = find(piece);
    byteIds_[static_cast<size_t>(byte)] = id >= 0 ? id : unknown_;
  }
}

SpmEncoder::Role SpmEncoder::roleOf(TokenId id) const {
  if (id == unknown_) return Role::Reserved;
  switch (typeAt(types_, static_cast<size_t>(id))) {
    case TokenType::Control:
    case TokenType::Byte: return Role::Reserved;
    case TokenType::Unknown:  // not the unknown piece: unused (see spmPieceRulesOf)
    case TokenType::Unused: return Role::Unused;
    default: return Role::Piece;
  }
}

TokenId SpmEncoder::find(std::string_view text) const {
  if (const std::optional<TokenId> id = vocab_.findToken(text)) return *id;
  if (!respelled_.empty()) {
    const auto it = std::lower_bound(respelled_.begin(), respelled_.end(), text,
                                     [](const auto& entry, std::string_view t) {
                                       return std::string_view(entry.first) < t;
                                     });
    if (it != respelled_.end() && it->first == text) return it->second;
  }
  return -1;
}

size_t SpmEncoder::userDefinedPrefix(std::string_view text) const {
  // The ids sorted by text: narrow the range that shares text[0, depth] one byte at a time; the
  // first entry of a range is the shortest, so it is a whole match when its length is depth + 1.
  auto lo = userDefinedByText_.begin();
  auto hi = userDefinedByText_.end();
  size_t longest = 0;
  for (size_t depth = 0; depth < text.size() && lo != hi; ++depth) {
    const auto byte = static_cast<uint8_t>(text[depth]);
    const auto byteAt = [&](const auto& entry) -> int {
      const std::string_view t = entry.first;
      return depth < t.size() ? static_cast<uint8_t>(t[depth]) : -1;
    };
    lo = std::partition_point(lo, hi, [&](const auto& e) { return byteAt(e) < byte; });
    hi = std::partition_point(lo, hi, [&](const auto& e) { return byteAt(e) == byte; });
    if (lo != hi && lo->first.size() == depth + 1) longest = depth + 1;
  }
  return longest;
}

std::string SpmEncoder::normalize(std::string_view fragment) const {
  std::string out;
  out.reserve(fragment.size() + fragment.size() / 4 + kSpaceSymbol.size());
  if (addDummyPrefix_) out.append(kSpaceSymbol);
  for (size_t pos = 0; pos < fragment.size();) {
    const size_t length = wellFormedLength(fragment, pos);
    if (length == 0) {  // one ill-formed byte
      out.append(kReplacement);
      ++pos;
    } else if (fragment[pos] == ' ') {
      out.append(kSpaceSymbol);
      ++pos;
    } else {
      out.append(fragment.substr(pos, length));
      pos += length;
    }
  }
  return out;
}

void SpmEncoder::encode(std::string_view fragment, std::vector<TokenId>& out) const {
  if (fragment.empty()) return;  // libsentencepiece adds no dummy prefix to empty text either
  const std::string text = normalize(fragment);

  // The text split into characters, user-defined pieces whole ("frozen": never merged).
  struct Symbol {
    uint32_t begin, length;
    int32_t prev, next;
    bool frozen;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const std::string_view rest = std::string_view(text).substr(pos);
    size_t length = userDefinedFirstByte_[static_cast<uint8_t>(rest[0])] ? userDefinedPrefix(rest) : 0;
    const bool frozen = length > 0;
    if (!frozen) length = std::min(rest.size(), oneCharLength(static_cast<uint8_t>(rest[0])));
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({static_cast<uint32_t>(pos), static_cast<uint32_t>(length), index - 1,
                       pos + length < text.size() ? index + 1 : -1, frozen});
    pos += length;
  }
  const auto viewOf = [&](const Symbol& s) {
    return std::string_view(text).substr(s.begin, s.length);
  };

  // Candidate merges, best first: highest score, then leftmost (libsentencepiece's order).
  struct Pair {
    float score;
    int32_t left, right;
    uint32_t length;
  };
  const auto worse = [](const Pair& a, const Pair& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Pair, std::vector<Pair>, decltype(worse)> agenda(worse);
  // Merges into UNUSED pieces, to split them back at the end: joined -> (left, right).
  std::unordered_map<std::string_view, std::pair<std::string_view, std::string_view>> unmerge;
  const auto consider = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0 || symbols[left].frozen || symbols[right].frozen) return;
    const Symbol& l = symbols[left];
    const Symbol& r = symbols[right];
    const std::string_view joined = std::string_view(text).substr(l.begin, l.length + r.length);
    const TokenId id = find(joined);
    if (id < 0) return;
    const Role role = roleOf(id);
    if (role == Role::Reserved) return;  // only NORMAL, USER_DEFINED and UNUSED pieces merge
    agenda.push({scores_[static_cast<size_t>(id)], left, right, l.length + r.length});
    if (role == Role::Unused) unmerge[joined] = {viewOf(l), viewOf(r)};
  };
  for (size_t i = 1; i < symbols.size(); ++i)
    consider(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));

  while (!agenda.empty()) {
    const Pair top = agenda.top();
    agenda.pop();
    Symbol& left = symbols[top.left];
    Symbol& right = symbols[top.right];
    // Stale: one side merged elsewhere since this pair was queued.
    if (left.length == 0 || right.length == 0 || left.length + right.length != top.length)
      continue;
    left.length += right.length;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.left;
    right.length = 0;
    consider(left.prev, top.left);
    consider(top.left, left.next);
  }

  // Unknown pieces become their bytes' pieces with byte fallback; without it, a run of them is
  // one unknown token (libsentencepiece joins them so that a decoder sees one unknown span).
  bool previousUnknown = false;
  const auto emit = [&](std::string_view piece, TokenId id) {
    const bool unknown = id == unknown_;
    if (unknown && byteFallback_) {
      for (char c : piece) out.push_back(byteIds_[static_cast<uint8_t>(c)]);
    } else if (!(unknown && previousUnknown)) {
      out.push_back(id);
    }
    previousUnknown = unknown;
  };
  std::function<void(std::string_view)> resegment = [&](std::string_view piece) {
    TokenId id = find(piece);
    if (id < 0) id = unknown_;
    if (roleOf(id) == Role::Unused) {
      if (const auto it = unmerge.find(piece); it != unmerge.end()) {
        resegment(it->second.first);
        resegment(it->second.second);
        return;
      }
    }
    emit(piece, id);
  };
  for (int32_t i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next)
    resegment(viewOf(symbols[i]));
}

}  // namespace ember

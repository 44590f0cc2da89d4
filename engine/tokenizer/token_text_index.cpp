#include "tokenizer/token_text_index.h"

#include <algorithm>
#include <bit>
#include <functional>

namespace ember {
namespace {

size_t hashOf(std::string_view text) { return std::hash<std::string_view>{}(text); }

}  // namespace

void TokenTextIndex::build(const std::vector<std::string>& texts) {
  // At most half full, so a probe for a missing text ends within a few slots.
  const size_t capacity = std::bit_ceil(std::max<size_t>(2 * texts.size(), 16));
  slots_.assign(capacity, -1);
  mask_ = capacity - 1;
  for (size_t id = 0; id < texts.size(); ++id) {
    const std::string_view text = texts[id];
    for (size_t slot = hashOf(text) & mask_;; slot = (slot + 1) & mask_) {
      const int32_t held = slots_[slot];
      if (held < 0) {
        slots_[slot] = static_cast<int32_t>(id);
        break;
      }
      if (texts[static_cast<size_t>(held)] == text) break;  // the first id keeps the text
    }
  }
}

std::optional<TokenId> TokenTextIndex::find(std::string_view text,
                                            const std::vector<std::string>& texts) const {
  if (slots_.empty()) return std::nullopt;
  for (size_t slot = hashOf(text) & mask_;; slot = (slot + 1) & mask_) {
    const int32_t held = slots_[slot];
    if (held < 0) return std::nullopt;
    if (texts[static_cast<size_t>(held)] == text) return held;
  }
}

}  // namespace ember

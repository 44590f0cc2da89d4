#include "chat/content_spans.h"

#include <algorithm>

namespace ember::chat {

void appendSpans(ContentSpans& into, const ContentSpans& from, size_t offset) {
  for (const ContentSpan& s : from) {
    if (s.begin == s.end) continue;
    ContentSpan shifted{s.begin + offset, s.end + offset, s.source};
    if (!into.empty() && into.back().end == shifted.begin && into.back().source == shifted.source)
      into.back().end = shifted.end;
    else
      into.push_back(shifted);
  }
}

ContentSpans sliceSpans(const ContentSpans& from, size_t begin, size_t end) {
  ContentSpans out;
  for (const ContentSpan& s : from) {
    const size_t b = std::max(s.begin, begin);
    const size_t e = std::min(s.end, end);
    if (b < e) out.push_back({b - begin, e - begin, s.source});
  }
  return out;
}

}  // namespace ember::chat

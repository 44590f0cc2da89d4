#include "runtime/sampling/stop_matcher.h"

#include <algorithm>
#include <utility>

#include "ember/error.h"

namespace ember {

StopMatcher::StopMatcher(std::vector<std::string> stopStrings) : stops_(std::move(stopStrings)) {
  for (const std::string& stop : stops_) {
    if (stop.empty()) throw Error("a stop string must not be empty");
  }
}

const std::string& StopMatcher::matchedStop() const {
  static const std::string none;
  return stopped_ ? stops_[matchedIndex_] : none;
}

size_t StopMatcher::longestPartialMatch() const {
  size_t longest = 0;
  const std::string_view text = pending_;
  for (const std::string& stop : stops_) {
    // Only lengths beyond the best found so far can improve it; a full match was handled already.
    const size_t upTo = std::min(stop.size() - 1, text.size());
    for (size_t length = upTo; length > longest; --length) {
      if (text.substr(text.size() - length) == std::string_view(stop).substr(0, length)) {
        longest = length;
        break;
      }
    }
  }
  return longest;
}

StopMatcher::Output StopMatcher::push(std::string_view piece) {
  if (stopped_) return {"", true};
  pending_.append(piece);

  // Earliest complete stop string; at the same position, the one listed first. A match can only
  // start inside pending_: text already shown had no tail that was a prefix of a stop string.
  size_t matchAt = std::string::npos;
  for (size_t i = 0; i < stops_.size(); ++i) {
    const size_t at = pending_.find(stops_[i]);
    if (at < matchAt) {
      matchAt = at;
      matchedIndex_ = i;
    }
  }
  if (matchAt != std::string::npos) {
    stopped_ = true;
    Output out{pending_.substr(0, matchAt), true};
    pending_.clear();
    return out;
  }

  const size_t hold = longestPartialMatch();
  Output out{pending_.substr(0, pending_.size() - hold), false};
  pending_.erase(0, pending_.size() - hold);
  return out;
}

std::string StopMatcher::flush() {
  std::string rest = std::move(pending_);
  pending_.clear();
  return rest;
}

}  // namespace ember

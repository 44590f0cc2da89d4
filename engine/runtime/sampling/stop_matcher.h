#pragma once
// Stop strings matched on the generated text as it streams. Pieces of decoded UTF-8 go in; out
// comes the text that is safe to show now. Any tail that could still grow into a stop string is
// held back, so a stop string split across tokens is never shown, not even in part. When one
// completes, the matcher reports it with the text before it; whatever follows is discarded.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ember {

class StopMatcher {
 public:
  struct Output {
    std::string text;      // safe to show now (possibly empty)
    bool stopped = false;  // a stop string completed; `text` ends right before it
  };

  // Throws ember::Error for an empty stop string. No stop strings: every piece passes through.
  explicit StopMatcher(std::vector<std::string> stopStrings);

  // Feeds the next decoded piece. After a stop, further pieces are ignored ({"", true}).
  Output push(std::string_view piece);

  // At the end of generation (EOS, max tokens, cancel): the text held back, which turned out
  // not to be a stop string. Empty after a stop.
  std::string flush();

  bool stopped() const { return stopped_; }
  // The stop string that ended generation; empty if none has.
  const std::string& matchedStop() const;
  // Bytes currently held back (for tests and diagnostics).
  size_t heldBackBytes() const { return pending_.size(); }

 private:
  // Length of the longest tail of pending_ that is a proper prefix of some stop string.
  size_t longestPartialMatch() const;

  std::vector<std::string> stops_;
  std::string pending_;  // text not shown yet: always a proper prefix of some stop string
  bool stopped_ = false;
  size_t matchedIndex_ = 0;
};

}  // namespace ember

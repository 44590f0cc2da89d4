#include "runtime/engine/request_lifecycle.h"

#include <algorithm>
#include <cmath>

namespace ember {

double millisecondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

int32_t maxPromptTokens(const SamplingParams& sampling, int32_t contextLength) {
  const int64_t reserve = sampling.maxTokens > 0
                              ? std::min<int64_t>(sampling.maxTokens, contextLength / 2)
                              : std::min<int64_t>(512, contextLength / 4);
  return static_cast<int32_t>(std::max<int64_t>(1, contextLength - reserve));
}

namespace {
void emitPiece(Sequence& s, const std::string& text, bool reasoning) {
  if (text.empty()) return;
  const auto now = Clock::now();
  if (s.lastPiece) {
    s.stats.interTokenMs.push_back(millisecondsBetween(*s.lastPiece, now));
  } else {
    s.stats.ttftMs = millisecondsBetween(s.submitted, now) + s.stats.tokenizeMs;
  }
  s.lastPiece = now;
  RequestEvent event;
  event.id = s.id;
  event.kind = RequestEvent::Kind::Text;
  event.text = text;
  event.reasoning = reasoning;
  event.logprobs = std::move(s.pendingLogprobs);
  s.pendingLogprobs.clear();
  event.time = now;
  if (s.sink) s.sink(event);
}
}  // namespace

void emitText(Sequence& s, const std::string& text) {
  if (!s.reasoning) return emitPiece(s, text, false);
  if (text.empty()) return;
  for (const auto& piece : s.reasoning->push(text)) emitPiece(s, piece.text, piece.reasoning);
}

void emitProgress(Sequence& s, bool waiting) {
  RequestEvent event;
  event.id = s.id;
  event.kind = RequestEvent::Kind::Progress;
  event.promptTokens = s.promptLength;
  event.promptDone = std::min(s.computed, s.promptLength);
  event.cachedPromptTokens = s.stats.cachedPromptTokens;
  event.waiting = waiting;
  event.time = Clock::now();
  if (s.sink) s.sink(event);
}

void finishRequest(Sequence& s, FinishReason reason, const std::string& error) {
  if (reason != FinishReason::Stop && reason != FinishReason::Error) {
    // What the detokenizer and the stop matcher still hold is real text of the answer.
    std::string tail = s.stopMatcher->push(s.detokenizer->flush()).text;
    tail += s.stopMatcher->flush();
    emitText(s, tail);
  }
  if (s.reasoning && reason != FinishReason::Error) {
    for (const auto& piece : s.reasoning->flush()) emitPiece(s, piece.text, piece.reasoning);
  }
  // Tokens still unreported: after a stop they formed the stop string (not part of the answer);
  // otherwise their bytes made no text of their own, and they are reported without text.
  if (!s.pendingLogprobs.empty() && reason != FinishReason::Stop && reason != FinishReason::Error) {
    RequestEvent event;
    event.id = s.id;
    event.kind = RequestEvent::Kind::Text;
    event.logprobs = std::move(s.pendingLogprobs);
    event.time = Clock::now();
    if (s.sink) s.sink(event);
  }
  s.pendingLogprobs.clear();
  const auto end = Clock::now();
  RequestStats& st = s.stats;
  st.finishReason = reason;
  st.error = error;
  st.generatedTokens = std::max(0, s.generated());
  st.preemptions = s.preemptions;
  if (s.prefillStart && s.prefillEnd) {
    st.prefillMs = millisecondsBetween(*s.prefillStart, *s.prefillEnd);
    // Only the tokens actually computed: a cached prefix costs nothing.
    const int32_t computedTokens = st.promptTokens - st.cachedPromptTokens;
    if (st.prefillMs > 0) st.prefillTokensPerSecond = computedTokens / (st.prefillMs / 1000.0);
  }
  if (s.firstToken && s.lastToken && st.generatedTokens > 1) {
    const double ms = millisecondsBetween(*s.firstToken, *s.lastToken);
    if (ms > 0) st.decodeTokensPerSecond = (st.generatedTokens - 1) / (ms / 1000.0);
  }
  st.totalMs = millisecondsBetween(s.submitted, end) + st.tokenizeMs;
  RequestEvent event;
  event.id = s.id;
  event.kind = RequestEvent::Kind::Finished;
  event.time = end;
  event.stats = &st;
  if (s.sink) s.sink(event);
}

}  // namespace ember

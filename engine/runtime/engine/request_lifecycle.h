#pragma once
// The parts of a request's life that are about the user's view of it: handing out text pieces
// with their timing, and closing it with its statistics.
#include <string>

#include "runtime/engine/sequence.h"

namespace ember {

double millisecondsBetween(Clock::time_point from, Clock::time_point to);

// How many prompt tokens the context leaves room for, keeping space for the answer: maxTokens
// when given (at most half the context), otherwise a quarter of the context (at most 512).
int32_t maxPromptTokens(const SamplingParams& sampling, int32_t contextLength);

// Hands a non-empty piece to the request's sink and records TTFT / inter-token gaps; with a
// reasoning splitter, as reasoning and answer pieces (RequestEvent::reasoning).
void emitText(Sequence& s, const std::string& text);

// Flushes the held-back text, fills in the statistics and emits the Finished event.
void finishRequest(Sequence& s, FinishReason reason, const std::string& error);

}  // namespace ember

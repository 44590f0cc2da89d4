#pragma once
// Bounds and inputs of one render. The renderer has no file, network or environment access;
// these limits bound the work a hostile template can make it do. Exceeding one is a
// TemplateError of kind Limit, never a crash.
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <functional>

namespace ember::chat {

struct RenderLimits {
  size_t maxOutputBytes = 8u << 20;      // the rendered text, and any one string built
  uint64_t maxLoopIterations = 1000000;  // all for-loop iterations of a render together
  int maxCallDepth = 64;                 // nested macro calls
  // Expressions and blocks being evaluated at once, macro calls included: bounds the
  // renderer's recursion, so no template can exhaust the thread's stack.
  int maxEvaluationDepth = 1000;
  uint64_t maxWorkBytes = 256u << 20;    // all strings built during a render together
};

struct RenderOptions {
  RenderLimits limits;
  // What strftime_now() formats; defaults to the local time. Tests inject a fixed time so that
  // templates that print the date render reproducibly.
  std::function<std::tm()> clock;
};

}  // namespace ember::chat
